"""A BM25 search narrowed to the chunks that can be among the best (``brain/index/fts_pruning.py``).

``IndexStore.fts_search`` may first search only the chunks holding two of the query's words or
a rare one alone, and keep that answer when its last hit outscores every chunk it left out.
It must give exactly what the whole search gives (ids, scores, the order of ties), on both
paths (kept and searched again), split into parts or not; the narrower expression must score
each chunk as the OR does; and an SQLite whose FTS5 would score it otherwise is never asked.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import write
from index_helpers import CheapEmbedder, environ, index_into, search_while_writing, writer_racing

from brain.index import fts_pruning
from brain.index.files import INDEX_FILE
from brain.index.fts_search import FtsSearch
from brain.index.store import IndexStore

COMMON = "amber basil cedar delta ember fjord garnet harbor".split()
RARE = [f"rare{i}" for i in range(30)]
WEIGHTS = [(4.0, 2.0, 1.0), (1.0, 1.0, 1.0), (0.0, 1.0, 2.0), (-1.0, 1.0, 1.0)]
LIMITS = (1, 5, 20, 60)
TWIN = "amber basil cedar"  # every ninth note's sections: equal scores, broken by id
_TOKEN = re.compile(r"\w+")


@pytest.fixture(scope="module")
def pruned_index(tmp_path_factory) -> Path:
    """400 notes of three sections: a few of eight common words each (each word in ~1 of 8
    chunks), now and then a rare word, short and long sections, and short notes named by one
    common word, so that some searches keep the narrowed answer and others must search
    everything."""
    root = tmp_path_factory.mktemp("pruned")
    _write_vault(root / "vault")
    return index_into(root / "home", root / "vault", CheapEmbedder())[1]


@pytest.fixture(scope="module")
def trigram_index(tmp_path_factory) -> Path:
    """The same vault, indexed by trigrams (BRAIN_FTS_TOKENIZER=trigram, for CJK)."""
    root = tmp_path_factory.mktemp("pruned-trigram")
    _write_vault(root / "vault")
    with environ(BRAIN_FTS_TOKENIZER="trigram"):
        return index_into(root / "home", root / "vault", CheapEmbedder())[1]


def _write_vault(vault: Path) -> None:
    rng = random.Random(13)
    for i in range(400):
        sections = []
        for s in range(3):
            if i % 9 == 0:
                words = [TWIN]
            else:
                words = [rng.choice(COMMON) for _ in range(rng.randint(0, 3))]
                words += ["filler"] * rng.randint(1, 40)
                if rng.random() < 0.15:
                    words.append(rng.choice(RARE))
                rng.shuffle(words)
            sections.append(f"## part {s}\n\n{' '.join(words)}\n")
        if i % 13 == 1:  # one common word in its name and title, and nothing else: it scores high alone
            word = rng.choice(COMMON)
            write(vault, f"f{i // 100}/{word} {i:04d}.md", f"# {word} {i}\n\nfiller filler\n")
            continue
        write(vault, f"f{i // 100}/n{i:04d}.md", f"# n {i}\n\n" + "\n".join(sections))


@pytest.fixture
def store(pruned_index, monkeypatch):
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")  # every search may be narrowed (and split)
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "1")
    opened = IndexStore.open(pruned_index, create=False)
    yield opened
    opened.close()


def _queries(n: int, seed: int = 5) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        terms = rng.sample(COMMON, rng.randint(1, 6))
        if rng.random() < 0.4:
            terms.insert(rng.randrange(len(terms) + 1), rng.choice(RARE))
        out.append(terms)
    return out


def _or(terms: list[str]) -> str:
    return " OR ".join(f'"{t}"' for t in terms)


def _whole(store: IndexStore, expression: str, weights, limit: int) -> list[tuple[int, float]]:
    rows = store.conn.execute(
        "SELECT rowid, bm25(chunks_fts, ?, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?", (*weights, expression)
    )
    return sorted(((r[0], -float(r[1])) for r in rows), key=lambda hit: (-hit[1], hit[0]))[:limit]


def _outcomes(caplog) -> tuple[int, int]:
    kept = sum(r.getMessage().startswith("BM25 search narrowed") for r in caplog.records)
    again = sum(r.getMessage().startswith("BM25 search not narrowed") for r in caplog.records)
    return kept, again


@pytest.mark.parametrize("parts", ["1", "3"])
def test_a_narrowed_search_gives_exactly_what_the_whole_search_gives(store, pruned_index, parts, monkeypatch, caplog):
    if parts != "1":
        store.close()
        monkeypatch.setenv("BRAIN_LEXICAL_THREADS", parts)
        store = IndexStore.open(pruned_index, create=False)
    caplog.set_level(logging.DEBUG, logger="brain")
    ties = 0
    try:
        for number, terms in enumerate(_queries(160)):
            weights = WEIGHTS[number % len(WEIGHTS)]
            limit = LIMITS[(number // len(WEIGHTS)) % len(LIMITS)]
            expected = _whole(store, _or(terms), weights, limit)
            assert store.fts_search(_or(terms), weights, limit) == expected, (terms, weights, limit)
            ties += sum(1 for a, b in itertools.pairwise(expected) if a[1] == b[1])
    finally:
        store.close()
    kept, again = _outcomes(caplog)
    assert kept >= 20 and again >= 10, (kept, again)  # both paths were taken, often
    assert ties > 50  # the order of equal scores was tested, not only distinct ones


def test_each_branch_scores_its_chunks_as_the_or_does(store):
    """Together the branches hold exactly the chunks with two of the words or a rare one; a chunk
    scores at best the very same double as in the OR, and never above it in any branch."""
    text = {
        r[0]: set(_TOKEN.findall(f"{r[1]} {r[2]} {r[3]}".lower()))
        for r in store.conn.execute("SELECT rowid, title, heading, text FROM chunks_fts")
    }
    sql = "SELECT rowid, bm25(chunks_fts, 4.0, 2.0, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ?"
    checked = 0
    for terms in _queries(120, seed=9):
        if len(terms) < 2:
            continue
        rare = {t for t in terms if t.startswith("rare")}
        found = [store.conn.execute(sql, (b,)).fetchall() for b in fts_pruning.branches(terms, rare)]
        everything = dict(store.conn.execute(sql, (_or(terms),)).fetchall())
        narrowed: dict[int, float] = {}
        for rowid, rank in (hit for hits in found for hit in hits):  # bm25() is lower-better
            assert rank >= everything[rowid]  # a later branch leaves the earlier words out: lower
            narrowed[rowid] = min(rank, narrowed.get(rowid, rank))
        held = {rowid: words & set(terms) for rowid, words in text.items()}
        assert set(narrowed) == {r for r, h in held.items() if len(h) >= 2 or (h and h <= rare)}
        assert all(narrowed[r] == everything[r] for r in narrowed)
        checked += len(narrowed)
    assert checked > 1000


def test_without_the_bound_check_a_narrowed_answer_would_be_wrong(store, monkeypatch):
    """The check that the last hit outscores every chunk left out is what makes it exact: kept
    regardless, some answers differ from the whole search's (so the first test can fail)."""
    real = fts_pruning.pruning

    def no_bound(*args, **kwargs):
        found = real(*args, **kwargs)
        return found and fts_pruning.Pruning(found.branches, -math.inf)

    monkeypatch.setattr(fts_pruning, "pruning", no_bound)
    wrong = 0
    for number, terms in enumerate(_queries(160)):
        weights, limit = WEIGHTS[number % 2], LIMITS[number % len(LIMITS)]
        wrong += store.fts_search(_or(terms), weights, limit) != _whole(store, _or(terms), weights, limit)
    assert wrong >= 5


