"""One huge note must not hide its own title from BM25 (schema.py m022_title_in_first_chunks).

FTS5 counts a term's documents by row, and each chunk is a row: when every chunk carried its
note's title, a note of 400 chunks put its title's words in 400 rows, they became common in a
small vault (over a quarter of the rows: dropped from the query), and a small note sharing the
word was not found by it. A note's first TITLED_CHUNKS chunks hold its title now. Fake
embedder; the lexical lane alone.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import write
from index_helpers import as_before_m022, index_into, texts_folded_by

from brain.index.schema import TITLED_CHUNKS
from brain.index.store import IndexStore
from brain.recall.lexical import lexical_search
from brain.recall.past import PastIndex

QUERY = "zephyr copper"
# Four hundred sections of a log, each a chunk of its own, none naming the title's word.
BIG = "\n\n".join(
    f"## Entry {i}\n\n"
    + f"Day {i}: the pump ran, the valves held, the gauges read steady and the crew logged it. " * 12
    for i in range(400)
)


def _vault(root: Path, *, big: bool) -> Path:
    write(root, "Zephyr.md", "# Zephyr\n\nThe small sailing dinghy we keep at the lake.\n")
    for i in range(8):  # the word the query adds, in the text of notes of other titles
        write(root, f"Metal {i}.md", f"# Metal {i}\n\nNotes on copper wire, gauge {i}, and solder.\n")
    for i in range(6):
        write(root, f"Other {i}.md", f"# Other {i}\n\nTea kettles and garden herbs, shelf {i}.\n")
    if big:
        write(root, "Zephyr log.md", "# Zephyr log\n\n" + BIG + "\n")
    return root


def _ranked(store: IndexStore) -> list[str]:
    return [c.path for c in lexical_search(store, QUERY, depth=20)]


@contextmanager
def _opened(directory: Path) -> Iterator[IndexStore]:
    store = IndexStore.open(directory, create=False)
    try:
        yield store
    finally:
        store.close()


def _index(home: Path, vault: Path) -> Path:
    return index_into(home, vault)[1]


def test_a_huge_note_leaves_its_title_word_searched_and_the_small_note_sharing_it_found(tmp_path):
    alone = _index(tmp_path / "h1", _vault(tmp_path / "alone", big=False))
    beside = _index(tmp_path / "h2", _vault(tmp_path / "beside", big=True))
    with _opened(alone) as store:
        assert _ranked(store)[0] == "Zephyr.md"
    with _opened(beside) as store:
        assert store.chunk_count() > 400  # the log is 400 chunks, the vault's 15 notes one each
        ranked = _ranked(store)
        # 'zephyr' was in 401 of 415 rows, dropped from the query as common: the lane searched
        # "copper" alone and found neither note; now it is in the log's first TITLED_CHUNKS rows
        # (not in the heading path repeating the title after them) and searched
        assert store.term_chunk_counts(["zephyr"]) == {"zephyr": 1 + TITLED_CHUNKS}
        assert "Zephyr.md" in ranked and "Zephyr log.md" in ranked, ranked


def test_an_existing_index_is_migrated_without_embedding_again(tmp_path):
    home, vault = tmp_path / "home", _vault(tmp_path / "vault", big=True)
    directory = _index(home, vault)
    as_before_m022(directory / "index.db")
    conn = sqlite3.connect(directory / "index.db")
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    held = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'title : zephyr'"
    assert conn.execute(held).fetchone()[0] == chunks - 14  # every chunk of the two Zephyr notes
    conn.close()
    with _opened(directory) as store:  # opening migrates
        assert store.conn.execute(held).fetchone()[0] == 1 + TITLED_CHUNKS
        store.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
        assert "Zephyr.md" in _ranked(store)
        # a rename re-indexes the titled chunks under the new title, the others hold none
        with store.transaction():
            store.conn.execute("UPDATE notes SET title = 'Mistral log' WHERE path = 'Zephyr log.md'")
        assert store.conn.execute(held).fetchone()[0] == 1
        mistral = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'title : mistral'"
        assert store.conn.execute(mistral).fetchone()[0] == TITLED_CHUNKS
        store.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
    report, _ = index_into(home, vault)
    assert report.embedded == 0


def test_m022_indexes_again_only_the_chunks_past_a_notes_first(tmp_path, monkeypatch):
    """m022 filled chunks_fts again with a 'rebuild', reading every chunk (49 of 53 s at 100,000
    notes, where no note has 64 chunks); the chunks before a note's 65th are indexed as they were,
    so it reads again only those after. Counted: the texts m022's SQL folds (replace())."""
    home, vault = tmp_path / "home", _vault(tmp_path / "vault", big=True)
    directory = _index(home, vault)
    as_before_m022(directory / "index.db")
    with texts_folded_by("m022_title_in_first_chunks", monkeypatch) as folded, _opened(directory) as store:
        read = [text for text in folded if text is not None]
        # the small notes' one chunk each, and the log's first 64, are not read
        assert not [text for text in read if "kettles" in text or "copper" in text or "Day 3:" in text]
        assert any("Day 399:" in text for text in read)
        held = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'title : zephyr'"
        assert store.conn.execute(held).fetchone()[0] == 1 + TITLED_CHUNKS
        assert "Zephyr.md" in _ranked(store)


def test_a_huge_note_m021_marks_is_searched_right_after_m022_and_the_run_after(tmp_path):
    """From before m021, a long note holding an invisible character: m021 marks it to be read
    again (chunks_fts holds its text as stored, and no searched form is kept yet), m022 takes its
    chunks past the 64th out as held and puts them in untitled, and the run after it indexes the
    chunk holding the character in its searched form."""
    from index_helpers import as_before_m021

    home, vault = tmp_path / "home", _vault(tmp_path / "vault", big=True)
    log = vault / "Zephyr log.md"
    log.write_text(log.read_text() + "\nThe pass\u200bword is in the safe.\n")
    directory = _index(home, vault)
    as_before_m021(directory / "index.db")
    _opened(directory).__enter__().close()  # m021, then m022
    report, _ = index_into(home, vault)
    assert report.changed == 1 and report.embedded == 1
    with _opened(directory) as store:
        query = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
        assert store.conn.execute(query, ("title : zephyr",)).fetchone()[0] == 1 + TITLED_CHUNKS
        assert store.conn.execute(query, ("password",)).fetchone()[0] == 1
        assert store.conn.execute(query, ("pass",)).fetchone()[0] == 0


def test_as_of_ranks_the_past_as_the_present_ranked_it_then(tmp_path):
    home, vault = tmp_path / "home", _vault(tmp_path / "vault", big=True)
    directory = _index(home, vault)
    with _opened(directory) as store:
        then = _ranked(store)
    moment = time.time()
    time.sleep(0.01)
    # both Zephyr notes change: as of before, each is read from the past's chunks
    write(vault, "Zephyr.md", "# Zephyr\n\nSold the dinghy in May.\n")
    write(vault, "Zephyr log.md", "# Zephyr log\n\n" + BIG.replace("pump", "motor") + "\n")
    _index(home, vault)
    with _opened(directory) as store:
        past = PastIndex(store, as_of=moment)
        try:
            ranked = _ranked(past)
            for path in ("Zephyr.md", "Zephyr log.md"):
                assert path in then and ranked.index(path) == then.index(path), (ranked, then)
            assert past.term_chunk_counts(["zephyr"])["zephyr"] == 2 * (1 + TITLED_CHUNKS)  # now and then
        finally:
            past.close()
