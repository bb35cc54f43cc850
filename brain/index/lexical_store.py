"""The index's lexical SQL: FTS5's table (``chunks_fts``: its tokenizer, made anew, filled from the
chunks a batch at a time under bulk settings, its structure and totals read from its records, its
merges run a step at a time) and the reads and writes of brain's own postings (``postings.py``:
the chunks as FTS5 holds them, the ``postings_log`` of changes since a base, a base installed or
cleared), and the BM25 ``fts_hits`` over the present or the past chunks.

``LexicalStore`` is a parent of ``IndexStore`` (every ``store.add_to_lexical(...)`` is the
store's), as ``HistoryStore`` is, and holds nothing of its own but the store's connection and
folder. Part of the store: its SQL is the store's (tests/test_architecture.py, ``STORE``); it
never imports store.py.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .files import INDEX_FILE
from .history_store import _marks, _parts
from .schema import DEFAULT_FTS_TOKENIZER, REFILL_FTS, create_chunks_fts, create_past_fts, remake_past_fts

log = logging.getLogger("brain")

# FTS5's limit on the terms it holds before writing a segment (``add_to_lexical``): its default,
# and what a batch of at least _FTS_BULK_CHUNKS chunks gets (4,096 chunks of ~1 KB: under 16 MB).
_FTS_HASH = 1024 * 1024
_FTS_BULK_HASH = 64 * 1024 * 1024
_FTS_BULK_CHUNKS = 512
_FTS_AUTOMERGE = 4  # FTS5's default
_FTS_BULK_AUTOMERGE = 16


class LexicalStore:
    """The lexical index's SQL, on the store's connection (``IndexStore`` inherits it)."""

    conn: sqlite3.Connection
    directory: Path

    if TYPE_CHECKING:  # the store's own, which these call (``IndexStore`` defines them)

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def get_meta(self, key: str, default: str | None = None) -> str | None: ...
        def set_meta(self, key: str, value: object) -> None: ...
        def index_id(self) -> str | None: ...
        def has_chunks(self) -> bool: ...

    def fts_tokenizer(self) -> str:
        """The tokenizer chunks_fts was created with (indexes from before the option: unicode61)."""
        return self.get_meta("fts_tokenizer") or DEFAULT_FTS_TOKENIZER

    def take_fts_tokenizer(self, wanted: str) -> None:
        """An index with no chunks yet takes the setting (``BRAIN_FTS_TOKENIZER``), its past's
        table too: at its first build, and a rebuild's before the history is carried into it, so
        those past chunks are indexed once, in the new tokenizer. Taken after, they were indexed
        as they came in (unicode61's table) and all again here (vaultofknowledge's 6,588 past
        chunks: 13,287 FTS5 documents written, bench/past_fts_rebuild.py)."""
        if self.fts_tokenizer() != wanted and not self.has_chunks():
            with self.transaction():
                self.recreate_fts(wanted)

    def recreate_fts(self, tokenizer: str) -> None:
        """Create chunks_fts and the past's chunk_history_fts anew with ``tokenizer`` and refill
        them; inside a transaction (``take_fts_tokenizer``). Past chunks indexed
        again here are logged with the time and CPU it took.

        The triggers name the tables, not their tokenizer, so they keep working on the new ones.
        """
        self.conn.execute("DROP TABLE chunks_fts")
        self.conn.execute(create_chunks_fts(tokenizer))
        self.conn.execute(REFILL_FTS)
        started, cpu = time.perf_counter(), time.process_time()
        remake_past_fts(self.conn, tokenizer)
        past = self.conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
        if past:
            log.info(
                "past chunks' search index made again with the %s tokenizer: %d past chunks in %.2f s (%.2f s CPU)",
                tokenizer,
                past,
                time.perf_counter() - started,
                time.process_time() - cpu,
            )
        self.set_meta("fts_tokenizer", tokenizer)

    def remake_chunks_fts(self) -> None:
        """Create chunks_fts again, empty, after a table of it was dropped (what remains of it
        goes with it); inside a transaction, ``rebuild_search_indexes`` then fills it."""
        self.conn.execute("DROP TABLE IF EXISTS chunks_fts")
        self.conn.execute(create_chunks_fts(self.fts_tokenizer()))

    def remake_past_fts(self) -> None:
        """Create chunk_history_fts again, empty, with the index's tokenizer, as ``remake_chunks_fts``."""
        self.conn.execute("DROP TABLE IF EXISTS chunk_history_fts")
        self.conn.execute(create_past_fts(self.fts_tokenizer()))

    def add_to_lexical(self, first: int, last: int) -> None:
        """The chunks with ids ``first`` to ``last`` into chunks_fts, in one statement.

        Here, not from a trigger (schema.py m009_compact_chunks); and for many notes at once where
        the writer can: SQLite runs each statement in a savepoint, at which FTS5 writes out the
        terms it holds as a new segment (SQLite 3.40), so one statement a note made a segment a
        note, merged again and again (a first build spent 40% of its time here).

        FTS5 also writes a segment each time the terms it holds pass its ``hashsize`` (1 MB): a
        first build's batch of 4,096 chunks made five, each merged again and again later. For a batch
        that large the limit is raised for the statement and put back after, in the same
        transaction (100,000 notes: chunks_fts filled in 25 CPU seconds, not 34; the same index).
        So is its ``automerge`` (4 segments of a level merged into one of the next): at 16, half
        as many levels, each segment merged half as often (20,000 notes: 5.3-5.6 CPU seconds
        filling chunks_fts, 3.8 so; its searches as fast, 27-32 ms each against 32).
        """
        bulk = last - first + 1 >= _FTS_BULK_CHUNKS
        if bulk:
            self._fts_settings(_FTS_BULK_HASH, _FTS_BULK_AUTOMERGE)
        self.conn.execute(
            "INSERT INTO chunks_fts (rowid, title, heading, text)"
            " SELECT id, title, heading, text FROM chunks_fts_source WHERE id BETWEEN ? AND ?",
            (first, last),
        )
        if bulk:
            self._fts_settings(_FTS_HASH, _FTS_AUTOMERGE)

    def _fts_settings(self, hashsize: int, automerge: int) -> None:
        for name, value in (("hashsize", hashsize), ("automerge", automerge)):
            self.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES (?, ?)", (name, value))

    def fts_row_count(self) -> int:
        """Rows of the BM25 index, the count bm25() takes its IDF from: read from FTS5's averages
        record, not counted (a count of 500,000 chunks is ~26 ms, paid again after every write).
        What the lexical lanes measure a term's share by, and a search's size."""
        return self.fts_totals()[0]

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    @contextmanager
    def postings_snapshot(self) -> Iterator[tuple[int, int]]:
        """One read transaction for building the postings: (the postings_log's last seq, the
        chunks' last id) at its start; ``postings_source`` and ``fts_column_counts`` inside
        read the same state."""
        self.conn.execute("BEGIN")
        try:
            yield self._sequence("postings_log"), self._sequence("chunks")
        finally:
            self.conn.execute("ROLLBACK")

    def _sequence(self, table: str) -> int:
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
        return int(row[0]) if row else 0

    def postings_source(self, after: int = 0, batch: int = 20_000) -> Iterator[list[tuple[int, str, str, str, int]]]:
        """The chunks past id ``after`` as FTS5 holds them, by id, ``batch`` at a time (``postings_rows``)."""
        while rows := self.postings_rows(after, batch):
            yield rows
            after = rows[-1][0]

    def postings_rows(self, after: int, limit: int) -> list[tuple[int, str, str, str, int]]:
        """Up to ``limit`` chunks past id ``after`` as FTS5 holds them, by id: (id, title,
        heading, text, its tokens over all columns as FTS5 counted them: its docsize record)."""
        rows = self.conn.execute(
            "SELECT s.id, s.title, s.heading, s.text, d.sz FROM chunks_fts_source s"
            " LEFT JOIN chunks_fts_docsize d ON d.id = s.id WHERE s.id > ? ORDER BY s.id LIMIT ?",
            (after, limit),
        )
        return [(r[0], r[1] or "", r[2] or "", r[3] or "", _docsize_total(r[4])) for r in rows]

    def postings_unchanged(self, log_at: int, last_chunk: int, count: int) -> bool:
        """Whether the ``count`` chunks up to id ``last_chunk`` read at log position ``log_at``
        are still as read: the log names none of them since, and all are still there."""
        logged = self.conn.execute(
            "SELECT 1 FROM postings_log WHERE seq > ? AND chunk_id <= ? LIMIT 1", (log_at, last_chunk)
        ).fetchone()
        present = self.conn.execute("SELECT count(*) FROM chunks WHERE id <= ?", (last_chunk,)).fetchone()[0]
        return logged is None and int(present) == count

    def fts_column_counts(self) -> list[tuple[str, str, int, int]]:
        """(term, column, chunks holding it there, its hits there) for every term of chunks_fts."""
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab_col USING fts5vocab(main, 'chunks_fts', 'col')"
        )
        return [(r[0], r[1], int(r[2]), int(r[3])) for r in self.conn.execute("SELECT * FROM temp.chunks_vocab_col")]

    def fts_source_rows(self, chunk_ids: Sequence[int]) -> list[tuple[int, str, str, str]]:
        """(id, title, heading, text) as FTS5 holds them, for those of ``chunk_ids`` that exist."""
        out: list[tuple[int, str, str, str]] = []
        for part in _parts(chunk_ids):
            rows = self.conn.execute(
                f"SELECT id, title, heading, text FROM chunks_fts_source WHERE id IN ({_marks(part)})", part
            )
            out.extend((r[0], r[1] or "", r[2] or "", r[3] or "") for r in rows)
        return out

    def postings_changes(self, log_at: int, last_chunk: int) -> dict[int, int]:
        """Chunks changed since the postings were read at (log seq, last chunk id): each with
        the last seq naming it, 0 for a chunk added since and not logged."""
        changed = dict.fromkeys(
            (r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE id > ?", (last_chunk,))), 0
        )
        rows = self.conn.execute(
            "SELECT chunk_id, max(seq) FROM postings_log WHERE seq > ? GROUP BY chunk_id", (log_at,)
        )
        changed.update((r[0], r[1]) for r in rows)
        return changed

    def postings_change_count(self, log_at: int, last_chunk: int) -> int:
        """How many changes (log rows, chunks added) since the postings were read."""
        logged = self.conn.execute("SELECT count(*) FROM postings_log WHERE seq > ?", (log_at,)).fetchone()[0]
        added = self.conn.execute("SELECT count(*) FROM chunks WHERE id > ?", (last_chunk,)).fetchone()[0]
        return int(logged) + int(added)

    def postings_state(self) -> tuple[str | None, str | None, str | None]:
        """(the postings' stamp, how many times they were cleared, the index's id): read with a
        base, and unchanged when it is installed (``install_postings``)."""
        return self.get_meta("postings_stamp"), self.get_meta("postings_cleared"), self.index_id()

    def database_inode(self) -> int | None:
        """The inode at this index's database path now: another once a rebuild swapped a new
        index in (this connection still reads the one it opened)."""
        try:
            return os.stat(self.directory / INDEX_FILE).st_ino
        except OSError:
            return None

    def install_postings(
        self, stamp: str, log_at: int, read_as: tuple[str | None, str | None, str | None], place: Callable[[], None]
    ) -> bool:
        """The postings file read at ``log_at`` put in place (``place``) and named by the
        database, which forgets the log up to it: in one write transaction, so no other writer
        comes between. Only when the postings' state is still ``read_as``: a base stamped or
        the postings cleared since (their log dropped with changes this base lacks) or another
        index mean it would be stale; False, and nothing done."""
        with self.transaction():
            if self.postings_state() != read_as:
                return False
            place()
            self.set_meta("postings_stamp", stamp)
            self.conn.execute("DELETE FROM postings_log WHERE seq <= ?", (log_at,))
        return True

    def clear_postings(self) -> None:
        """No postings: their stamp and log dropped, and the clear counted (a base read before
        it lacks the changes the log held: ``install_postings`` refuses it)."""
        if (
            self.get_meta("postings_stamp") is None
            and not self.conn.execute("SELECT 1 FROM postings_log LIMIT 1").fetchone()
        ):
            return
        with self.transaction():
            self.conn.execute("DELETE FROM meta WHERE key = 'postings_stamp'")
            self.conn.execute("DELETE FROM postings_log")
            self.set_meta("postings_cleared", int(self.get_meta("postings_cleared") or 0) + 1)

    def fts_levels(self) -> list[tuple[int, list[int]]]:
        """FTS5's segments, level by level from 0: (how many of them an incremental merge under
        way takes, each segment's leaf pages, oldest first). Read from its structure record
        (``chunks_fts_data`` row 10: a 4-byte cookie, then varints); none for the V2 format of
        contentless-delete tables, which brain does not make."""
        row = self.conn.execute("SELECT block FROM chunks_fts_data WHERE id = 10").fetchone()
        if row is None or not row[0] or len(row[0]) < 5 or bytes(row[0][4:8]) == b"\xff\x00\x00\x01":
            return []
        values = _varints(bytes(row[0][4:]))
        try:
            levels, at = values[0], 3  # levels, segments, the write counter
            out: list[tuple[int, list[int]]] = []
            for _ in range(levels):
                merging, count = values[at], values[at + 1]
                at += 2
                pages: list[int] = []
                for _ in range(count):
                    pages.append(values[at + 2] - values[at + 1] + 1)  # id, first leaf, last leaf
                    at += 3
                out.append((merging, pages))
        except IndexError:  # a record of another shape: no levels rather than a wrong answer
            return []
        return out

    def fts_merge_step(self, pages: int) -> bool:
        """About ``pages`` leaf pages of FTS5's own merging (its ``merge`` command: the merge
        under way first, else the level with the most segments, from ``usermerge``, 4), in one
        write transaction; False when there was nothing to merge."""
        with self.transaction():
            before = self.conn.total_changes
            self.conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('merge', ?)", (pages,))
            return self.conn.total_changes - before >= 2  # FTS5's documented sign that it merged

    def fts_totals(self) -> tuple[int, int]:
        """(rows, tokens over all columns) of the present FTS table, as BM25 reads them: from
        FTS5's averages record (rowid 1 of its data table: varints, the row count, then each
        column's token total)."""
        row = self.conn.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
        if row is None or not row[0]:
            return 0, 0
        values = _varints(bytes(row[0]))
        return (values[0], sum(values[1:])) if values else (0, 0)

    def fts_hits(self, expression: str, weights: Sequence[float], *, past: bool) -> Iterator[tuple[int, float]]:
        """Every (chunk id, BM25 score, higher is better) for an FTS5 MATCH expression, best first,
        over the current chunks or (``past``) the past ones; read lazily, so a caller that
        filters can stop early."""
        table = "chunk_history_fts" if past else "chunks_fts"
        cursor = self.conn.execute(
            f"SELECT rowid, bm25({table}, ?, ?, ?) AS rank FROM {table} WHERE {table} MATCH ? ORDER BY rank",
            (*weights, expression),
        )
        try:
            while rows := cursor.fetchmany(256):
                yield from ((r[0], -float(r[1])) for r in rows)
        finally:
            cursor.close()


def _docsize_total(blob: bytes | None) -> int:
    """A chunk's tokens over all columns, from its FTS5 docsize record (a varint a column; most
    under 128, one byte each)."""
    if not blob:
        return 0
    return sum(blob) if max(blob) < 0x80 else sum(_varints(blob))


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (big-endian, 7 bits a byte, a ninth byte of 8), as FTS5 writes them."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out
