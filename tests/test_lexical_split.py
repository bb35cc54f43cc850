"""A large BM25 search split into rowid ranges on several connections (``IndexStore.fts_search``).

The parts must give exactly what one statement gives (ids, scores, the order of ties), run
only where they pay (never on a small index), read the state the store reads (a snapshot's
readers are pinned to it; a transaction's own writes are searched in one statement), survive
a writer committing meanwhile, fall back to one statement when a reader fails, and leave no
connection or thread behind when the store closes.
"""

from __future__ import annotations

import gc
import itertools
import logging
import random
import shutil
import sqlite3
import threading
import weakref
from pathlib import Path

import pytest
from conftest import write
from index_helpers import CheapEmbedder, index_into, search_while_writing, writer_racing

from brain.index import fts_pruning, fts_search
from brain.index.files import INDEX_FILE
from brain.index.store import IndexStore
from brain.recall.opening import open_snapshot
from brain.recall.past import PastIndex

VOCAB = "amber basil cedar delta ember fjord garnet harbor indigo juniper kelp lumen".split()
WEIGHTS = (4.0, 2.0, 1.0)
TWIN = "amber basil cedar amber delta"  # every fifth note's sections: equal scores, broken by id


@pytest.fixture(scope="module")
def split_vault(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(brain home, vault, index folder): 300 notes, three sections each, over a twelve-word
    vocabulary: every search matches hundreds of chunks, and many score alike."""
    root = tmp_path_factory.mktemp("split")
    vault = root / "vault"
    rng = random.Random(16)
    for i in range(300):
        sections = []
        for s in range(3):
            words = TWIN if i % 5 == 0 else " ".join(rng.choices(VOCAB, k=rng.randint(6, 40)))
            heading = rng.choice(VOCAB) if i % 7 == 0 else f"part {s}"
            sections.append(f"## {heading}\n\n{words}\n")
        title = f"{rng.choice(VOCAB)} {i}" if i % 11 == 0 else f"n {i}"
        write(vault, f"f{i // 100}/n{i:04d}.md", f"# {title}\n\n" + "\n".join(sections))
    _, directory = index_into(root / "home", vault, CheapEmbedder())
    return root / "home", vault, directory


@pytest.fixture
def built(split_vault) -> Path:
    return split_vault[2]


@pytest.fixture
def index(built, tmp_path) -> Path:
    """A private copy of the built index, for tests that write or hold it."""
    directory = tmp_path / "index"
    directory.mkdir()
    shutil.copy2(built / INDEX_FILE, directory / INDEX_FILE)
    return directory


@pytest.fixture
def split(monkeypatch):
    """Split every search that matches a chunk, in three parts (never narrowed: that has its own
    tests, test_lexical_pruning.py, with and without parts)."""
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "3")
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")
    monkeypatch.setattr(fts_pruning, "pruning", lambda *args, **kwargs: None)


def _queries(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        terms = rng.sample(VOCAB, rng.randint(1, 5))
        if rng.random() < 0.2:
            terms.append("nowhere")  # a term no chunk holds
        out.append(" OR ".join(f'"{t}"' for t in terms))
    return out


def _one_statement(store: IndexStore, expression: str, weights=WEIGHTS, limit: int = 300) -> list[tuple[int, float]]:
    rows = store.conn.execute(
        "SELECT rowid, bm25(chunks_fts, ?, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?",
        (*weights, expression),
    )
    ranked = sorted(((r[0], -float(r[1])) for r in rows), key=lambda hit: (-hit[1], hit[0]))
    return ranked[:limit]


def _fts_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("brain-fts")]


class Traced:
    """Every reader connection the store opens (each made read-only by ``fts_search.query_only``),
    with the statements each runs."""

    def __init__(self, monkeypatch):
        self.readers: list[sqlite3.Connection] = []
        self.statements: list[str] = []
        original = fts_search.query_only

        def traced(conn: sqlite3.Connection) -> sqlite3.Connection:
            conn = original(conn)
            conn.set_trace_callback(self.statements.append)
            self.readers.append(conn)
            return conn

        monkeypatch.setattr(fts_search, "query_only", traced)

    def parts(self) -> list[str]:
        return [s for s in self.statements if "rowid >" in s and "bm25" in s]


def test_a_split_search_gives_exactly_what_one_statement_gives(built, split):
    store = IndexStore.open(built, create=False)
    try:
        ties = 0
        for number, expression in enumerate(_queries(80)):
            weights = WEIGHTS if number % 3 else (1.0, 1.0, 1.0)
            limit = (1, 7, 50, 300, 5000)[number % 5]
            expected = _one_statement(store, expression, weights, limit)
            assert store.fts_search(expression, weights, limit) == expected, expression
            ties += sum(1 for a, b in itertools.pairwise(expected) if a[1] == b[1])
        assert ties > 100  # the order of equal scores was tested, not only distinct ones
        assert 0 < len(_fts_threads()) <= 2  # it did run in parts, on the pool's two threads at most
    finally:
        store.close()


def test_one_statement_gives_equal_scores_by_chunk_id(built, monkeypatch):
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "1")
    store = IndexStore.open(built, create=False)
    try:
        hits = store.fts_search('"amber" OR "basil" OR "cedar"', WEIGHTS, 300)
        assert hits == _one_statement(store, '"amber" OR "basil" OR "cedar"')
        assert sum(1 for a, b in itertools.pairwise(hits) if a[1] == b[1]) > 10
        assert not _fts_threads()
    finally:
        store.close()


def test_the_search_runs_in_parts_on_the_store_and_its_readers(built, split, monkeypatch):
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    mine: list[str] = []
    store.conn.set_trace_callback(mine.append)
    try:
        expression = '"amber" OR "kelp"'
        hits = store.fts_search(expression, WEIGHTS, 40)
        assert len(traced.readers) == 2
        assert len(traced.parts()) == 2  # one on each reader
        assert len([s for s in mine if "rowid >" in s and "bm25" in s]) == 1  # and one here
        assert not [s for s in mine if "ORDER BY rank, rowid LIMIT" in s and "rowid >" not in s]
        ranges = [s.split("rowid >")[1].split("ORDER")[0] for s in [*traced.parts(), *mine] if "rowid >" in s]
        assert len(set(ranges)) == 3  # three different ranges
        assert hits == _one_statement(store, expression, limit=40)
        store.fts_search('"ember"', WEIGHTS, 10)
        assert len(traced.readers) == 2  # opened once, kept
    finally:
        store.close()


def test_a_small_index_searches_in_one_statement_with_no_reader_or_thread(built, monkeypatch):
    """The default threshold is far above 900 chunks: today's one statement, nothing more."""
    monkeypatch.delenv("BRAIN_LEXICAL_SPLIT_MATCHES", raising=False)
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "4")
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    mine: list[str] = []
    store.conn.set_trace_callback(mine.append)
    try:
        for expression in _queries(10):
            store.fts_search(expression, WEIGHTS, 300)
        assert not traced.readers and not _fts_threads()
        assert not [s for s in mine if "rowid >" in s]
    finally:
        store.close()