def test_an_sqlite_that_would_score_it_otherwise_is_never_asked(store, monkeypatch, caplog):
    monkeypatch.setattr(fts_pruning, "branches_score_alike", lambda: False)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    caplog.set_level(logging.DEBUG, logger="brain")
    for terms in _queries(40):
        assert store.fts_search(_or(terms), WEIGHTS[0], 20) == _whole(store, _or(terms), WEIGHTS[0], 20)
    assert _outcomes(caplog) == (0, 0)
    assert statements and not any(") NOT (" in s or 'NOT ("' in s for s in statements)


def test_this_sqlite_scores_it_alike():
    assert fts_pruning.branches_score_alike()


def test_a_small_search_is_not_narrowed(pruned_index, monkeypatch, caplog):
    """Below BRAIN_LEXICAL_SPLIT_MATCHES possible matches (10,000 by default) the whole search is quick."""
    monkeypatch.delenv("BRAIN_LEXICAL_SPLIT_MATCHES", raising=False)
    caplog.set_level(logging.DEBUG, logger="brain")
    opened = IndexStore.open(pruned_index, create=False)
    try:
        for terms in _queries(30):
            opened.fts_search(_or(terms), WEIGHTS[0], 20)
    finally:
        opened.close()
    assert _outcomes(caplog) == (0, 0)


