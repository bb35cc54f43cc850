"""An ``--as-of`` view scores past chunks as the present's FTS5 table scores its own.

``bm25.py`` puts a past chunk among the present's hits with FTS5's formula and the present table's
statistics; a chunk's length and its term counts must be the index's tokenizer's too, or a past
chunk holding what the tokenizers disagree on (an emoji newer than SQLite's Unicode tables, a
final sigma, "İ", "µ", a skin-tone modifier) ranks by another length than it would in the present.
"""

from __future__ import annotations

import time

import pytest
from conftest import write
from index_helpers import open_store

from brain.index.indexer import index_vault
from brain.index.schema import FTS_TOKENIZERS
from brain.recall import bm25
from brain.recall.lexical import fts_query
from brain.recall.past import PAST, PastIndex

WEIGHTS = (4.0, 2.0, 1.0)

# What unicode61 (SQLite's tables) and a regular expression's idea of a word part on.
NOTES = {
    "Launch.md": "# Launch day\n\nThe rocket 🫠 launch 🪩🪩 went fine; rocket fuel 🛼 ran low. 👍🏽 crew\n",
    "Wifi.md": "# Wifi\n\nwpa_supplicant keeps the rocket wifi up; wpa_cli talks to it.\n",
    "Strasse.md": "# Straße\n\nDie Straße, STRASSE, strasse: the rocket street.\n",
    "Yolka.md": "# Ёлка\n\nёлка и елка, ЁЖ, Ёлкин rocket.\n",
    "Greek.md": "# Κάλλος\n\nἈθῆναι, ἀρχή, λόγος rocket Σίσυφος ΣΊΣΥΦΟΣ.\n",
    "Cjk.md": "# 長城\n\n長城是中國的 rocket 長城很長\n",
    "Mixed.md": "# x86_64\n\nh2o x86_64 3dB 10km v2.0 rocket İstanbul µs ſ ＡＢＣ\n",
    "Plain.md": "# Plain\n\nA plain note about a rocket, and nothing else.\n",
}
QUERIES = (
    "rocket",
    "rocket launch crew",
    "λόγος Σίσυφος",
    "straße",
    "wpa_supplicant",
    "長城是中國",
    "елка",
    "x86_64 h2o",
)


@pytest.fixture(params=sorted(FTS_TOKENIZERS))
def tokenizer(request, monkeypatch) -> str:
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", request.param)
    return request.param


def test_bm25_py_scores_each_present_chunk_as_fts5_does(tmp_path, tokenizer, closing):
    """Each chunk the present's FTS5 table scores with bm25(), scored by bm25.py from the text
    FTS5 holds and the same statistics: the same score, for every tokenizer."""
    for name, text in NOTES.items():
        write(tmp_path, name, text)
    index_vault(tmp_path, progress=False)
    store = closing(open_store(tmp_path))
    spec = FTS_TOKENIZERS[tokenizer]
    rows, total = store.fts_totals()
    compared, off = 0, []
    for question in QUERIES:
        expression = fts_query(question, tokenizer)
        assert expression, question
        query = bm25.phrases(expression, spec)
        assert all(len(phrase) == 1 for phrase in query), query  # the lanes' terms: one token each
        counts = store.term_chunk_counts([phrase[0] for phrase in query])
        stats = bm25.TableStats(rows, total / rows, {p: counts[p[0]] for p in query}, spec)
        hits = dict(store.fts_hits(expression, WEIGHTS, past=False))
        fields = {row[0]: row[1:] for row in store.fts_source_rows(list(hits))}
        for chunk_id, score in hits.items():
            mine = bm25.score(fields[chunk_id], query, WEIGHTS, stats)
            compared += 1
            if mine != pytest.approx(score, rel=1e-9):
                off.append((question, fields[chunk_id][0], score, mine))
    assert compared >= 15
    assert not off, off


def test_a_past_chunk_scores_as_it_did_in_the_present(tmp_path, tokenizer, closing):
    """Each note's words put in reverse order: its tokens (unicode61's; trigram's count and the
    query's trigrams, inside words), the table's length and every count stay, so the statistics
    are the moment before's. ``--as-of`` that moment scores each old chunk, a past one now, as
    FTS5 scored it then. ("fox": until m039 a trigram index found a past chunk by a three-letter
    word alone, its past's table unicode61's.)"""
    for name, text in NOTES.items():
        write(tmp_path, name, text.rstrip("\n") + " fox\n")
    index_vault(tmp_path, progress=False)
    store = closing(open_store(tmp_path))
    expression = fts_query("fox rocket", tokenizer)
    assert expression
    hits = dict(store.fts_hits(expression, WEIGHTS, past=False))
    before = {row.path: hits[c] for c, row in store.chunk_rows(list(hits)).items()}
    totals = store.fts_totals()
    moment = time.time()
    time.sleep(0.01)
    for name, text in NOTES.items():
        head, body = text.split("\n\n", 1)
        write(tmp_path, name, head + "\n\n" + " ".join(reversed((body.rstrip("\n") + " fox").split(" "))) + "\n")
    index_vault(tmp_path, progress=False)
    store = closing(open_store(tmp_path))
    assert store.fts_totals() == totals
    past = closing(PastIndex(store, as_of=moment, borrowed=True))
    assert len(past.past_chunk_ids()) == len(NOTES)
    got = past.fts_search(expression, WEIGHTS, 50)
    rows = past.chunk_rows([c for c, _ in got])
    scored = {rows[c].path: score for c, score in got if c >= PAST}
    assert sorted(scored) == sorted(before)
    off = [(p, before[p], scored[p]) for p in before if scored[p] != pytest.approx(before[p], rel=1e-9)]
    assert not off, off