def test_a_search_that_cannot_match_enough_chunks_is_not_split(built, monkeypatch):
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "2")
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    try:
        chunks = store.chunk_count()
        assert store.term_chunk_counts(["amber"])["amber"] < chunks
        monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", str(chunks))
        store.fts_search('"amber"', WEIGHTS, 300)  # can match only amber's chunks: too few
        assert not traced.readers
        store.fts_search(" OR ".join(f'"{t}"' for t in VOCAB), WEIGHTS, 300)  # may match every chunk
        assert len(traced.readers) == 1
    finally:
        store.close()


def test_one_thread_means_one_statement(built, monkeypatch):
    monkeypatch.setenv("BRAIN_LEXICAL_THREADS", "1")
    monkeypatch.setenv("BRAIN_LEXICAL_SPLIT_MATCHES", "1")
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    try:
        store.fts_search('"amber" OR "basil"', WEIGHTS, 300)
        assert not traced.readers and not _fts_threads()
    finally:
        store.close()


def test_closing_the_store_closes_its_readers_and_joins_its_threads(built, split, monkeypatch):
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    store.fts_search('"amber" OR "basil"', WEIGHTS, 300)
    assert len(traced.readers) == 2 and _fts_threads()
    store.close()
    assert not _fts_threads()
    for conn in traced.readers:
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")


