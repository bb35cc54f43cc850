"""The per-vault index database, and the only code that knows its SQL.

``IndexStore`` owns every statement on ``index.db``, reads and writes, as typed methods:
notes, chunks with their vectors, links, the FTS5 lexical table, names, neighbours. SQLite is
the source of truth. Each chunk's vector is stored beside it, so the FAISS file
(``vectors.py``) is a derived cache that can always be rebuilt without the model; a
``vectors_version`` counter in ``meta`` says which state the FAISS file must match. The
schema and its migrations are in ``schema.py``; ``health.py`` turns failures on the database
into one-line ``BrainError``s (``index_errors``).
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .. import config
from ..links import alias_key, key_stem, link_stem, note_keys
from ..migrations import has_table
from . import health, scan_snapshot, store_open
from .connections import file_identity, rollback
from .files import INDEX_FILE
from .fts_search import FtsSearch
from .health import (
    DERIVED_TABLES,
    SEARCH_INDEX_TABLES,
    is_not_writable,
    missing_table_message,
    missing_tables,
)
from .history_store import (  # what both use, and the names the rest of brain imports from here
    NAMES_CLOCK,
    RELOAD,
    HistoryStore,
    StoredVector,
    _float32,
    _marks,
    _parts,
    _stored,
    dumps,
)
from .history_store import EdgeRow as EdgeRow  # brain imports the rows from the store
from .history_store import VersionRow as VersionRow
from .lexical_store import LexicalStore
from .query_reads import StateReads
from .scan_snapshot import Snapshot
from .schema import (
    INDEX_MIGRATIONS,
    searched,
    stem_hash,
)
from .upgrades import refuse_newer

if TYPE_CHECKING:
    import numpy as np

    from ..links import Link
    from ..notes import Note

log = logging.getLogger("brain")

_T = TypeVar("_T")
_Store = TypeVar("_Store", bound="IndexStore")


class ChunkRow(NamedTuple):
    """A chunk with its note's path, title and date (a tuple: a query builds a few hundred, and
    a frozen dataclass's, field by field, were 6% of a warm ask's CPU on the mini-benchmark)."""

    id: int
    note_id: int
    path: str
    title: str
    heading: str
    text: str
    date: str | None


@dataclass(frozen=True)
class NoteRow:
    id: int
    path: str
    title: str
    size: int
    mtime_ns: int
    hash: str


@dataclass(frozen=True)
class SkipRecord:
    reason: str
    detail: str
    size: int
    mtime_ns: int


VAULT_KEY = "vault_path"  # meta: the vault's resolved path, written by every completed run
MOVED_FROM_KEY = "moved_from"  # meta: the path a take-over moved the index from (``moved.py``)


def _recorded(database: Path, sample: int) -> tuple[str | None, list[str], str | None] | None:
    """What the index ``database`` records of its vault, read-only: its path (None: made before
    brain wrote one), up to ``sample`` note paths and the path a take-over moved it from; None
    when it cannot be read."""
    try:
        conn = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, timeout=1.0)
    except (sqlite3.Error, ValueError):
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (VAULT_KEY,)).fetchone()
        paths = [r[0] for r in conn.execute("SELECT path FROM notes ORDER BY id LIMIT ?", (sample,))]
        before = conn.execute("SELECT value FROM meta WHERE key = ?", (MOVED_FROM_KEY,)).fetchone()
        return (str(row[0]) if row and row[0] else None), paths, (str(before[0]) if before else None)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def recorded_vault(database: Path, sample: int) -> tuple[str, list[str], str | None] | None:
    """The vault path, up to ``sample`` note paths and the path a take-over moved it from that
    the index ``database`` recorded, read-only (``moved.py``: a vault moved or renamed); None
    when it records no path (made before brain wrote one) or cannot be read."""
    recorded = _recorded(database, sample)
    if recorded is None or recorded[0] is None:
        return None
    return recorded[0], recorded[1], recorded[2]


def record_moved(database: Path, vault: str, moved_from: str) -> None:
    """Record in the index ``database`` that its vault is ``vault`` now, moved from ``moved_from``
    (a take-over, before it renames the folder). ``sqlite3.Error`` when it cannot be written."""
    conn = sqlite3.connect(database, timeout=10.0)
    try:
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(VAULT_KEY, vault), (MOVED_FROM_KEY, moved_from)],
            )
    finally:
        conn.close()


def unrecorded_notes(database: Path, sample: int) -> list[str] | None:
    """Up to ``sample`` note paths of the index ``database`` when it records no vault path (made
    by a brain before it recorded one, and not indexed since), read-only; else None."""
    recorded = _recorded(database, sample)
    return recorded[1] if recorded is not None and recorded[0] is None else None


class IndexStore(LexicalStore, HistoryStore):
    """One vault's index database. Open with ``IndexStore.open(index_dir)``."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        directory: Path,
        *,
        identity: tuple[int, int] | None,
        readonly: bool = False,
        reader: Callable[[], sqlite3.Connection] | None = None,
        why_readonly: str | None = None,
    ):
        """``identity``: of the file ``conn`` opened (``open_unswapped``'s), None for none: not a
        stat made now, which a rebuild's swap since the open gave the new file's (``still_at_its_path``).
        ``reader`` opens another connection to the database as this one's (for a large BM25
        search in parts, ``fts_search``: ``FtsSearch``); None: searches are never split."""
        self.conn = conn
        self.directory = directory
        self.readonly = readonly
        # What a reader says of changes it cannot index: the folder read-only, or no room left.
        self.why_readonly = why_readonly or f"the index folder {directory} is read-only"
        self._identity = identity
        self.recorded_again = False  # ``open(rerecord=True)`` made the record of the migrations again
        self._cache: dict[str, object] = {}  # what recall reads often and changes rarely
        self._cache_key: tuple[int, int] | None = None
        self._written_once: set[str] | None = None  # in a ``transaction``: meta keys written once in it
        self._fts = FtsSearch(self, reader)  # the BM25 searches and their readers
        self._state_reads: StateReads[ChunkRow] | None = None  # inside ``one_query``: the state's
        # the migrations recorded when ``open`` upgraded it: one more recorded since is a newer
        # brain's upgrade under this open store (a server that outlived an upgrade)
        self._migrations_seen: int | None = None
        self.newer: list[str] = []  # a newer brain's migrations, recorded in it (read-only then)

    def _share(self, other: IndexStore) -> None:
        """Read through ``other``'s connection: for views over the same database (a past slice,
        ``recall/past.py``), which then own it (closing the view closes it, and its readers)."""
        self.conn, self.directory, self.readonly = other.conn, other.directory, other.readonly
        self.why_readonly = other.why_readonly
        self._identity = other._identity
        self._cache, self._cache_key = {}, None
        self._written_once = None
        self._fts = other._fts
        self._state_reads = None

    @contextmanager
    def one_query(self) -> Iterator[None]:
        """Within it, each chunk's row, each note's chunk vectors, each chunk's note and each
        note's out-degree are read once while the database is unchanged (``query_reads``), across
        queries: the lanes of one query, and the queries of a warm process, ask for many of the
        same. Re-entered, the outer one holds."""
        if self._state_reads is not None:
            yield
            return
        lasting = self._unchanged_cache().setdefault("state_reads", StateReads())
        assert isinstance(lasting, StateReads)
        self._state_reads = lasting
        try:
            yield
        finally:
            self._state_reads = None

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One read transaction: what is read within it is of one state of the index (inside
        a transaction already, that one's)."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("ROLLBACK")

    @classmethod
    def open(
        cls,
        directory: Path,
        *,
        create: bool = True,
        readonly_ok: bool = False,
        rerecord: bool = False,
        warn_newer: bool = True,
    ) -> IndexStore:
        """Open (creating and migrating as needed) the index database in ``directory``
        (``store_open.open_store``: ``rerecord``, ``readonly_ok`` and ``warn_newer`` are its)."""
        return store_open.open_store(
            cls, directory, create=create, readonly_ok=readonly_ok, rerecord=rerecord, warn_newer=warn_newer
        )

    @classmethod
    def in_memory(cls, directory: Path) -> IndexStore:
        """An empty index that is never saved: what `status` reads before any `brain index`."""
        return store_open.in_memory(cls, directory)

    @classmethod
    def open_snapshot(cls, directory: Path, *, split_searches: bool = False) -> IndexStore:
        """A reader pinned to the state committed when it opens, until ``close()``
        (``store_open.open_snapshot``: ``split_searches`` is its)."""
        return store_open.open_snapshot(cls, directory, split_searches=split_searches)

    def restart_snapshot(self) -> None:
        """Start this snapshot's read transactions again (its own and its BM25 readers'), on the
        state committed now. The caller makes sure that state is the one they held (no commit
        since, and none can come: it holds the write lock): a server folding the WAL in
        (``server.service.fold_wal``), which no reader may keep a place in."""
        store_open.restart_reads([self.conn, *self._fts.pinned_readers()])

    note_count_at = staticmethod(health.note_count_at)
    history_at = staticmethod(health.history_at)

    def close(self) -> None:
        self._fts.close()
        self.conn.close()

    def __enter__(self: _Store) -> _Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def still_at_its_path(self) -> bool:
        """False once another database took this one's place (``--rebuild`` swapped one in)."""
        return self._identity is not None and file_identity(self.directory / INDEX_FILE) == self._identity

    def checkpoint(self, *, wait: bool = True) -> bool:
        """Fold the WAL into the database file (before the folder is moved or swapped); False
        when a reader still holds an older state (brain serve's snapshot), which keeps the WAL.
        Without ``wait``, such a reader is not waited for."""
        timeout = self.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        if not wait:
            self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
        return not busy

    def bulk_writes(self) -> None:
        """A larger page cache for this connection, for a run that writes many notes (a first
        build): the indexes over random keys (paths, hashes, link targets) stay in memory rather
        than being read back and spilled between commits. The pages are taken as they are used
        (100,000 notes: the inserts into notes, links, link_history and chunks 33 -> 24 CPU
        seconds; peak RSS 957 -> 1,087 MB)."""
        self.conn.execute(f"PRAGMA cache_size = {-_BULK_CACHE_KB}")

    def is_empty(self) -> bool:
        """No note and no history: nothing a write could have to look up."""
        return not self.conn.execute("SELECT 1 FROM notes LIMIT 1").fetchone() and not self.has_any_version()

    def defer_indexes(self) -> None:
        """For a first build into an empty index: drop the indexes over random keys that none of
        its writes reads (``_DEFERRED_INDEXES``), their SQL recorded in meta ``deferred_indexes`` in
        the same transaction. Each insert kept them in order one row at a time; ``restore_indexes``
        makes each once from the full table, a sort. A run stopped in between (``kill -9``) leaves
        the record, and the next run restores them before it reads anything."""
        with self.transaction():
            rows = self._index_definitions(_DEFERRED_INDEXES)
            if not rows or self.conn.execute("SELECT 1 FROM meta WHERE key = 'deferred_indexes'").fetchone():
                return
            self.set_meta("deferred_indexes", json.dumps([[name, sql] for name, sql in rows]))
            for name, _ in rows:
                self.conn.execute(f"DROP INDEX {name}")

    def _index_definitions(self, names: Sequence[str]) -> list[tuple[str, str]]:
        """(name, SQL) of those of these indexes the database holds."""
        rows = self.conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ({_marks(names)})", list(names)
        )
        return [(r[0], r[1]) for r in rows]

    def restore_indexes(self) -> int:
        """Make again the indexes ``defer_indexes`` dropped, in one transaction; how many it made."""
        if self.get_meta("deferred_indexes") is None:
            return 0
        made = 0
        with self.transaction():
            raw = self.get_meta("deferred_indexes")  # again, under the write lock
            if raw is None:
                return 0
            deferred: list[list[str]] = json.loads(raw)
            present = {name for name, _ in self._index_definitions([name for name, _ in deferred])}
            for name, sql in deferred:
                if name not in present:
                    self.conn.execute(sql)
                    made += 1
            self.conn.execute("DELETE FROM meta WHERE key = 'deferred_indexes'")
        return made

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        self._refuse_newer()
        self._written_once = set()
        try:
            yield self.conn
        except BaseException:
            rollback(self.conn)
            raise
        finally:
            self._written_once = None
        self.conn.execute("COMMIT")

    def unknown_migrations(self) -> list[str]:
        """The migrations recorded in the index that this code lacks: a newer brain upgraded it."""
        return INDEX_MIGRATIONS.unknown(self.conn)

    def _refuse_newer(self) -> None:
        """Inside the write lock: roll back and raise when a newer brain upgraded the index since
        this store opened it (``upgrades.refuse_newer``)."""
        self._migrations_seen = refuse_newer(self.conn, self.directory / INDEX_FILE, self._migrations_seen)

    def _unchanged_cache(self) -> dict[str, object]:
        """A cache that lives while the database is unchanged: by another connection (SQLite's
        ``data_version``) or by this one (its ``total_changes``)."""
        key = (int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.conn.total_changes)
        if key != self._cache_key:
            self._cache, self._cache_key = {}, key
        return self._cache

    # ----- metadata -------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def link_fences(self) -> frozenset[str]:
        """The fence languages the index's links were read with (``meta.link_fences``, comma-separated;
        ``BRAIN_LINK_FENCES`` at the last run)."""
        return frozenset(filter(None, (self.get_meta("link_fences") or "").split(",")))

    def set_meta(self, key: str, value: object) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    def delete_meta(self, key: str) -> None:
        self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def _has_table(self, name: str, schema: str = "main") -> bool:
        return has_table(self.conn, name, schema)

    def remake_derived_tables(self, missing: Collection[str]) -> list[str]:
        """Make again the ``DERIVED_TABLES`` among ``missing`` (a BM25 index as a whole, empty:
        ``rebuild_search_indexes`` then fills it); inside a transaction. Returns the tables made."""
        definitions = INDEX_MIGRATIONS.definitions()
        made = []
        for name in sorted(DERIVED_TABLES.intersection(missing)):
            fts = next((table for table, parts in SEARCH_INDEX_TABLES.items() if name in parts), None)
            if fts is not None:
                if fts in made:
                    continue
                # FTS5 cannot drop a table of its own short of one it reads as it opens
                # ("vtable constructor failed"): that one is made again, as a new index holds it, for the drop
                parts = SEARCH_INDEX_TABLES[fts] - {fts}
                if fts in missing:  # the table itself went: what is left of it is dropped with it
                    for part in sorted(parts.difference(missing)):
                        self.conn.execute(f"DROP TABLE {part}")
                for part in sorted(parts.intersection(missing)) if fts not in missing else []:
                    self.conn.execute(definitions[part][2])
                    for row in _new_fts_rows(part.rsplit("_", 1)[1]):
                        self.conn.execute(f"INSERT INTO {part} VALUES ({_marks(row)})", row)
                if fts == "chunks_fts":  # their tokenizer is the index's own
                    self.remake_chunks_fts()
                else:
                    self.remake_past_fts()
                made.append(fts)
                continue
            self.conn.execute(definitions[name][2])
            # its indexes and triggers went with it (those of other tables that write it stayed)
            for other, (kind, table, sql) in definitions.items():
                if table == name and other != name and kind in ("index", "trigger"):
                    self.conn.execute(sql)
            made.append(name)
        if "postings_log" in made:  # the changes since the base went with it: cleared, as ``clear_postings``
            self.conn.execute("DELETE FROM meta WHERE key = 'postings_stamp'")
            self.set_meta("postings_cleared", int(self.get_meta("postings_cleared") or 0) + 1)
        if "name_changes" in made:  # the next resolution of the links is a full one
            self.conn.execute("DELETE FROM meta WHERE key = 'name_changes_from'")
        if "scan_snapshot_log" in made:  # the snapshot may have missed changes: the next walk stores one
            self.conn.execute("DELETE FROM scan_snapshot")
        return made

    def has_chunks(self) -> bool:
        return self.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    def index_id(self) -> str | None:
        return self.get_meta("index_id")

    def vectors_version(self) -> int:
        return int(self.get_meta("vectors_version", "0") or 0)

    def bump_vectors_version(self) -> None:
        """Call inside the transaction that changes chunks: the FAISS file is now behind.

        The step is random, not one: an index.db restored from a backup beside newer vector
        files, then changed again, would count to the very version those files were saved at
        from other changes, and they would be taken for its own (its new chunks searched with
        vectors of chunks it never had). Once a ``transaction``: no reader sees the steps
        between (a first build wrote the version a note, with a system call for its step)."""
        if self._first_in_transaction("vectors_version"):
            self.set_meta("vectors_version", self.vectors_version() + 1 + secrets.randbelow(1 << 30))

    def _first_in_transaction(self, key: str) -> bool:
        """Whether meta ``key`` is to be written now: the first time a ``transaction`` asks (no
        reader sees the writes after it in the same transaction), and at every call outside one."""
        if self._written_once is None:
            return True
        if key in self._written_once:
            return False
        self._written_once.add(key)
        return True

    # ----- notes ----------------------------------------------------------------------

    def note_rows(self) -> dict[str, NoteRow]:
        rows = self.conn.execute("SELECT id, path, title, size, mtime_ns, hash FROM notes")
        return {r["path"]: NoteRow(r["id"], r["path"], r["title"], r["size"], r["mtime_ns"], r["hash"]) for r in rows}

    def note_stats(self) -> dict[str, tuple[int, int, int]]:
        """path → (note id, size, mtime_ns) of every note (``note_stats_and_snapshot``), all
        decoded."""
        stats, _ = self.note_stats_and_snapshot()
        if not isinstance(stats, scan_snapshot.FolderStats):  # read from the rows
            return stats
        every = stats.as_dict()
        return self.note_stats_afresh()[0] if stats.damaged else every

    def note_stats_and_snapshot(
        self,
    ) -> tuple[dict[str, tuple[int, int, int]] | scan_snapshot.FolderStats, Snapshot | None]:
        """path → (note id, size, mtime_ns) of every note, and the snapshot it was made from
        (which the walk's helper process decodes too), None when it was read from the rows.

        Read from ``scan_snapshot`` when it is there, corrected by ``scan_snapshot_log`` (the
        notes changed since, logged by triggers in the same transaction as the change), in
        one read transaction: exact; each folder decoded when one of its notes is asked for
        (``scan_snapshot.FolderStats``: a folder found damaged then reads as unknown, and
        says so). Else ``note_stats_afresh``.
        """
        own = not self.conn.in_transaction
        if own:
            self.conn.execute("BEGIN")
        try:
            snapshot = self._snapshot()
        finally:
            if own:
                self.conn.execute("COMMIT")
        stats = scan_snapshot.notes(snapshot) if snapshot is not None else None
        if stats is not None:
            return stats, snapshot
        return self.note_stats_afresh()

    def keep_scan_snapshot(self) -> None:
        """Store a scan snapshot from the rows if there is none (``note_stats_afresh``)."""
        if self.conn.execute("SELECT 1 FROM scan_snapshot").fetchone() is None:
            self.note_stats_afresh()

    def note_stats_afresh(self) -> tuple[dict[str, tuple[int, int, int]], Snapshot | None]:
        """The notes' stats read from the rows, and a snapshot of them stored for the next
        caller in place of any (a damaged one), with the log emptied, inside one write
        transaction (so no writer can commit between the read and the store); not when the
        database is read-only or another connection is writing (then the rows are read and
        that is all, and the snapshot is None)."""
        if self.readonly or self.conn.in_transaction or not self._try_begin_immediate():
            return self._stats_from_rows(), None
        try:
            stats = self._stats_from_rows()
            data = scan_snapshot.encode(stats)
            self.conn.execute("INSERT OR REPLACE INTO scan_snapshot (id, data) VALUES (1, ?)", (data,))
            self.conn.execute("DELETE FROM scan_snapshot_log")
        except BaseException:
            rollback(self.conn)
            raise
        self.conn.execute("COMMIT")
        return stats, scan_snapshot.Snapshot(data, [], [])

    def _snapshot(self) -> Snapshot | None:
        """The stored snapshot and its log, with the logged notes' rows now (inside a read
        transaction: of one state); None when there is none."""
        row = self.conn.execute("SELECT data FROM scan_snapshot WHERE id = 1").fetchone()
        if row is None:
            return None
        logged = [(r[0], r[1]) for r in self.conn.execute("SELECT note_id, path FROM scan_snapshot_log")]
        current: list[tuple[str, int, int, int]] = []
        for part in _parts(sorted({note_id for note_id, _ in logged})):
            rows = self.conn.execute(f"SELECT path, id, size, mtime_ns FROM notes WHERE id IN ({_marks(part)})", part)
            current += ((r[0], r[1], r[2], r[3]) for r in rows)
        return scan_snapshot.Snapshot(bytes(row[0]), logged, current)

    def _stats_from_rows(self) -> dict[str, tuple[int, int, int]]:
        rows = self.conn.execute("SELECT path, id, size, mtime_ns FROM notes")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def _try_begin_immediate(self) -> bool:
        """Take the write lock now, or report that someone else holds it (never wait for it)."""
        timeout = self.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        self.conn.execute("PRAGMA busy_timeout = 0")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc) or is_not_writable(exc):
                return False
            raise
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
        return True

    def note_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])

    def unresolved_named(self, ref: str) -> list[tuple[str, str]]:
        """(status, path of the note that writes it) of each link to ``ref`` that leads to no note:
        dangling, or an attachment; any case, with or without ``.md``. Read through the index of
        the links not resolved (m014): a few rows beside every link."""

        def bare(name: str) -> str:
            name = name.strip().casefold()
            return name[:-3] if name.endswith(".md") else name

        want = bare(ref)
        rows = self.conn.execute(
            f"SELECT links.status, notes.path, links.target FROM links JOIN notes ON notes.id = links.source_id "
            f"WHERE links.{_UNRESOLVED} AND links.status IN ('dangling', 'attachment') ORDER BY notes.path"
        ).fetchall()
        return [(status, path) for status, path, target in rows if bare(target) == want]

    def counts(self) -> dict[str, int]:
        one = lambda sql: self.conn.execute(sql).fetchone()[0]
        # Every `brain index` and `brain status` reports these: the links not resolved are
        # counted through their index (m014), the resolved ones as the rest, not by reading
        # 500,000 links (50 ms).
        others = dict(
            self.conn.execute(f"SELECT status, count(*) FROM links WHERE {_UNRESOLVED} GROUP BY status").fetchall()
        )
        return {
            "notes": one("SELECT count(*) FROM notes"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "resolved": one("SELECT count(*) FROM links") - sum(others.values()),
            "dangling": others.get("dangling", 0),
            "attachment": others.get("attachment", 0),
        }

    def aliases_by_path(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        rows = self.conn.execute("SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.id = a.note_id")
        for path, alias in rows:
            out.setdefault(path, []).append(alias)
        return out

    def skipped(self) -> list[dict[str, str]]:
        rows = self.conn.execute("SELECT path, reason, detail FROM skipped ORDER BY path")
        return [dict(r) for r in rows]

    def skip_reason(self, path: str) -> str | None:
        """Why the last run skipped ``path`` (``vault.NOT_DOWNLOADED``, ...); None when it did not."""
        row = self.conn.execute("SELECT reason FROM skipped WHERE path = ?", (path,)).fetchone()
        return None if row is None else str(row[0])

    def skipped_for_content(self) -> dict[str, SkipRecord]:
        """Files skipped after reading them (binary, too large, unreadable), with their stat then."""
        rows = self.conn.execute(
            "SELECT path, reason, detail, size, mtime_ns FROM skipped WHERE size IS NOT NULL AND mtime_ns IS NOT NULL"
        )
        return {r["path"]: SkipRecord(r["reason"], r["detail"], r["size"], r["mtime_ns"]) for r in rows}

    def replace_skipped(self, entries: Iterable[tuple[str, str, str, int | None, int | None]]) -> None:
        """Entries: (path, reason, detail, size, mtime_ns); size and mtime only for content skips."""
        self.conn.execute("DELETE FROM skipped")
        self.conn.executemany(
            "INSERT OR REPLACE INTO skipped (path, reason, detail, size, mtime_ns) VALUES (?, ?, ?, ?, ?)", entries
        )

    # ----- links ----------------------------------------------------------------------

    def outgoing(self, note_id: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT l.*, n.path AS target_path, n.title AS target_title FROM links l "
            "LEFT JOIN notes n ON n.id = l.target_id WHERE l.source_id = ? ORDER BY l.id",
            (note_id,),
        ).fetchall()

    def backlinks(self, note_id: int) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT l.*, n.path AS source_path, n.title AS source_title FROM links l "
            "JOIN notes n ON n.id = l.source_id WHERE l.target_id = ? AND l.source_id != ? ORDER BY l.id",
            (note_id, note_id),
        ).fetchall()

    def note_id(self, path: str) -> int | None:
        row = self.conn.execute("SELECT id FROM notes WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    def note_hashes(self) -> dict[int, str]:
        """note id → content hash, of every note."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return dict(cursor.execute("SELECT id, hash FROM notes").fetchall())

    def note_hash(self, note_id: int) -> str | None:
        row = self.conn.execute("SELECT hash FROM notes WHERE id = ?", (note_id,)).fetchone()
        return row[0] if row else None

    def notes_by_hash(self, note_ids: Sequence[int]) -> dict[str, list[tuple[str, int]]]:
        """content hash → [(path, id)] of these notes, by path (a deleted note whose bytes reappear
        is a rename; several notes may hold the same bytes)."""
        out: dict[str, list[tuple[str, int]]] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(f"SELECT id, path, hash FROM notes WHERE id IN ({_marks(part)})", part)
            for note_id, path, digest in rows:
                out.setdefault(digest, []).append((path, note_id))
        for notes in out.values():
            notes.sort()
        return out

    def note_warnings(self) -> list[tuple[str, list[str]]]:
        """(path, warnings) of every note that had any when it was parsed, by path."""
        rows = self.conn.execute("SELECT path, warnings FROM notes WHERE warnings != '[]' ORDER BY path")
        return [(r[0], json.loads(r[1])) for r in rows]

    # ----- writes (call inside ``transaction()``) ------------------------------------------

    def record_model(
        self, name: str, dim: int, query_prefix: str, passage_prefix: str, backend: str, backend_version: str
    ) -> None:
        """The model the vectors come from, set by the first batch embedded."""
        if self.get_meta("model") is None:
            self.set_meta("model", name)
            self.set_meta("dim", dim)
            self.set_meta("query_prefix", query_prefix)
            self.set_meta("passage_prefix", passage_prefix)
            self.set_meta("backend", backend)
            self.set_meta("backend_version", backend_version)

    def past_warnings(self) -> list[str]:
        """What a view of the past can no longer read (``PastIndex``); the present: nothing."""
        return []

    def touch_note(self, note_id: int, size: int, mtime_ns: int, date: str | None = None) -> bool:
        """Same bytes, new stat: remember the stat so the next scan need not read the file; and
        ``date``, the note's date at that stat (the mtime, for a note whose frontmatter has none),
        on the note and its current version, as a fresh index would have it. Whether the date moved."""
        row = self.conn.execute("SELECT date FROM notes WHERE id = ?", (note_id,)).fetchone()
        self.conn.execute(
            "UPDATE notes SET size = ?, mtime_ns = ?, date = coalesce(?, date) WHERE id = ?",
            (size, mtime_ns, date, note_id),
        )
        if date is None or (row is not None and row[0] == date):
            return False
        self.conn.execute(
            "UPDATE note_versions SET date = ? WHERE note_id = ? AND recorded_to IS NULL", (date, note_id)
        )
        return True

    def write_note(
        self, note: Note, size: int, mtime_ns: int, note_id: int | None = None, *, restore_id: int | None = None
    ) -> int:
        """Insert the note (``note_id`` None) or overwrite the row ``note_id``; with its aliases and tags.

        ``restore_id``: insert under this id, the identity history keeps for a note deleted before.
        """
        values = (
            note.path,
            note.title,
            searched(note.title),
            dumps(note.aliases),
            dumps(note.tags),
            note.date,
            dumps(note.frontmatter),
            size,
            mtime_ns,
            note.content_hash,
            dumps(note.warnings),
            time.time(),
            *note_keys(note.path),
        )
        if note_id is None:
            cursor = self.conn.execute(
                "INSERT INTO notes (path, title, search_title, aliases, tags, date, frontmatter, size, mtime_ns,"
                " hash, warnings, indexed_at, path_key, name_key, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values + (restore_id,),
            )
            note_id = int(cursor.lastrowid or 0)
        else:
            self.conn.execute(
                "UPDATE notes SET path = ?, title = ?, search_title = ?, aliases = ?, tags = ?, date = ?, frontmatter = ?,"
                " size = ?, mtime_ns = ?, hash = ?, warnings = ?, indexed_at = ?, path_key = ?, name_key = ?"
                " WHERE id = ?",
                values + (note_id,),
            )
            self.conn.execute("DELETE FROM aliases WHERE note_id = ?", (note_id,))
            self.conn.execute("DELETE FROM tags WHERE note_id = ?", (note_id,))
        # notes.aliases above and these rows are one list: the names_version triggers watch the
        # former (schema.py m010_name_keys).
        self.conn.executemany(
            "INSERT INTO aliases (note_id, alias, key) VALUES (?, ?, ?)",
            [(note_id, a, alias_key(a)) for a in note.aliases],
        )
        self.conn.executemany("INSERT INTO tags (note_id, tag) VALUES (?, ?)", [(note_id, t) for t in note.tags])
        return note_id

    def replace_links(self, note_id: int, links: Sequence[Link], *, new: bool = False) -> None:
        """The note's links as written, pending resolution (``linking.resolve_links``). ``new``:
        the note's row was just inserted under a fresh id, so it has no links to delete."""
        if not new:
            self.conn.execute("DELETE FROM links WHERE source_id = ?", (note_id,))
        self.conn.executemany(
            "INSERT INTO links (source_id, target, kind, anchor, display, line, status, stem_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
            [
                (
                    note_id,
                    link.target,
                    link.kind,
                    link.anchor,
                    link.display,
                    link.line,
                    _link_stem_hash(link.target, link.kind),
                )
                for link in links
            ],
        )
        self._mark_links_dirty()

    def _mark_links_dirty(self) -> None:
        if self._first_in_transaction("links_dirty"):  # not once a note of a first build
            self.set_meta("links_dirty", 1)

    def replace_chunks(
        self, note_id: int, chunks: Sequence[tuple[int, str, str, bytes]], *, lexical: bool = True, new: bool = False
    ) -> tuple[list[int], list[int]]:
        """The note's chunks, each (ordinal, heading, text, float32 vector bytes), replacing its
        old ones; returns (removed chunk ids, added chunk ids). Bumps ``vectors_version``.

        ``lexical``: add them to chunks_fts now. A writer of many notes passes False and calls
        ``add_to_lexical`` once for all of them before it commits (and before anything could
        delete them or rename their note: chunks_fts must hold a chunk before it is deleted).
        ``new``: the note's row was just inserted under a fresh id, so it has no chunks to delete."""
        removed: list[int] = []
        if not new:
            removed = [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE note_id = ?", (note_id,))]
            self.conn.execute("DELETE FROM chunks WHERE note_id = ?", (note_id,))
        # One statement for all of them: AUTOINCREMENT numbers the rows one after another, so
        # they are the last len(chunks) ids the table handed out.
        self.conn.executemany(
            "INSERT INTO chunks (note_id, ordinal, heading, text, vector, search_heading, search_text)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (note_id, ordinal, heading, text, blob, searched(heading), searched(text))
                for (ordinal, heading, text, _), blob in zip(chunks, _stored([c[3] for c in chunks]))
            ],
        )
        added: list[int] = []
        if chunks:
            last = int(self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunks'").fetchone()[0])
            added = list(range(last - len(chunks) + 1, last + 1))
            if lexical:
                self.add_to_lexical(added[0], added[-1])
        self.bump_vectors_version()
        return removed, added

    def delete_notes(self, note_ids: Sequence[int]) -> list[int]:
        """Delete notes with their chunks, links, aliases and tags; returns the removed chunk ids."""
        removed: list[int] = []
        for part in _parts(note_ids):
            marks = _marks(part)
            removed.extend(r[0] for r in self.conn.execute(f"SELECT id FROM chunks WHERE note_id IN ({marks})", part))
            self.conn.execute(f"DELETE FROM notes WHERE id IN ({marks})", part)
        self.bump_vectors_version()
        self._mark_links_dirty()
        return removed

    def links_dirty(self) -> bool:
        return self.get_meta("links_dirty") == "1"

    def links_to_resolve(
        self, *, every: bool, within: tuple[int, int] | None = None
    ) -> list[tuple[int, int, str, str, int | None, str]]:
        """(link id, source note id, target as written, kind, target id, status): every link, or
        those still pending; ``within``: of the notes whose ids are in this range only."""
        where = [] if every else [f"{_UNRESOLVED} AND status = 'pending'"]  # through links_unresolved
        if within is not None:
            where.append("source_id BETWEEN ? AND ?")  # through links_source
        sql = "SELECT id, source_id, target, kind, target_id, status FROM links"
        sql += f" WHERE {' AND '.join(where)}" if where else ""
        return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in self.conn.execute(sql, within or ())]

    def links_by_source(self, *, every: bool) -> list[tuple[int, int, int]]:
        """(source note id, links, of them pending) of each note with links to resolve (every
        link, or those still pending), by id: what ``linking.resolve_links`` parts them by."""
        where = "" if every else f" WHERE {_UNRESOLVED} AND status = 'pending'"
        sql = f"SELECT source_id, count(*), sum(status = 'pending') FROM links{where} GROUP BY source_id ORDER BY source_id"
        return [(r[0], r[1], r[2]) for r in self.conn.execute(sql)]

    @contextmanager
    def resolution_indexes_dropped(self, updates: int) -> Iterator[None]:
        """``_update_rows``' dropping of the indexes a link's resolution sets, for a resolution
        made in parts whose ``updates`` together are many of the tables' rows (a first build)."""
        dropped: list[tuple[str, str]] = []
        if updates >= _BULK_UPDATE_FROM:
            for table, names in _RESOLUTION_INDEXES.items():
                largest = self.conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0
                if updates * 4 >= largest:
                    dropped += self._index_definitions(names)
        for name, _ in dropped:
            self.conn.execute(f"DROP INDEX {name}")
        yield
        for _, sql in dropped:
            self.conn.execute(sql)

    def set_link_targets(self, updates: Iterable[tuple[int | None, str, int]], names_version: str) -> None:
        """(target note id or None, status, link id) for each link whose resolution changed;
        clears ``links_dirty`` and records, as ``resolver_key``, the ``names_version`` the links were resolved against."""
        self._update_rows("links", "UPDATE links SET target_id = ?, status = ? WHERE id = ?", list(updates))
        self.set_meta("links_dirty", 0)
        if self._written_once is not None:
            self._written_once.discard("links_dirty")  # a change after it in this transaction marks them again
        self.set_meta("resolver_key", names_version)
        # The log of changed names starts again from here (m012_name_changes).
        self.conn.execute("DELETE FROM name_changes")
        self.set_meta("name_changes_from", names_version)

    def _update_rows(self, table: str, statement: str, rows: list[tuple[Any, ...]]) -> None:
        """Run an UPDATE of the columns a link's resolution sets, by row id, for each of ``rows``
        (in a transaction). When they are many of the table's rows (a first build resolves every
        link), the indexes over those columns are dropped first and made again after, from their
        own SQL: sorting once is quicker than moving each row's entries (100,000 notes: the two
        tables' updates 6.6 -> 2.7 s)."""
        largest = self.conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0  # no count: a full pass
        if len(rows) < _BULK_UPDATE_FROM or len(rows) * 4 < largest:
            self.conn.executemany(statement, rows)
            return
        indexes = self._index_definitions(_RESOLUTION_INDEXES[table])
        for name, _ in indexes:
            self.conn.execute(f"DROP INDEX {name}")
        self.conn.executemany(statement, rows)
        for _, sql in indexes:
            self.conn.execute(sql)

    def changed_stems(self, resolved_against: str | None) -> set[str] | None:
        """The stems (``links.key_stem``) of every key a note came, went or moved under since the
        links were resolved against names version ``resolved_against``; None when the log does not
        hold them all (it began later, or overflowed: m012_name_changes; or a key is unknown)."""
        if resolved_against is None or self.get_meta("name_changes_from") != resolved_against:
            return None
        keys = [r[0] for r in self.conn.execute("SELECT key FROM name_changes")]
        if any(key is None for key in keys):  # written by a brain from before m010
            return None
        return {key_stem(key) for key in keys}

    def links_under_stems(self, stems: Iterable[str]) -> list[tuple[int, int, str, str, int | None, str]]:
        """``links_to_resolve`` rows of the links whose keys have one of these stems (and of the
        few others whose stem hashes alike)."""
        out: list[tuple[int, int, str, str, int | None, str]] = []
        for part in _parts(sorted({stem_hash(stem) for stem in stems})):
            rows = self.conn.execute(
                f"SELECT id, source_id, target, kind, target_id, status FROM links WHERE stem_hash IN ({_marks(part)})",
                part,
            )
            out.extend((r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows)
        return out

    def fill_link_stems(self) -> None:
        """Stems for links written without them (by a brain from before m012)."""
        rows = self.conn.execute("SELECT id, target, kind FROM links WHERE stem_hash IS NULL").fetchall()
        self.conn.executemany(
            "UPDATE links SET stem_hash = ? WHERE id = ?", [(_link_stem_hash(r[1], r[2]), r[0]) for r in rows]
        )

    def names_version(self) -> str:
        """Bumped by triggers whenever a note is added, deleted, renamed, or its aliases change:
        all that link resolution depends on besides the links themselves (m010_name_keys)."""
        return self.get_meta("names_version") or "0"

    def note_paths_of(self, note_ids: Iterable[int]) -> dict[int, str]:
        """note id → path, for these notes."""
        out: dict[int, str] = {}
        for part in _parts(sorted(set(note_ids))):
            out.update(self.conn.execute(f"SELECT id, path FROM notes WHERE id IN ({_marks(part)})", part).fetchall())
        return out

    def notes_named(
        self, path_keys: Iterable[str], name_keys: Iterable[str], alias_keys: Iterable[str]
    ) -> dict[str, int]:
        """path → id of every note filed under one of these keys (``links.note_keys``, ``links.alias_key``)."""
        out: dict[str, int] = {}
        for sql, keys in (
            ("SELECT path, id FROM notes WHERE path_key IN ({})", path_keys),
            ("SELECT path, id FROM notes WHERE name_key IN ({})", name_keys),
            ("SELECT n.path, n.id FROM aliases a JOIN notes n ON n.id = a.note_id WHERE a.key IN ({})", alias_keys),
        ):
            for part in _parts(sorted(set(keys))):
                out.update(self.conn.execute(sql.format(_marks(part)), part).fetchall())
        return out

    def aliases_of(self, note_ids: Iterable[int]) -> dict[str, list[str]]:
        """path → aliases of these notes (those that have any), as ``aliases_by_path``."""
        out: dict[str, list[str]] = {}
        for part in _parts(sorted(set(note_ids))):
            rows = self.conn.execute(
                f"SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.id = a.note_id WHERE a.note_id IN ({_marks(part)})",
                part,
            )
            for path, alias in rows:
                out.setdefault(path, []).append(alias)
        return out

    def fill_name_keys(self) -> None:
        """Keys for notes and aliases written without them (by a brain from before m010)."""
        self.conn.executemany(
            "UPDATE notes SET path_key = ?, name_key = ? WHERE id = ?",
            [
                (*note_keys(path), note_id)
                for note_id, path in self.conn.execute(
                    "SELECT id, path FROM notes WHERE path_key IS NULL"  # both or neither: indexed
                ).fetchall()
            ],
        )
        self.conn.executemany(
            "UPDATE aliases SET key = ? WHERE rowid = ?",
            [(alias_key(a), r) for r, a in self.conn.execute("SELECT rowid, alias FROM aliases WHERE key IS NULL")],
        )

    # ----- what recall reads ------------------------------------------------------------------

    def note_paths(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT path FROM notes")}

    def note_ids(self) -> list[int]:
        """Every note id, ascending."""
        return [r[0] for r in self.conn.execute("SELECT id FROM notes ORDER BY id")]

    def note_write_times(self) -> list[tuple[int, float]]:
        """(id, indexed_at) of every note, by id: what ``recall.carry`` compares."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: 100,000 sqlite3.Row objects were half the time
        return cursor.execute("SELECT id, indexed_at FROM notes ORDER BY id").fetchall()

    def embedded_chunks(self, note_id: int) -> tuple[str, str, list[tuple[str, str, StoredVector]]] | None:
        """A note's title, path and chunks as (heading, text, stored vector): what an edit of the
        note can keep of them (a chunk embedded from the same text keeps its vector). None when
        there is no such note."""
        row = self.conn.execute("SELECT title, path FROM notes WHERE id = ?", (note_id,)).fetchone()
        if row is None:
            return None
        chunks = [
            (heading or "", text, StoredVector(blob))
            for heading, text, blob in self.conn.execute(
                "SELECT heading, text, vector FROM chunks WHERE note_id = ?", (note_id,)
            )
            if isinstance(blob, bytes) and isinstance(text, str)
        ]
        return row[0], row[1], chunks

    def titles_of(self, note_ids: Iterable[int] | None = None) -> dict[int, str]:
        """note id → title, of these notes (None: every note)."""
        if note_ids is None:
            return dict(self.conn.execute("SELECT id, title FROM notes").fetchall())
        out: dict[int, str] = {}
        for part in _parts(sorted(set(note_ids))):
            out.update(self.conn.execute(f"SELECT id, title FROM notes WHERE id IN ({_marks(part)})", part).fetchall())
        return out

    def note_titles(self) -> list[tuple[str, str]]:
        """(path, title) of every note, by id."""
        return [(r[0], r[1]) for r in self.conn.execute("SELECT path, title FROM notes ORDER BY id")]

    def alias_pairs(self) -> list[tuple[str, str]]:
        """(path, alias) for every alias of every note, by note id: an order that does not
        depend on which note was written last (two notes may share an alias)."""
        rows = self.conn.execute(
            "SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.id = a.note_id ORDER BY a.note_id, a.rowid"
        )
        return [(r[0], r[1]) for r in rows]

    def note_names(self) -> list[tuple[int, str, str]]:
        """(id, path, title) of every note, by id: what the names lane matches queries against."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: a sqlite3.Row each, then a tuple, was twice the read
        return cursor.execute("SELECT id, path, title FROM notes ORDER BY id").fetchall()

    def note_paths_by_id(self) -> list[tuple[int, str]]:
        """(id, path) of every note, by id: the folders lane's (titles unread: 8.9 vs 11.7 ms CPU at 20,000 notes)."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return cursor.execute("SELECT id, path FROM notes ORDER BY id").fetchall()

    def alias_rows(self) -> list[tuple[int, str]]:
        """(note id, alias) for every alias of every note, by note id."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return cursor.execute("SELECT note_id, alias FROM aliases ORDER BY note_id, rowid").fetchall()

    def notes_brief(self, note_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """note id → (path, title)."""
        if self._state_reads is not None:
            return self._state_reads.notes_brief(note_ids, self._read_notes_brief)
        return self._read_notes_brief(note_ids)

    def _read_notes_brief(self, note_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        out: dict[int, tuple[str, str]] = {}
        for part in _parts(note_ids):
            rows = self._tuples().execute(f"SELECT id, path, title FROM notes WHERE id IN ({_marks(part)})", part)
            out.update((r[0], r[1:]) for r in rows)
        return out

    def frontmatter_rows(self, containing: Sequence[str] = ()) -> list[tuple[int, str, str, str]]:
        """(id, path, date, frontmatter JSON) of every note; with ``containing`` (ASCII words),
        only of the notes whose frontmatter holds one of them, case aside."""
        sql = "SELECT id, path, date, frontmatter FROM notes"
        if containing:
            sql += " WHERE " + " OR ".join("frontmatter LIKE ? ESCAPE '\\'" for _ in containing)
        rows = self.conn.execute(sql, [f"%{_like_escaped(word)}%" for word in containing])
        return [(r[0], r[1], r[2] or "", r[3] or "{}") for r in rows]

    def note_dates(self, note_ids: Iterable[int]) -> dict[int, str]:
        """note id → its date ("" when it has none), for these notes."""
        out: dict[int, str] = {}
        for part in _parts(sorted(set(note_ids))):
            rows = self.conn.execute(f"SELECT id, date FROM notes WHERE id IN ({_marks(part)})", part)
            out.update((r[0], r[1] or "") for r in rows)
        return out

    def chunk_ids(self) -> list[int]:
        """Every chunk id, ascending."""
        return [r[0] for r in self.conn.execute("SELECT id FROM chunks ORDER BY id")]

    def chunk_count(self) -> int:
        """How many chunks there are (a scan of an index: kept until the database changes)."""
        cache = self._unchanged_cache()
        count = cache.get("chunks")
        if not isinstance(count, int):
            count = cache["chunks"] = int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return count

    def chunk_note_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id → note id, for the chunks that exist."""
        if self._state_reads is not None:
            return self._state_reads.chunk_note_ids(chunk_ids, self._read_chunk_note_ids)
        return self._read_chunk_note_ids(chunk_ids)

    def _read_chunk_note_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for part in _parts(chunk_ids):
            out.update(self._tuples().execute(f"SELECT id, note_id FROM chunks WHERE id IN ({_marks(part)})", part))
        return out

    def note_chunk_counts(self, note_ids: Sequence[int]) -> dict[int, int]:
        """note id → how many chunks it has, for the notes that have any."""
        if self._state_reads is not None:
            return self._state_reads.note_chunk_counts(note_ids, self._read_note_chunk_counts)
        return self._read_note_chunk_counts(note_ids)

    def _read_note_chunk_counts(self, note_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for part in _parts(note_ids):
            out.update(
                self._tuples().execute(
                    f"SELECT note_id, count(*) FROM chunks WHERE note_id IN ({_marks(part)}) GROUP BY note_id", part
                )
            )
        return out

    def chunk_rows(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
        """chunk id → the chunk with its note's path, title and date."""
        if self._state_reads is not None:
            return self._state_reads.chunk_rows(chunk_ids, self._read_chunk_rows)
        return self._read_chunk_rows(chunk_ids)

    def _read_chunk_rows(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        for part in _parts(chunk_ids):
            rows = self._tuples().execute(
                "SELECT c.id, c.note_id, n.path, n.title, c.heading, c.text, n.date FROM chunks c "
                f"JOIN notes n ON n.id = c.note_id WHERE c.id IN ({_marks(part)})",
                part,
            )
            out.update((r[0], r) for r in map(ChunkRow._make, rows))
        return out

    def note_chunk_vectors(self, note_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        """(chunk id, note id, float32 vector bytes) of every chunk of these notes."""
        rows = self.note_chunk_codes(note_ids)
        return [(r[0], r[1], v) for r, v in zip(rows, _float32([r[2] for r in rows]))]

    def note_chunk_codes(self, note_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        """(chunk id, note id, vector as stored: ``vector_blobs``) of every chunk of these notes:
        what a lane decodes at once into one matrix (``vector_blobs.decode_array``)."""
        if self._state_reads is not None:
            return self._state_reads.note_chunk_codes(note_ids, self._read_note_chunk_codes)
        return self._read_note_chunk_codes(note_ids)

    def _read_note_chunk_codes(self, note_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        out: list[tuple[int, int, bytes]] = []
        for part in _parts(note_ids):
            out += self._tuples().execute(
                f"SELECT id, note_id, vector FROM chunks WHERE note_id IN ({_marks(part)})", part
            )
        return out

    def chunk_vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]:
        """(chunk id, float32 vector bytes) of these chunks."""
        out: list[tuple[int, bytes]] = []
        for part in _parts(chunk_ids):
            rows = self.conn.execute(f"SELECT id, vector FROM chunks WHERE id IN ({_marks(part)})", part).fetchall()
            out.extend((r[0], v) for r, v in zip(rows, _float32([r[1] for r in rows])))
        return out

    def chunk_vector_codes(self, batch: int = 50_000) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk's id, ascending, and its vector as stored (``vector_blobs.as_rows``: one
        byte a value): how the vector files are rebuilt (500,000 vectors: 193 MB, read
        ``batch`` rows at a time)."""
        import numpy as np

        from .vector_blobs import as_rows

        ids, codes = [np.zeros(0, np.int64)], []
        cursor = self.conn.execute("SELECT id, vector FROM chunks ORDER BY id")
        while rows := cursor.fetchmany(batch):
            ids.append(np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))
            codes.append(as_rows([r[1] for r in rows]))
        return np.concatenate(ids), np.concatenate(codes) if codes else as_rows([])

    def vocabulary_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Terms of the lexical index that begin with ``prefix``, the most widespread first."""
        self._vocabulary()
        return self._terms_with_prefix("chunks_vocab", prefix, limit)

    def _vocabulary(self) -> None:
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING fts5vocab(main, 'chunks_fts', 'row')"
        )

    def term_chunk_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """For each FTS term, how many chunks hold it (0 when none); one statement for the
        terms not seen since the database last changed."""
        known = self._unchanged_cache().setdefault("term_chunks", {})
        assert isinstance(known, dict)
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing:
            if len(known) > _TERM_CACHE:
                known.clear()
            if self._postings_on():
                from . import postings

                counted = postings.chunk_counts(self, missing)
                if counted is not None:
                    known.update(counted)
                    return {t: known[t] for t in terms}
            self._vocabulary()
            known.update(dict.fromkeys(missing, 0))
            for part in _parts(missing):
                rows = self.conn.execute(
                    f"SELECT term, doc FROM temp.chunks_vocab WHERE term IN ({_marks(part)})", part
                )
                known.update((r[0], int(r[1])) for r in rows)
        return {t: known[t] for t in terms}

    def fts_search(self, expression: str, weights: Sequence[float], limit: int) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) for an FTS5 MATCH expression, best first;
        equal scores by chunk id; ``weights`` are the bm25() column weights: title, heading,
        text. From the postings, narrowed, in one statement or in parts on the readers, the same
        answer (``FtsSearch.search``)."""
        return self._fts.search(self, expression, weights, limit)

    def _postings_on(self) -> bool:
        """Whether the lexical postings may answer: BRAIN_LEXICAL_POSTINGS chunks or more."""
        minimum = config.lexical_postings_min_chunks()
        return minimum is not None and self.fts_row_count() >= minimum

    def resolved_edges(self) -> list[tuple[int, int, str]]:
        """(source id, target id, kind) of every resolved link between two different notes."""
        rows = self.conn.execute(
            "SELECT source_id, target_id, kind FROM links WHERE target_id IS NOT NULL AND target_id != source_id"
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def resolved_edge_batches(self, batch: int = 65_536) -> Iterator[list[tuple[int, int, int]]]:
        """``resolved_edges`` as (source id, target id, 1 for an embed else 0), ``batch`` rows at a
        time: the link graph of 500,000 links is built without holding them all as tuples."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: sqlite3.Row objects made the read twice as slow (0.6 s at 100k)
        cursor.execute(
            "SELECT source_id, target_id, kind = 'embed' FROM links WHERE target_id IS NOT NULL AND target_id != source_id"
        )
        while rows := cursor.fetchmany(batch):
            yield rows

    def resolved_edges_from(self, note_ids: Iterable[int]) -> list[tuple[int, int, int]]:
        """``resolved_edge_batches``' rows of the links these notes write."""
        out: list[tuple[int, int, int]] = []
        for part in _parts(sorted(set(note_ids))):
            out += self.conn.execute(
                "SELECT source_id, target_id, kind = 'embed' FROM links WHERE target_id IS NOT NULL"
                f" AND target_id != source_id AND source_id IN ({_marks(part)})",
                part,
            ).fetchall()
        return [(r[0], r[1], r[2]) for r in out]

    def neighbour_edges(self, note_ids: Sequence[int]) -> list[tuple[int, int, str, str]]:
        """(note id, neighbour id, direction, kind) for every resolved link touching these notes.

        Outgoing links first ("links to"), then backlinks ("linked from"), each in link order.
        """
        out: list[tuple[int, int, str, str]] = []
        back: list[tuple[int, int, str, str]] = []
        for part in _parts(note_ids):
            marks = _marks(part)
            out.extend(
                (r[0], r[1], "links to", r[2])
                for r in self._tuples().execute(
                    f"SELECT source_id, target_id, kind FROM links WHERE source_id IN ({marks})"
                    " AND target_id IS NOT NULL AND target_id != source_id ORDER BY id",
                    part,
                )
            )
            back.extend(
                (r[0], r[1], "linked from", r[2])
                for r in self._tuples().execute(
                    f"SELECT target_id, source_id, kind FROM links WHERE target_id IN ({marks})"
                    " AND source_id != target_id ORDER BY id",
                    part,
                )
            )
        return out + back

    def written_link_targets(self, note_ids: Sequence[int]) -> dict[tuple[int, str], int]:
        """(note id, target as written) → the other note it resolves to, for these notes' links."""
        out: dict[tuple[int, str], int] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(
                "SELECT source_id, target, target_id FROM links WHERE target_id IS NOT NULL"
                f" AND target_id != source_id AND source_id IN ({_marks(part)})",
                part,
            )
            out.update(((r[0], r[1]), r[2]) for r in rows)
        return out

    def out_degrees(self, note_ids: Sequence[int]) -> dict[int, int]:
        """How many other notes each of these notes links to (notes with no such link left out)."""
        if self._state_reads is not None:
            return self._state_reads.out_degrees(note_ids, self._read_out_degrees)
        return self._read_out_degrees(note_ids)

    def _read_out_degrees(self, note_ids: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for part in _parts(note_ids):
            out.update(
                self._tuples().execute(
                    "SELECT source_id, count(DISTINCT target_id) FROM links WHERE target_id IS NOT NULL"
                    f" AND target_id != source_id AND source_id IN ({_marks(part)}) GROUP BY source_id",
                    part,
                )
            )
        return out

    def linkers(self, note_id: int) -> list[int]:
        """Ids of the other notes that link to ``note_id``."""
        rows = self.conn.execute(
            "SELECT DISTINCT source_id FROM links WHERE target_id = ? AND source_id != ?", (note_id, note_id)
        )
        return [r[0] for r in rows]

    # ----- history: versions, past chunks, link history (see index/history.py) ---------------
    #
    # The present (notes, chunks, links, chunks_fts, FAISS) is what recall reads and it stays
    # as it was; history sits beside it. ``note_versions`` holds every content of a note the
    # index saw, ``chunk_history`` the chunks (and vectors) of contents that are no longer
    # current, each stored once per note however many versions held it (``version_chunks``
    # lists a past content's chunks in order), ``link_history`` every link of a note as an edge with a recorded span. A note's
    # id is its identity for good: kept across renames and, through history, across a
    # delete and a later restore.

    def names_moved_at(self) -> float | None:
        """The latest moment a note came, went, or took another path or other aliases (what
        links resolve against), as ``Recorder.names_moved`` noted it; None: not known."""
        value = self.get_meta(NAMES_CLOCK)
        return float(value) if value is not None else None

    # ----- the whole file ----------------------------------------------------------------------

    def vacuum(self) -> None:
        """Rewrite the database compacted, and say when in ``meta`` (``RELOAD``): a reader's
        snapshot of the state before holds VACUUM's pages in the WAL, and a server that sees the
        index changed loads it and lets go of that state (``server.service``)."""
        self.conn.execute("VACUUM")
        with self.transaction():
            self.set_meta(RELOAD, repr(time.time()))

    # ----- repair -----------------------------------------------------------------------------

    SEARCH_INDEXES = ("chunks_fts", "chunk_history_fts")

    def database_problems(self, limit: int = 5) -> list[str]:
        """What SQLite's ``quick_check`` finds wrong with the database file (none: empty). It
        cannot see into the search indexes: FTS5 keeps no copy of what it indexes."""
        rows = [r[0] for r in self.conn.execute(f"PRAGMA quick_check({int(limit)})")]
        # A row can span lines ("*** in database main ***\nPage 46: ..."): each is one line here,
        # as the errors that quote them are.
        return [] if rows == ["ok"] else [" ".join(str(row).split()) for row in rows]

    def missing_tables(self) -> list[str]:
        """The tables the migrations made that the database lacks (one dropped by hand, or by a
        tool): quick_check finds nothing wrong with a database short of a table."""
        return missing_tables(self.conn)

    def missing_tables_message(self, vault: Path) -> str | None:
        """What ``missing_table_message`` says of this index (its fix), or None: it lacks none."""
        missing = self.missing_tables()
        return missing_table_message(self.directory / INDEX_FILE, vault, missing) if missing else None

    def rebuild_search_indexes(self) -> dict[str, int]:
        """Refill each BM25 index from the rows it indexes (FTS5 'rebuild'), in one transaction,
        then let FTS5 check each against its rows; rows indexed, by index."""
        counts = {}
        with self.transaction():
            for table, rows in zip(self.SEARCH_INDEXES, ("chunks", "chunk_history")):
                self.conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
                counts[table] = int(self.conn.execute(f"SELECT count(*) FROM {rows}").fetchone()[0])
        for table in self.SEARCH_INDEXES:
            self.conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        return counts


def _link_stem_hash(target: str, kind: str) -> int:
    # A link to its own note ([[#Heading]]) has no keys: it goes under the empty stem, which
    # only a note named ".md" shares (resolving it again then changes nothing).
    return stem_hash(link_stem(target, kind) or "")


# The condition of the index links_unresolved (m014): a query must state it to use the index.
_UNRESOLVED = "status <> 'resolved'"
# The indexes over the columns a link's resolution sets (``_update_rows``), and how many rows
# an update must change before they are made again rather than kept up to date.
_RESOLUTION_INDEXES = {
    "links": ("links_target", "links_unresolved"),
    "link_history": ("link_history_target", "link_history_pending"),
}
_BULK_UPDATE_FROM = 20_000
# The indexes a first build makes after its writes rather than during them (``defer_indexes``):
# keyed by hashes, paths, names and link targets, read only once the notes are all written (by
# the links' resolution, or by queries). 20,000 notes: the build's main process 18.2 -> 15.8 s CPU.
_DEFERRED_INDEXES = (
    "notes_hash",
    "notes_path_key",
    "notes_name_key",
    "aliases_alias",
    "aliases_key",
    "tags_tag",
    "links_target",
    "links_stem",
    "links_unresolved",
    "note_versions_span",
    "note_versions_path",
    "note_versions_hash",
    "link_history_target",
    "link_history_span",
)
_BULK_CACHE_KB = 128 * 1024  # SQLite's page cache while a run writes many notes (``bulk_writes``)
_TERM_CACHE = 100_000  # term counts kept between changes of the database


def _like_escaped(text: str) -> str:
    """``text`` matched literally by LIKE ... ESCAPE '\\'."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _new_fts_rows(suffix: str) -> list[tuple]:
    """The rows of a new FTS5 table's table ``<name>_<suffix>`` (config: its version; data: its
    empty structure)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5 (a)")
        return conn.execute(f"SELECT * FROM t_{suffix}").fetchall()
    finally:
        conn.close()
