"""Issue 13 stages: names lane, anchor lanes, fusion details, chunking strategies, fence links.

Plumbing on small hand-built vaults with the fake (lexical) embedder: each stage does what it
says, and with its switch off the results are the old ones exactly.
"""

from __future__ import annotations

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings


def _paths(result) -> list[str]:
    return [c.path for c in result.results]


def _ranked(result) -> list[tuple[str, float]]:
    return [(c.path, c.score) for c in result.results]


# ----- a note's score from several chunks, BM25 column weights ------------------------------


def test_chunk_decay_lifts_a_note_that_answers_in_several_passages(tmp_path):
    from brain.recall.dense import decayed

    assert decayed([0.5, 0.25], 0.0) == 0.0
    assert decayed([0.5, 0.25], 0.5) == pytest.approx(0.25 + 0.0625)
    root = tmp_path / "v"
    body = "\n\n".join(f"## Part {i}\n\n" + f"orchard pepper ladder kettle section {i}. " * 12 for i in range(4))
    write(root, "Long.md", body + "\n")
    write(root, "Short.md", "orchard pepper ladder kettle basket.\n")
    for i in range(10):
        write(root, f"Other {i}.md", f"thunder marble pillow {i}.\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    query = "orchard pepper ladder kettle"
    plain = recaller.ask(query, "vector", RecallSettings(k=3))
    summed = recaller.ask(query, "vector", RecallSettings(k=3, chunk_decay=0.5))
    assert _paths(plain)[0] == "Short.md" and _paths(summed)[0] == "Long.md"
    assert summed.results[0].dense_score < summed.results[0].score  # the shown cosine stays the best chunk's
    lexical = recaller.ask(query, "hybrid", RecallSettings(k=3, chunk_decay=0.5))
    long_lexical = next(c for c in lexical.results if c.path == "Long.md")
    assert "lexical" in long_lexical.sources
    for mode in ("vector", "hybrid+ppr"):
        default = recaller.ask(query, mode, RecallSettings())
        off = recaller.ask(query, mode, RecallSettings(chunk_decay=0.0))
        assert _ranked(off) == _ranked(default)


def test_lexical_column_weights_are_a_setting(tmp_path):
    from brain.recall.lexical import WEIGHTS, lexical_search

    root = tmp_path / "v"
    write(root, "Kettle.md", "Orchard pepper ladder.\n")  # the word only in the title
    write(root, "Note.md", "# Kettle\n\nkettle kettle orchard.\n")  # in a heading and the text
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    assert WEIGHTS == (4.0, 2.0, 1.0) and RecallSettings().lexical_weights == WEIGHTS
    title_first = lexical_search(recaller.store, "kettle", 5, weights=(50.0, 1.0, 1.0))
    text_first = lexical_search(recaller.store, "kettle", 5, weights=(0.1, 1.0, 10.0))
    assert title_first[0].path == "Kettle.md" and text_first[0].path == "Note.md"
    hybrid = recaller.ask("kettle", "hybrid", RecallSettings(lexical_weights=(0.1, 1.0, 10.0)))
    assert [c.path for c in hybrid.results if "lexical" in c.sources][0] == "Note.md"
