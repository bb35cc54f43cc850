"""The queries of one state of the index read each chunk's row and each note's chunk vectors
once (``IndexStore.one_query``).

The lanes of one query show and score many of the same notes, and a warm process's queries
many of the same again: while the index is unchanged the store answers a repeated read from
what it read, and once it changed it reads afresh.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tracemalloc
from collections import Counter

import pytest
from conftest import write

from brain.index.files import INDEX_FILE
from brain.index.indexer import index_vault
from brain.index.query_reads import StateReads
from brain.index.store import IndexStore
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

SETTINGS = RecallSettings(k=8)


@pytest.fixture
def vault(tmp_path):
    """Notes that link to each other, so that every lane (anchors, PageRank) has work."""
    root = tmp_path / "vault"
    topics = ["harbour cranes", "winter storms", "tide tables", "crane maintenance", "storm log"]
    for i, topic in enumerate(topics):
        other = topics[(i + 1) % len(topics)]
        write(
            root,
            f"{topic.title()}.md",
            f"# {topic.title()}\n\nOn {topic}: see [[{other.title()}]] for more.\n\n"
            f"## Details\n\nThe {topic} of the harbour in winter, and [[{topics[(i + 2) % len(topics)].title()}]].\n",
        )
    for i in range(10):
        write(root, f"Filler {i}.md", f"# Filler {i}\n\nApples and harbour pears, number {i}; see [[Storm Log]].\n")
    index_vault(root, progress=False)
    return root


class _Reads:
    """Counts what the store reads from the database, by id."""

    def __init__(self, monkeypatch):
        self.chunks: Counter[int] = Counter()
        self.notes: Counter[int] = Counter()
        rows, vectors = IndexStore._read_chunk_rows, IndexStore._read_note_chunk_codes

        def read_rows(store, chunk_ids):
            self.chunks.update(chunk_ids)
            return rows(store, chunk_ids)

        def read_vectors(store, note_ids):
            self.notes.update(note_ids)
            return vectors(store, note_ids)

        monkeypatch.setattr(IndexStore, "_read_chunk_rows", read_rows)
        monkeypatch.setattr(IndexStore, "_read_note_chunk_codes", read_vectors)

    def clear(self) -> None:
        self.chunks.clear()
        self.notes.clear()


def _results(result) -> list[tuple[str, int, float]]:
    return [(c.path, c.chunk_id, round(c.score, 9)) for c in result.results]


def test_one_query_reads_each_chunk_and_note_once_and_answers_alike(vault, monkeypatch):
    reads = _Reads(monkeypatch)
    recaller = open_recaller(vault, update=False)
    chunks: Counter[int] = Counter()  # the chunks' rows read by the queries of this state
    vectors: Counter[int] = Counter()  # the notes' vectors read by them
    try:
        for query in ("harbour cranes in winter storms", "tide tables", "what does the storm log say"):
            reads.clear()
            once = recaller.ask(query, "hybrid+ppr", SETTINGS)
            chunks.update(reads.chunks)
            vectors.update(reads.notes)
            assert max(chunks.values()) == 1, chunks
            assert max(vectors.values()) == 1, vectors
            with monkeypatch.context() as m:  # the same query with every read made afresh
                m.setattr(IndexStore, "one_query", lambda store: contextlib.nullcontext())
                reads.clear()
                afresh = recaller.ask(query, "hybrid+ppr", SETTINGS)
                assert max(reads.chunks.values()) > 1  # what the memo spares
                assert max(reads.notes.values()) > 1
            assert _results(once) == _results(afresh)
            assert [c.text for c in once.results] == [c.text for c in afresh.results]
        assert chunks and vectors, "the lanes read chunks and vectors"
    finally:
        recaller.close()


def test_a_new_query_reads_what_changed(vault):
    recaller = open_recaller(vault, update=False)
    try:
        store = recaller.store
        chunk_id = store.conn.execute("SELECT min(id) FROM chunks").fetchone()[0]
        with store.one_query():
            before = store.chunk_rows([chunk_id])[chunk_id].text
            store.conn.execute("UPDATE chunks SET text = 'rewritten' WHERE id = ?", (chunk_id,))
            assert store.chunk_rows([chunk_id])[chunk_id].text == before  # as first read, in this query
            with store.one_query():  # re-entered: the outer query's reads hold
                assert store.chunk_rows([chunk_id])[chunk_id].text == before
        assert store.chunk_rows([chunk_id])[chunk_id].text == "rewritten"
        with store.one_query():
            assert store.chunk_rows([chunk_id])[chunk_id].text == "rewritten"
        store.conn.rollback()
    finally:
        recaller.close()


def test_a_past_view_reads_through_the_stores_memo(vault, monkeypatch):
    import time

    reads = _Reads(monkeypatch)
    recaller = open_recaller(vault, update=False, as_of=time.time() + 60)
    try:
        reads.clear()
        result = recaller.ask("harbour cranes in winter storms", "hybrid+ppr", SETTINGS)
        assert result.results
        assert max(reads.chunks.values()) == 1 and max(reads.notes.values()) == 1
    finally:
        recaller.close()


def test_state_reads_keep_the_order_of_rows_and_missing_rows():
    reads: StateReads[str] = StateReads()
    asked: list[list[int]] = []

    def rows(ids: list[int]) -> dict[int, str]:
        asked.append(ids)
        return {i: f"row {i}" for i in ids if i != 3}  # chunk 3 is gone

    assert reads.chunk_rows([2, 3, 1, 2], rows) == {2: "row 2", 1: "row 1"}
    assert list(reads.chunk_rows([1, 4, 3], rows)) == [1, 4]
    assert asked == [[2, 3, 1], [4]]  # each id read once, a gone one too


def test_a_query_decodes_each_lanes_vectors_at_once(vault, monkeypatch):
    """The lanes read the vectors as stored and decode each lane's at once into one matrix:
    no float32 bytes made row by row (``decode_many``), the answers as the float32 rows give."""
    from brain.index import vector_blobs
    from brain.recall import dense

    calls: Counter[str] = Counter()
    decode_rows, decode_many = vector_blobs.decode_rows, vector_blobs.decode_many

    def counted_rows(rows):
        calls["decode_rows"] += 1
        calls["rows"] += len(rows)
        return decode_rows(rows)

    def counted_many(blobs):
        calls["decode_many"] += 1
        return decode_many(blobs)

    monkeypatch.setattr(vector_blobs, "decode_rows", counted_rows)
    monkeypatch.setattr(vector_blobs, "decode_many", counted_many)
    recaller = open_recaller(vault, update=False)
    try:
        calls.clear()
        result = recaller.ask("harbour cranes in winter storms", "hybrid+ppr", SETTINGS)
        assert result.results
        assert calls["decode_many"] == 0, calls
        assert calls["rows"] > calls["decode_rows"] > 0, calls  # several rows a call
        store = recaller.store
        note_ids = [n for (n,) in store.conn.execute("SELECT id FROM notes ORDER BY id DESC")]
        matrix = dense.ChunkVectors(store, note_ids).matrix
        rows = store.note_chunk_vectors(note_ids)
        assert [row.tobytes() for row in matrix] == [v for _, _, v in rows]
    finally:
        recaller.close()


def test_a_querys_reads_are_plain_tuples(vault):
    """The rows a query reads by the hundred are tuples, not the connection's sqlite3.Row nor
    a dataclass built field by field."""
    recaller = open_recaller(vault, update=False)
    try:
        store = recaller.store
        chunk_ids = [c for (c,) in store.conn.execute("SELECT id FROM chunks")]
        note_ids = [n for (n,) in store.conn.execute("SELECT id FROM notes")]
        rows = store.chunk_rows(chunk_ids)
        assert sorted(rows) == sorted(chunk_ids)
        assert all(isinstance(row, tuple) and row.id == chunk_id for chunk_id, row in rows.items())
        codes = store.note_chunk_codes(note_ids)
        assert len(codes) == len(chunk_ids) and all(type(row) is tuple for row in codes)
    finally:
        recaller.close()


def test_queries_of_one_state_read_each_chunks_note_and_out_degree_once(vault, monkeypatch):
    """A warm process asks many queries of one state: which note a chunk is of and how many
    notes a note links to are read once for them all, and afresh once the database changed."""
    chunks: Counter[int] = Counter()
    notes: Counter[int] = Counter()
    read_notes, read_degrees = IndexStore._read_chunk_note_ids, IndexStore._read_out_degrees

    def counted_notes(store, chunk_ids):
        chunks.update(chunk_ids)
        return read_notes(store, chunk_ids)

    def counted_degrees(store, note_ids):
        notes.update(note_ids)
        return read_degrees(store, note_ids)

    monkeypatch.setattr(IndexStore, "_read_chunk_note_ids", counted_notes)
    monkeypatch.setattr(IndexStore, "_read_out_degrees", counted_degrees)
    queries = ("harbour cranes in winter storms", "tide tables", "what does the storm log say")
    recaller = open_recaller(vault, update=False)
    try:
        first = [_results(recaller.ask(q, "hybrid+ppr", SETTINGS)) for q in queries]
        assert chunks and notes, "the lanes ask which note a chunk is of, and the anchors out-degrees"
        assert max(chunks.values()) == 1, chunks
        assert max(notes.values()) == 1, notes
        read = (sum(chunks.values()), sum(notes.values()))
        assert [_results(recaller.ask(q, "hybrid+ppr", SETTINGS)) for q in queries] == first
        assert (sum(chunks.values()), sum(notes.values())) == read  # nothing read again

        store = recaller.store
        chunk_id, note_id = store.conn.execute("SELECT id, note_id FROM chunks ORDER BY id LIMIT 1").fetchone()
        other = store.conn.execute("SELECT min(id) FROM notes WHERE id != ?", (note_id,)).fetchone()[0]
        with store.one_query():
            assert store.chunk_note_ids([chunk_id]) == {chunk_id: note_id}
        with contextlib.closing(sqlite3.connect(store.directory / INDEX_FILE)) as writer, writer:
            writer.execute("UPDATE chunks SET note_id = ? WHERE id = ?", (other, chunk_id))  # another process's commit
        with store.one_query():  # the database changed: read afresh
            assert store.chunk_note_ids([chunk_id]) == {chunk_id: other}
        store.conn.execute("UPDATE chunks SET note_id = ? WHERE id = ?", (note_id, chunk_id))
        store.conn.commit()
        with store.one_query():  # and changed by this connection
            assert store.chunk_note_ids([chunk_id]) == {chunk_id: note_id}
    finally:
        recaller.close()


def test_state_reads_keep_order_and_missing_rows():
    reads: StateReads[str] = StateReads()
    asked: list[list[int]] = []

    def note_ids(ids: list[int]) -> dict[int, int]:
        asked.append(ids)
        return {i: i * 10 for i in ids if i != 3}  # chunk 3 is gone

    assert reads.chunk_note_ids([2, 3, 1, 2], note_ids) == {2: 20, 1: 10}
    assert list(reads.chunk_note_ids([1, 4, 3], note_ids)) == [1, 4]
    assert asked == [[2, 3, 1], [4]]

    degrees_asked: list[list[int]] = []

    def degrees(ids: list[int]) -> dict[int, int]:
        degrees_asked.append(ids)
        return {i: 2 for i in ids if i != 5}  # note 5 links to no other note

    assert reads.out_degrees([5, 6], degrees) == {6: 2}
    assert reads.out_degrees([6, 5, 7], degrees) == {6: 2, 7: 2}
    assert degrees_asked == [[5, 6], [7]]

    vectors_asked: list[list[int]] = []

    def vectors(note_ids: list[int]) -> list[tuple[int, int, bytes]]:
        vectors_asked.append(note_ids)
        table = {7: [(70, 7, b"a"), (71, 7, b"b")], 8: [(80, 8, b"c")]}
        return [row for n in sorted(note_ids) for row in table.get(n, [])]

    assert reads.note_chunk_codes([8, 7, 9, 8], vectors) == [(80, 8, b"c"), (70, 7, b"a"), (71, 7, b"b")]
    assert reads.note_chunk_codes([7, 9], vectors) == [(70, 7, b"a"), (71, 7, b"b")]
    assert vectors_asked == [[8, 7, 9]]  # each note read once, one without chunks too


def test_state_reads_start_again_past_their_limit(monkeypatch):
    monkeypatch.setattr(StateReads, "LIMIT", 4)
    reads = StateReads()
    asked: list[list[int]] = []

    def note_ids(ids: list[int]) -> dict[int, int]:
        asked.append(ids)
        return {i: i * 10 for i in ids}

    assert reads.chunk_note_ids([1, 2, 3], note_ids) == {1: 10, 2: 20, 3: 30}
    assert reads.chunk_note_ids([3, 4], note_ids) == {3: 30, 4: 40}  # 4 entries: held
    assert reads.chunk_note_ids([5, 1], note_ids) == {5: 50, 1: 10}  # 6: started again
    assert len(reads._note_of) == 2
    assert asked == [[1, 2, 3], [4], [5, 1]]
    assert reads.out_degrees(list(range(6)), note_ids) == {i: i * 10 for i in range(1, 6)}
    assert len(reads._degree) == 6  # one query's notes are all held, however many


def test_state_reads_rows_start_again_past_their_limit(monkeypatch):
    monkeypatch.setattr(StateReads, "ROWS_LIMIT", 3)
    reads: StateReads[str] = StateReads()
    asked: list[list[int]] = []

    def rows(ids: list[int]) -> dict[int, str]:
        asked.append(ids)
        return {i: f"row {i}" for i in ids}

    assert reads.chunk_rows([1, 2], rows) == {1: "row 1", 2: "row 2"}
    assert reads.chunk_rows([2, 3], rows) == {2: "row 2", 3: "row 3"}  # 3 entries: held
    assert reads.chunk_rows([4, 1], rows) == {4: "row 4", 1: "row 1"}  # 4: started again
    assert sorted(reads._rows) == [1, 4]
    assert asked == [[1, 2], [3], [4, 1]]


def test_state_reads_vectors_start_again_past_their_limit(monkeypatch):
    monkeypatch.setattr(StateReads, "CODES_LIMIT", 4)
    reads = StateReads()
    asked: list[list[int]] = []

    def vectors(note_ids: list[int]) -> list[tuple[int, int, bytes]]:  # note n has n chunks
        asked.append(note_ids)
        return [(10 * n + i, n, b"v") for n in sorted(note_ids) for i in range(n)]

    assert len(reads.note_chunk_codes([1, 2], vectors)) == 3
    assert len(reads.note_chunk_codes([2, 1], vectors)) == 3  # held
    assert [r[0] for r in reads.note_chunk_codes([2, 3], vectors)] == [20, 21, 30, 31, 32]  # 6 rows: started again
    assert sorted(reads._codes) == [2, 3] and reads._codes_held == 5  # this call's notes, as held or read
    assert asked == [[1, 2], [3]]
    assert len(reads.note_chunk_codes([1], vectors)) == 1
    assert sorted(reads._codes) == [1] and reads._codes_held == 1
    assert asked == [[1, 2], [3], [1]]


def test_a_note_changed_between_two_asks_is_answered_as_it_now_is(vault, monkeypatch):
    """The vectors held across queries are of one state of the index: a note indexed again
    between two asks of one process is scored by its new chunks, as when nothing is held."""
    query = "tide tables of the harbour"
    recaller = open_recaller(vault, update=False)
    try:
        before = recaller.ask(query, "hybrid+ppr", SETTINGS)
        assert "Tide Tables.md" in [c.path for c in before.results]
        write(vault, "Tide Tables.md", "# Tide Tables\n\nRewritten: the harbour's tide tables for spring.\n")
        index_vault(vault, progress=False)  # another connection's commit: the note's chunks are new
        after = recaller.ask(query, "hybrid+ppr", SETTINGS)
        with monkeypatch.context() as m:  # the same ask with nothing held from one query to the next
            m.setattr(IndexStore, "one_query", lambda store: contextlib.nullcontext())
            expected = recaller.ask(query, "hybrid+ppr", SETTINGS)
    finally:
        recaller.close()
    assert _results(after) == _results(expected)
    assert [c.text for c in after.results] == [c.text for c in expected.results]
    assert _results(after) != _results(before)


def test_queries_of_one_state_read_each_notes_path_and_chunk_count_once(vault, monkeypatch):
    """Which path and title a note has (ties, the bridge and PageRank lanes' via) and how many
    chunks it has (the dense and PageRank lanes' discount of long notes) are read once while
    the index is unchanged, and afresh once it changed."""
    notes: Counter[int] = Counter()
    counted: Counter[int] = Counter()
    read_brief, read_counts = IndexStore._read_notes_brief, IndexStore._read_note_chunk_counts

    def brief(store, note_ids):
        notes.update(note_ids)
        return read_brief(store, note_ids)

    def counts(store, note_ids):
        counted.update(note_ids)
        return read_counts(store, note_ids)

    monkeypatch.setattr(IndexStore, "_read_notes_brief", brief)
    monkeypatch.setattr(IndexStore, "_read_note_chunk_counts", counts)
    recaller = open_recaller(vault, update=False)
    try:
        store = recaller.store
        note_ids = [n for (n,) in store.conn.execute("SELECT id FROM notes ORDER BY id")]
        gone = max(note_ids) + 1
        with store.one_query():
            first = store.notes_brief([*note_ids, gone])
            sizes = store.note_chunk_counts([*note_ids, gone])
        assert sorted(first) == note_ids and sorted(sizes) == note_ids  # a note that is not there: left out
        with store.one_query():
            assert store.notes_brief([gone, *reversed(note_ids)]) == first
            assert store.note_chunk_counts(note_ids) == sizes
        assert max(notes.values()) == 1 and max(counted.values()) == 1  # nothing read again
        store.conn.execute("UPDATE notes SET title = 'Retitled' WHERE id = ?", (note_ids[0],))
        store.conn.execute("DELETE FROM chunks WHERE note_id = ?", (note_ids[1],))
        with store.one_query():  # changed by this connection: read afresh
            assert store.notes_brief([note_ids[0]])[note_ids[0]][1] == "Retitled"
            assert note_ids[1] not in store.note_chunk_counts(note_ids)
        store.conn.rollback()
    finally:
        recaller.close()


def test_each_notes_best_row_is_the_one_a_row_by_row_pass_picks():
    """``ChunkVectors`` picks each note's best chunk in numpy: the same rows, scores and order of
    notes as the pass row by row, whose first of equal rows wins; rows of a note need not be
    together (a past view adds its past chunks last), and a NaN score is read row by row."""
    import numpy as np

    from brain.recall import dense

    rng = np.random.default_rng(7)
    for trial in range(200):
        rows = int(rng.integers(1, 40))
        vectors = dense.ChunkVectors.__new__(dense.ChunkVectors)
        vectors.note_ids = [int(n) for n in rng.integers(1, 9, rows)]
        vectors.chunk_ids = list(range(100, 100 + rows))
        # few distinct values: many ties, within a note and across notes
        vectors.matrix = rng.integers(-2, 3, (rows, 3)).astype(np.float32) / 4
        vector = np.array([1.0, 0.5, -0.25], dtype=np.float32)
        if trial % 20 == 0:
            vectors.matrix[rows // 2] = np.nan
        scores = (vectors.matrix @ vector).tolist()
        expected = dense._best_rows_one_by_one(vectors.note_ids, scores)
        got = vectors._best_rows(vector)
        assert repr(list(got.items())) == repr(list(expected.items()))  # a NaN is not == itself
        assert all(type(row) is int and type(score) is float for row, score in got.values())


def test_what_a_warm_process_keeps_stays_within_a_few_questions_reads():
    """A warm process keeps the reads of its last few questions, not of hundreds: at 20,000
    notes, the caps before (~57 MB) added a fifth to the peak RSS of a process that asked 200
    fresh questions, for no CPU saved (``bench/query_reads_cost.py``): what they earn is a
    question asked again soon after.
    Each map filled past its limit by questions' worth of rows as large as the real vaults'
    (a chunk row ~1.7 KB, a chunk's vector 386 bytes) holds under 10 MB at any time (~7 MB;
    the caps before: 24 MB after 25 questions, more after more)."""
    reads: StateReads[tuple] = StateReads()

    def rows(ids: list[int]) -> dict[int, tuple]:
        return {
            i: (i, i // 5, f"area/note-{i // 5:06d}.md", f"Note {i // 5}", "Details", f"{i:08d}" + "w" * 1400, None)
            for i in ids
        }

    def codes(note_ids: list[int]) -> list[tuple[int, int, bytes]]:
        return [(5 * n + c, n, bytes([c]) * 386) for n in note_ids for c in range(5)]

    def ints(ids: list[int]) -> dict[int, int]:
        return {i: i + 1_000_000 for i in ids}

    def briefs(ids: list[int]) -> dict[int, tuple[str, str]]:
        return {i: (f"area/note-{i:06d}.md", f"Note {i}") for i in ids}

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for question in range(25):  # ~400 chunk rows, ~220 notes' vectors, ~540 chunks' notes a question
            start = question * 1000
            reads.chunk_rows(range(start, start + 400), rows)
            reads.note_chunk_codes(range(start, start + 220), codes)
            reads.chunk_note_ids(range(start, start + 540), ints)
            reads.out_degrees(range(start, start + 240), ints)
            reads.notes_brief(range(start, start + 140), briefs)
            reads.note_chunk_counts(range(start, start + 240), ints)
        held = tracemalloc.get_traced_memory()[1] - before  # the most it held at once
    finally:
        tracemalloc.stop()
    assert held < 10 * 2**20, f"{held / 2**20:.1f} MB held"
    assert len(reads._rows) >= 400 and reads._codes_held >= 1100  # the last question's, at least