def test_closing_a_past_view_closes_the_readers_of_its_store(built, split, monkeypatch):
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    view = PastIndex(store)
    store.fts_search('"amber"', WEIGHTS, 300)  # the view searches through its store
    assert len(traced.readers) == 2
    view.close()
    assert not _fts_threads()
    with pytest.raises(sqlite3.ProgrammingError):
        traced.readers[0].execute("SELECT 1")


def test_a_transaction_searches_its_own_writes_in_one_statement(index, split, monkeypatch):
    """The readers cannot see a transaction's uncommitted writes: inside one, no split."""
    traced = Traced(monkeypatch)
    store = IndexStore.open(index, create=False)
    try:
        before = store.fts_search('"amber"', WEIGHTS, 5000)
        assert len(traced.parts()) == 2
        gone = store.chunk_note_ids([before[0][0]])[before[0][0]]
        with store.transaction():
            store.delete_notes([gone])
            during = store.fts_search('"amber"', WEIGHTS, 5000)
            assert before[0][0] not in {c for c, _ in during}
            assert during == _one_statement(store, '"amber"', limit=5000)
        assert len(traced.parts()) == 2  # no part ran inside it
        assert store.fts_search('"amber"', WEIGHTS, 5000) == during
    finally:
        store.close()


def test_a_writer_committing_during_split_searches_breaks_nothing(index, split):
    """Each part reads the committed state as it starts: a chunk may come or go between parts,
    never an error, never a chunk twice."""
    store = IndexStore.open(index, create=False)
    note_ids = store.note_ids()
    vector = bytes(16 * 4)

    def write(writer: IndexStore, rng: random.Random) -> None:
        words = " ".join(rng.choices(VOCAB, k=20))
        writer.replace_chunks(rng.choice(note_ids), [(0, "part", words, vector), (1, "part", words, vector)])

    try:
        with writer_racing(index, write) as race:
            search_while_writing(
                race,
                lambda expression: store.fts_search(expression, WEIGHTS, 300),
                _queries(60, seed=11),
                searches=60,
                commits=20,
            )
        assert not race.failures, race.failures
        assert race.commits >= 20
        assert _fts_threads()  # it did split while the writer wrote
        for expression in _queries(10, seed=12):  # and once the writer is done, exactly
            assert store.fts_search(expression, WEIGHTS, 300) == _one_statement(store, expression)
    finally:
        store.close()


def test_a_snapshot_s_readers_read_its_state_however_the_index_moves_on(index, split, monkeypatch):
    traced = Traced(monkeypatch)
    snapshot = IndexStore.open_snapshot(index, split_searches=True)
    try:
        assert len(traced.readers) == 2  # opened and pinned with the snapshot
        queries = _queries(20, seed=5)
        before = [snapshot.fts_search(e, WEIGHTS, 300) for e in queries]
        writer = IndexStore.open(index, create=False)
        try:
            with writer.transaction():
                writer.delete_notes(writer.note_ids()[::2])
            with writer.transaction():
                for note in writer.note_ids()[:40]:
                    writer.replace_chunks(note, [(0, "amber", "amber amber kelp", bytes(64))])
            moved = [_one_statement(writer, e) for e in queries]
        finally:
            writer.close()
        assert [snapshot.fts_search(e, WEIGHTS, 300) for e in queries] == before
        assert moved != before  # the index did move on
        assert len(traced.parts()) == 2 * 2 * len(queries)  # in parts, each time
    finally:
        snapshot.close()
    assert not _fts_threads()


def test_a_server_s_snapshot_recalls_in_parts_what_it_recalls_in_one_statement(split_vault, split, monkeypatch):
    """``recall.opening.open_snapshot`` (what `brain serve` answers from) opens pinned readers."""
    home, vault, _ = split_vault
    monkeypatch.setenv("BRAIN_HOME", str(home))
    texts = ["amber kelp", "how does fjord relate to garnet", "lumen indigo harbor", "cedar"]
    traced = Traced(monkeypatch)
    answers = {}
    for threads in ("3", "1"):
        monkeypatch.setenv("BRAIN_LEXICAL_THREADS", threads)
        recaller = open_snapshot(vault, CheapEmbedder())
        try:
            answers[threads] = [
                [(c.path, c.score) for c in recaller.ask(text, mode).results]
                for text in texts
                for mode in ("hybrid", "hybrid+ppr")
            ]
        finally:
            recaller.close()
        if threads == "3":
            assert len(traced.readers) == 2 and traced.parts()
            assert not _fts_threads()
    assert len(traced.readers) == 2  # none with one thread
    assert answers["3"] == answers["1"] and all(answers["1"])