def test_where_narrowing_cannot_pay_it_is_not_tried():
    counts = {"a": 5_000, "b": 5_000, "c": 5_000, "z": 20}
    rows = 100_000
    assert fts_pruning.pruning(["a"], counts, rows, 50, (1.0,)) is None  # one word: nothing to leave out
    assert fts_pruning.pruning([*"abc", "z", "a"], counts, rows, 50, (1.0,)) is None  # a word twice
    assert fts_pruning.pruning(list("abcdefg"), dict.fromkeys("abcdefg", 5_000), rows, 50, (1.0,)) is None
    assert fts_pruning.pruning(list("abc"), counts, rows, 50, (1.0, -0.5)) is None  # a negative weight
    assert fts_pruning.pruning(["a", "nowhere"], counts, rows, 50, (1.0,)) is None  # a word no chunk holds
    assert fts_pruning.pruning(list("abc"), counts, rows, 2_000, (1.0,)) is None  # too few together to fill it
    assert fts_pruning.pruning(list("abc"), counts, 6_000, 50, (1.0,)) is None  # held together by most
    found = fts_pruning.pruning([*"abc", "z"], counts, rows, 50, (4.0, 2.0, 1.0))
    assert found is not None
    assert found.branches == (
        '"a" AND ("b" OR "c" OR "z")',
        '"b" AND ("c" OR "z")',  # no NOT ("a"): a chunk with "a" too scores lower here than in its own
        '"c" AND ("z")',
        '"z"',  # the rare word may stand alone, a common one may not
    )
    idf = math.log((rows - 5_000 + 0.5) / (5_000 + 0.5))  # the bound: a common word alone, at most
    assert found.bound == pytest.approx(idf * 2.2, rel=1e-6) and found.bound > idf * 2.2


def test_the_search_of_a_real_query_is_the_whole_search(store):
    """Through the lexical lane's own expression (informative terms, stop words dropped)."""
    from brain.recall.lexical import match_expression

    for query in ("how does amber relate to basil and cedar", "delta ember fjord garnet rare3", "harbor"):
        expression = match_expression(store, query)
        assert expression is not None
        assert store.fts_search(expression, WEIGHTS[0], 40) == _whole(store, expression, WEIGHTS[0], 40)


def test_a_sqlite_error_in_the_check_means_no_narrowing(monkeypatch):
    fts_pruning.branches_score_alike.cache_clear()

    def broken(*args, **kwargs):
        raise sqlite3.OperationalError("no such module: fts5")

    monkeypatch.setattr(fts_pruning.sqlite3, "connect", broken)
    try:
        assert fts_pruning.branches_score_alike() is False
    finally:
        monkeypatch.undo()
        fts_pruning.branches_score_alike.cache_clear()
    assert fts_pruning.branches_score_alike() is True


def test_a_writer_committing_during_narrowed_searches_breaks_nothing(pruned_index, tmp_path, monkeypatch):
    """Each branch reads the committed state as it starts: chunks come and go, and a note's new
    title re-indexes its chunks under the same ids, between branches; never an error, never a
    chunk twice, always best first."""
    directory = tmp_path / "index"
    directory.mkdir()
    shutil.copy2(pruned_index / INDEX_FILE, directory / INDEX_FILE)
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "2")
    store = IndexStore.open(directory, create=False)
    note_ids = store.note_ids()
    vector = bytes(16 * 4)

    def write(writer: IndexStore, rng: random.Random) -> None:
        note = rng.choice(note_ids)
        if rng.random() < 0.5:
            words = " ".join(rng.choices(COMMON, k=3))
            writer.replace_chunks(note, [(0, "part", words, vector), (1, "part", f"{words} filler", vector)])
        else:
            writer.conn.execute("UPDATE notes SET title = ? WHERE id = ?", (" ".join(rng.sample(COMMON, 2)), note))

    try:
        with writer_racing(directory, write) as race:
            search_while_writing(
                race,
                lambda terms: store.fts_search(_or(terms), WEIGHTS[0], 20),
                _queries(60, seed=11),
                searches=100,
                commits=30,
            )
        assert not race.failures, race.failures
        assert race.commits >= 30
        for terms in _queries(20, seed=12):  # and once the writer is done, exactly
            assert store.fts_search(_or(terms), WEIGHTS[0], 20) == _whole(store, _or(terms), WEIGHTS[0], 20)
    finally:
        store.close()