def test_a_snapshot_that_cannot_pin_its_readers_searches_in_one_statement(index, split, monkeypatch, caplog):
    """A writer committing while the readers are pinned, every time (data_version moves)."""
    traced = Traced(monkeypatch)
    versions = iter(range(1_000))
    monkeypatch.setattr(fts_search, "data_version", lambda conn: next(versions))
    with caplog.at_level(logging.INFO, logger="brain"):
        snapshot = IndexStore.open_snapshot(index, split_searches=True)
    try:
        assert "one statement" in caplog.text
        assert traced.readers and all(_closed(c) for c in traced.readers)
        expression = '"amber" OR "fjord"'
        assert snapshot.fts_search(expression, WEIGHTS, 300) == _one_statement(snapshot, expression)
        assert not traced.parts() and not _fts_threads()
    finally:
        snapshot.close()


def test_a_snapshot_opened_to_look_opens_no_reader(index, split, monkeypatch):
    traced = Traced(monkeypatch)
    snapshot = IndexStore.open_snapshot(index)
    try:
        expression = '"amber" OR "fjord"'
        assert snapshot.fts_search(expression, WEIGHTS, 300) == _one_statement(snapshot, expression)
        assert not traced.readers and not _fts_threads()
    finally:
        snapshot.close()


def test_a_reader_that_fails_is_said_and_the_search_runs_in_one_statement(built, split, monkeypatch, caplog):
    traced = Traced(monkeypatch)
    store = IndexStore.open(built, create=False)
    try:
        expression = '"amber" OR "fjord"'
        store.fts_search(expression, WEIGHTS, 300)
        traced.readers[1].close()  # the next part on it raises
        with caplog.at_level(logging.WARNING, logger="brain"):
            hits = store.fts_search(expression, WEIGHTS, 300)
        assert hits == _one_statement(store, expression)
        assert "one statement" in caplog.text
        assert not _fts_threads() and _closed(traced.readers[0])
        assert store.fts_search('"kelp"', WEIGHTS, 30) == _one_statement(store, '"kelp"', limit=30)
    finally:
        store.close()


def test_a_replaced_database_is_not_read_by_new_readers(index, split, monkeypatch, caplog):
    """A rebuild swaps another database in at the path: readers opened after would read it."""
    store = IndexStore.open(index, create=False)
    try:
        monkeypatch.setattr(IndexStore, "still_at_its_path", lambda self: False)
        expression = '"amber" OR "fjord"'
        with caplog.at_level(logging.WARNING, logger="brain"):
            hits = store.fts_search(expression, WEIGHTS, 300)
        assert hits == _one_statement(store, expression)
        assert "was replaced" in caplog.text and not _fts_threads()
    finally:
        store.close()


def test_an_error_in_the_search_itself_is_raised_as_before(built, split):
    store = IndexStore.open(built, create=False)
    try:
        store.fts_search('"amber"', WEIGHTS, 10)
        with pytest.raises(sqlite3.OperationalError):
            store.fts_search('"amber" OR "basil', WEIGHTS, 10)  # not FTS5 syntax: as one statement raises
        assert _fts_threads()  # the readers were not to blame: kept
        assert store.fts_search('"amber"', WEIGHTS, 10) == _one_statement(store, '"amber"', limit=10)
    finally:
        store.close()


def test_a_store_with_no_readers_is_freed_as_soon_as_it_is_dropped(index, split):
    """Its BM25 searches hold it in no reference cycle: it goes, with what its cache holds (a
    postings base's open file), when the last reference does, not at a run of the cycle
    collector, which may be far off (a process that searched ten indexes held ten files)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        snapshot = IndexStore.open_snapshot(index)  # opened to look: no readers
        expression = '"amber" OR "fjord"'
        assert snapshot.fts_search(expression, WEIGHTS, 300) == _one_statement(snapshot, expression)
        gone = weakref.ref(snapshot)
        snapshot.close()
        del snapshot
        assert gone() is None
    finally:
        if enabled:
            gc.enable()


def _closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False