def test_a_chunk_re_titled_between_two_branches_is_kept_once(pruned_index, tmp_path, monkeypatch):
    """A note's new title re-indexes its chunks under the same ids: a commit landing between two
    branch statements can put one chunk in both (with its old title in the first, its new one
    in the second). It is kept once."""
    directory = tmp_path / "index"
    directory.mkdir()
    shutil.copy2(pruned_index / INDEX_FILE, directory / INDEX_FILE)
    store = IndexStore.open(directory, create=False)
    writer = IndexStore.open(directory, create=False)
    note = store.note_ids()[7]
    with writer.transaction():
        writer.replace_chunks(note, [(0, "part", "basil cedar", bytes(16 * 4))])
        writer.conn.execute("UPDATE notes SET title = 'amber' WHERE id = ?", (note,))
    (chunk,) = [r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE note_id = ?", (note,))]
    real = FtsSearch._at_once

    def retitled_between(self, store, work):
        first = real(self, store, work[:1])
        with writer.transaction():
            writer.conn.execute("UPDATE notes SET title = 'plain' WHERE id = ?", (note,))
        rest = real(self, store, work[1:])
        return None if first is None or rest is None else first + rest

    monkeypatch.setattr(FtsSearch, "_at_once", retitled_between)
    try:
        branches = fts_pruning.branches(["amber", "basil", "cedar"], set())
        hits = store._fts._search_branches(store, branches, WEIGHTS[0], 10_000)
        ids = [c for c, _ in hits]
        assert chunk in ids and len(ids) == len(set(ids))
    finally:
        writer.close()
        store.close()


def test_a_trigram_index_narrows_exactly_too(trigram_index, monkeypatch, caplog):
    """A trigram index's terms are its trigrams, each one token: the same narrowing, the same answers."""
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")
    caplog.set_level(logging.DEBUG, logger="brain")
    trigrams = sorted({w[i : i + 3] for w in COMMON for i in range(len(w) - 2)})
    rng = random.Random(21)
    store = IndexStore.open(trigram_index, create=False)
    try:
        assert store.fts_tokenizer() == "trigram"
        for number in range(120):
            terms = rng.sample(trigrams, rng.randint(2, 6))
            weights, limit = WEIGHTS[number % 2], LIMITS[number % len(LIMITS)]
            assert store.fts_search(_or(terms), weights, limit) == _whole(store, _or(terms), weights, limit), terms
    finally:
        store.close()
    kept, again = _outcomes(caplog)
    assert kept >= 10, (kept, again)


def test_russian_words_and_yo_narrow_exactly(tmp_path, monkeypatch, caplog):
    """The pilot's vault is Russian and English: Cyrillic words, and ё folded to е on both sides
    (the index and the query), narrow to the very same answers."""
    words = "ёлка берёза сосна дуб клён липа ясень ива ель пихта".split()
    vault = tmp_path / "vault"
    rng = random.Random(8)
    for i in range(600):  # two of ten words a note: each in a fifth of the chunks
        text = " ".join(rng.sample(words, 2)) + " " + "текст " * rng.randint(1, 30)
        write(vault, f"n{i:04d}.md", f"# заметка {i}\n\n{text}\n")
    directory = index_into(tmp_path / "home", vault, CheapEmbedder())[1]
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")
    caplog.set_level(logging.DEBUG, logger="brain")
    from brain.recall.lexical import match_expression

    store = IndexStore.open(directory, create=False)
    try:
        for number in range(60):
            query = " ".join(rng.sample(words, rng.randint(2, 5)))
            query = query.upper() if number % 2 else query
            expression = match_expression(store, query)
            assert expression is not None and "ё" not in expression
            for limit in (5, 20):
                assert store.fts_search(expression, WEIGHTS[0], limit) == _whole(store, expression, WEIGHTS[0], limit)
    finally:
        store.close()
    kept, _ = _outcomes(caplog)
    assert kept >= 10
