"""The per-vault index database, and the only code that knows its SQL.

``IndexStore`` owns every statement on ``index.db``, reads and writes, as typed methods:
notes, chunks with their vectors, links, the FTS5 lexical table, names, neighbours. SQLite is
the source of truth. Each chunk's vector is stored beside it, so the FAISS file
(``vectors.py``) is a derived cache that can always be rebuilt without the model; a
``vectors_version`` counter in ``meta`` says which state the FAISS file must match. The
schema and its migrations are in ``schema.py``; ``index_errors`` turns failures on the
database into one-line ``BrainError``s.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import config
from ..errors import BrainError, IndexDamagedError, NotWritableError
from ..migrations import connect
from .schema import DEFAULT_FTS_TOKENIZER, FILL_FTS, FTS_TOKENIZERS, INDEX_MIGRATIONS

if TYPE_CHECKING:
    from ..links import Link
    from ..notes import Note

INDEX_FILE = "index.db"


@dataclass(frozen=True)
class ChunkRow:
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


class IndexStore:
    """One vault's index database. Open with ``IndexStore.open(index_dir)``."""

    def __init__(self, conn: sqlite3.Connection, directory: Path, *, readonly: bool = False):
        self.conn = conn
        self.directory = directory
        self.readonly = readonly
        self._identity = _file_identity(directory / INDEX_FILE)

    @classmethod
    def open(cls, directory: Path, *, create: bool = True, readonly_ok: bool = False) -> IndexStore:
        """Open (creating and migrating as needed) the index database in ``directory``.

        ``readonly_ok``: where the folder cannot be written (a read-only brain home), open the
        database read-only instead, for commands that only read.
        """
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        path = directory / INDEX_FILE
        conn = None
        try:
            conn = connect(str(path))
            conn.row_factory = sqlite3.Row
            INDEX_MIGRATIONS.apply(conn)
        except sqlite3.OperationalError as exc:
            if conn is not None:
                conn.close()
            if not (readonly_ok and path.exists() and is_not_writable(exc)):
                raise
            return cls._open_readonly(directory)
        except BaseException:
            if conn is not None:
                conn.close()
            raise
        return cls(conn, directory)

    @classmethod
    def _open_readonly(cls, directory: Path) -> IndexStore:
        path = (directory / INDEX_FILE).absolute()
        # With a -wal file, SQLite reads it through the -shm beside it. Without one (the last
        # writer closed cleanly) the database file is the whole truth, and since this folder
        # cannot be written nobody here can change it: ``immutable`` reads it without the
        # -shm file SQLite could not create.
        wal = path.with_name(path.name + "-wal")
        query = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
        conn = sqlite3.connect(f"{path.as_uri()}?{query}", uri=True, isolation_level=None, timeout=5)
        try:
            conn.row_factory = sqlite3.Row  # (not query_only: the lexical lane needs a temp table)
            pending = INDEX_MIGRATIONS.pending(conn)
        except BaseException:
            conn.close()
            raise
        if pending:
            conn.close()
            raise NotWritableError(
                f"the index {path} was made by an older brain and must be upgraded, which needs "
                f"write access to {directory}: run `brain index` once where it is writable"
            )
        return cls(conn, directory, readonly=True)

    @classmethod
    def in_memory(cls, directory: Path) -> IndexStore:
        """An empty index that is never saved: what `status` reads before any `brain index`."""
        conn = connect(":memory:")
        conn.row_factory = sqlite3.Row
        INDEX_MIGRATIONS.apply(conn)
        return cls(conn, directory, readonly=True)

    @classmethod
    def open_snapshot(cls, directory: Path) -> IndexStore:
        """A reader pinned to the state committed when it opens, until ``close()``.

        It holds one read transaction (SQLite WAL: writers go on committing; this reader keeps
        seeing the state it started from), so every query through it reads the rows its vectors
        were built from. The connection is not bound to the opening thread: a server builds a
        snapshot on one thread and queries it on another, never both at once.
        """
        conn = connect(str(directory / INDEX_FILE), check_same_thread=False)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM meta").fetchone()  # the snapshot starts at the first read
        except BaseException:
            conn.close()
            raise
        return cls(conn, directory)

    @staticmethod
    def note_count_at(directory: Path) -> int | None:
        """How many notes the index database in ``directory`` holds, read-only; None if unreadable."""
        try:
            conn = sqlite3.connect(f"{(directory / INDEX_FILE).absolute().as_uri()}?mode=ro", uri=True, timeout=1)
            try:
                return int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.Error:
            return None

    @staticmethod
    def integrity_problem(directory: Path) -> str | None:
        """Why the index database in ``directory`` cannot be trusted, or None (also when absent)."""
        path = directory / INDEX_FILE
        if not path.exists():
            return None
        try:
            conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=5)
            try:
                row = conn.execute("PRAGMA quick_check(1)").fetchone()
            finally:
                conn.close()
        except sqlite3.OperationalError:  # busy, or not readable here: no evidence of damage
            return None
        except sqlite3.DatabaseError as exc:
            return str(exc)
        verdict = str(row[0]) if row else "no answer from the integrity check"
        return None if verdict == "ok" else " ".join(verdict.split())[:200]

    def close(self) -> None:
        self.conn.close()

    def still_at_its_path(self) -> bool:
        """False once another database took this one's place (``--rebuild`` swapped one in)."""
        return self._identity is not None and _file_identity(self.directory / INDEX_FILE) == self._identity

    def checkpoint(self) -> None:
        """Fold the WAL into the database file (before the folder is moved or swapped)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ----- metadata -------------------------------------------------------------------

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: object) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    def fts_tokenizer(self) -> str:
        """The tokenizer chunks_fts was created with (indexes from before the option: unicode61)."""
        return self.get_meta("fts_tokenizer") or DEFAULT_FTS_TOKENIZER

    def recreate_fts(self, tokenizer: str) -> None:
        """Create chunks_fts anew with ``tokenizer`` and refill it; inside a transaction.

        The triggers name the table, not its tokenizer, so they keep working on the new one.
        """
        self.conn.execute("DROP TABLE chunks_fts")
        self.conn.execute(
            f"CREATE VIRTUAL TABLE chunks_fts USING fts5 (title, heading, text, tokenize = '{FTS_TOKENIZERS[tokenizer]}')"
        )
        self.conn.execute(FILL_FTS)
        self.set_meta("fts_tokenizer", tokenizer)

    def has_chunks(self) -> bool:
        return self.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

    def index_id(self) -> str | None:
        return self.get_meta("index_id")

    def vectors_version(self) -> int:
        return int(self.get_meta("vectors_version", "0") or 0)

    def bump_vectors_version(self) -> None:
        """Call inside the transaction that changes chunks: the FAISS file is now behind."""
        self.set_meta("vectors_version", self.vectors_version() + 1)

    # ----- notes ----------------------------------------------------------------------

    def note_rows(self) -> dict[str, NoteRow]:
        rows = self.conn.execute("SELECT id, path, title, size, mtime_ns, hash FROM notes")
        return {r["path"]: NoteRow(r["id"], r["path"], r["title"], r["size"], r["mtime_ns"], r["hash"]) for r in rows}

    def counts(self) -> dict[str, int]:
        one = lambda sql: self.conn.execute(sql).fetchone()[0]
        return {
            "notes": one("SELECT count(*) FROM notes"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "resolved": one("SELECT count(*) FROM links WHERE status = 'resolved'"),
            "dangling": one("SELECT count(*) FROM links WHERE status = 'dangling'"),
            "attachment": one("SELECT count(*) FROM links WHERE status = 'attachment'"),
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

    def note_hash(self, note_id: int) -> str | None:
        row = self.conn.execute("SELECT hash FROM notes WHERE id = ?", (note_id,)).fetchone()
        return row[0] if row else None

    def notes_by_hash(self, note_ids: Sequence[int]) -> dict[str, tuple[str, int]]:
        """content hash → (path, id) of these notes (a deleted note whose bytes reappear is a rename)."""
        out: dict[str, tuple[str, int]] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(f"SELECT id, path, hash FROM notes WHERE id IN ({_marks(part)})", part)
            out.update((r[2], (r[1], r[0])) for r in rows)
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

    def touch_note(self, note_id: int, size: int, mtime_ns: int) -> None:
        """Same bytes, new stat: remember the stat so the next scan need not read the file."""
        self.conn.execute("UPDATE notes SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, note_id))

    def write_note(self, note: Note, size: int, mtime_ns: int, note_id: int | None = None) -> int:
        """Insert the note (``note_id`` None) or overwrite the row ``note_id``; with its aliases and tags."""
        values = (
            note.path,
            note.title,
            dumps(note.aliases),
            dumps(note.tags),
            note.date,
            dumps(note.frontmatter),
            size,
            mtime_ns,
            note.content_hash,
            dumps(note.warnings),
            time.time(),
        )
        if note_id is None:
            cursor = self.conn.execute(
                "INSERT INTO notes (path, title, aliases, tags, date, frontmatter, size, mtime_ns, hash,"
                " warnings, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            note_id = int(cursor.lastrowid or 0)
        else:
            self.conn.execute(
                "UPDATE notes SET path = ?, title = ?, aliases = ?, tags = ?, date = ?, frontmatter = ?,"
                " size = ?, mtime_ns = ?, hash = ?, warnings = ?, indexed_at = ? WHERE id = ?",
                values + (note_id,),
            )
            self.conn.execute("DELETE FROM aliases WHERE note_id = ?", (note_id,))
            self.conn.execute("DELETE FROM tags WHERE note_id = ?", (note_id,))
        self.conn.executemany(
            "INSERT INTO aliases (note_id, alias) VALUES (?, ?)", [(note_id, a) for a in note.aliases]
        )
        self.conn.executemany("INSERT INTO tags (note_id, tag) VALUES (?, ?)", [(note_id, t) for t in note.tags])
        return note_id

    def replace_links(self, note_id: int, links: Sequence[Link]) -> None:
        """The note's links as written, pending resolution (``linking.resolve_links``)."""
        self.conn.execute("DELETE FROM links WHERE source_id = ?", (note_id,))
        self.conn.executemany(
            "INSERT INTO links (source_id, target, kind, anchor, display, line, status)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending')",
            [(note_id, link.target, link.kind, link.anchor, link.display, link.line) for link in links],
        )
        self.set_meta("links_dirty", 1)

    def replace_chunks(
        self, note_id: int, chunks: Sequence[tuple[int, str, str, bytes]]
    ) -> tuple[list[int], list[int]]:
        """The note's chunks, each (ordinal, heading, text, float32 vector bytes), replacing its
        old ones; returns (removed chunk ids, added chunk ids). Bumps ``vectors_version``."""
        removed = [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE note_id = ?", (note_id,))]
        self.conn.execute("DELETE FROM chunks WHERE note_id = ?", (note_id,))
        added = []
        for ordinal, heading, text, vector in chunks:
            cursor = self.conn.execute(
                "INSERT INTO chunks (note_id, ordinal, heading, text, vector) VALUES (?, ?, ?, ?, ?)",
                (note_id, ordinal, heading, text, vector),
            )
            added.append(int(cursor.lastrowid or 0))
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
        self.set_meta("links_dirty", 1)
        return removed

    def links_dirty(self) -> bool:
        return self.get_meta("links_dirty") == "1"

    def links_to_resolve(self, *, every: bool) -> list[tuple[int, int, str, str]]:
        """(link id, source note id, target as written, kind): every link, or those still pending."""
        where = "" if every else " WHERE status = 'pending'"
        return [
            (r[0], r[1], r[2], r[3]) for r in self.conn.execute(f"SELECT id, source_id, target, kind FROM links{where}")
        ]

    def set_link_targets(self, updates: Iterable[tuple[int | None, str, int]], resolver_key: str) -> None:
        """(target note id or None, status, link id) for each link resolved; clears ``links_dirty``."""
        self.conn.executemany("UPDATE links SET target_id = ?, status = ? WHERE id = ?", updates)
        self.set_meta("links_dirty", 0)
        self.set_meta("resolver_key", resolver_key)

    # ----- what recall reads ------------------------------------------------------------------

    def note_paths(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT path FROM notes")}

    def note_ids(self) -> list[int]:
        """Every note id, ascending."""
        return [r[0] for r in self.conn.execute("SELECT id FROM notes ORDER BY id")]

    def note_titles(self) -> list[tuple[str, str]]:
        """(path, title) of every note."""
        return [(r[0], r[1]) for r in self.conn.execute("SELECT path, title FROM notes")]

    def alias_pairs(self) -> list[tuple[str, str]]:
        """(path, alias) for every alias of every note."""
        rows = self.conn.execute("SELECT n.path, a.alias FROM aliases a JOIN notes n ON n.id = a.note_id")
        return [(r[0], r[1]) for r in rows]

    def notes_brief(self, note_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """note id → (path, title)."""
        out: dict[int, tuple[str, str]] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(f"SELECT id, path, title FROM notes WHERE id IN ({_marks(part)})", part)
            out.update((r[0], (r[1], r[2])) for r in rows)
        return out

    def frontmatter_rows(self) -> list[tuple[int, str, str, str]]:
        """(id, path, date, frontmatter JSON) of every note."""
        rows = self.conn.execute("SELECT id, path, date, frontmatter FROM notes")
        return [(r[0], r[1], r[2] or "", r[3] or "{}") for r in rows]

    def chunk_ids(self) -> list[int]:
        """Every chunk id, ascending."""
        return [r[0] for r in self.conn.execute("SELECT id FROM chunks ORDER BY id")]

    def chunk_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def chunk_note_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id → note id, for the chunks that exist."""
        out: dict[int, int] = {}
        for part in _parts(chunk_ids):
            rows = self.conn.execute(f"SELECT id, note_id FROM chunks WHERE id IN ({_marks(part)})", part)
            out.update((r[0], r[1]) for r in rows)
        return out

    def chunk_rows(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
        """chunk id → the chunk with its note's path, title and date."""
        out: dict[int, ChunkRow] = {}
        for part in _parts(chunk_ids):
            rows = self.conn.execute(
                "SELECT c.id, c.note_id, n.path, n.title, c.heading, c.text, n.date FROM chunks c "
                f"JOIN notes n ON n.id = c.note_id WHERE c.id IN ({_marks(part)})",
                part,
            )
            out.update((r[0], ChunkRow(*r)) for r in rows)
        return out

    def note_chunk_vectors(self, note_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        """(chunk id, note id, float32 vector bytes) of every chunk of these notes."""
        out: list[tuple[int, int, bytes]] = []
        for part in _parts(note_ids):
            rows = self.conn.execute(f"SELECT id, note_id, vector FROM chunks WHERE note_id IN ({_marks(part)})", part)
            out.extend((r[0], r[1], r[2]) for r in rows)
        return out

    def chunk_vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, bytes]]:
        """(chunk id, float32 vector bytes) of these chunks."""
        out: list[tuple[int, bytes]] = []
        for part in _parts(chunk_ids):
            rows = self.conn.execute(f"SELECT id, vector FROM chunks WHERE id IN ({_marks(part)})", part)
            out.extend((r[0], r[1]) for r in rows)
        return out

    def iter_chunk_vectors(self, batch: int = 50_000) -> Iterator[list[tuple[int, bytes]]]:
        """Every (chunk id, vector bytes), ascending by id, ``batch`` rows at a time."""
        cursor = self.conn.execute("SELECT id, vector FROM chunks ORDER BY id")
        while rows := cursor.fetchmany(batch):
            yield [(r[0], r[1]) for r in rows]

    def vocabulary_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Terms of the lexical index that begin with ``prefix``, the most widespread first."""
        self._vocabulary()
        rows = self.conn.execute(
            "SELECT term FROM temp.chunks_vocab WHERE term > ? AND term < ? ORDER BY doc DESC LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [r[0] for r in rows]

    def _vocabulary(self) -> None:
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING fts5vocab(main, 'chunks_fts', 'row')"
        )

    def term_chunk_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """For each FTS term, how many chunks hold it (0 when none)."""
        self._vocabulary()
        out = {}
        for term in terms:
            row = self.conn.execute("SELECT doc FROM temp.chunks_vocab WHERE term = ?", (term,)).fetchone()
            out[term] = int(row[0]) if row else 0
        return out

    def fts_search(self, expression: str, weights: Sequence[float], limit: int) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) for an FTS5 MATCH expression, best first.

        ``weights`` are the bm25() column weights: title, heading, text.
        """
        rows = self.conn.execute(
            "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS rank FROM chunks_fts WHERE chunks_fts MATCH ?"
            " ORDER BY rank LIMIT ?",
            (*weights, expression, limit),
        )
        return [(r[0], -float(r[1])) for r in rows]  # bm25() is lower-better

    def resolved_edges(self) -> list[tuple[int, int, str]]:
        """(source id, target id, kind) of every resolved link between two different notes."""
        rows = self.conn.execute(
            "SELECT source_id, target_id, kind FROM links WHERE target_id IS NOT NULL AND target_id != source_id"
        )
        return [(r[0], r[1], r[2]) for r in rows]

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
                for r in self.conn.execute(
                    f"SELECT source_id, target_id, kind FROM links WHERE source_id IN ({marks})"
                    " AND target_id IS NOT NULL AND target_id != source_id ORDER BY id",
                    part,
                )
            )
            back.extend(
                (r[0], r[1], "linked from", r[2])
                for r in self.conn.execute(
                    f"SELECT target_id, source_id, kind FROM links WHERE target_id IN ({marks})"
                    " AND source_id != target_id ORDER BY id",
                    part,
                )
            )
        return out + back

    def linkers(self, note_id: int) -> list[int]:
        """Ids of the other notes that link to ``note_id``."""
        rows = self.conn.execute(
            "SELECT DISTINCT source_id FROM links WHERE target_id = ? AND source_id != ?", (note_id, note_id)
        )
        return [r[0] for r in rows]


_PART = 900  # ids per IN (...) list: under SQLite's default limit of 999 variables


def _parts(ids: Sequence[int]) -> Iterator[list[int]]:
    ids = list(ids)
    for start in range(0, len(ids), _PART):
        yield ids[start : start + _PART]


def _marks(part: Sequence[int]) -> str:
    return ",".join("?" * len(part))


def is_not_writable(exc: sqlite3.OperationalError) -> bool:
    """SQLite's way of saying the file or its folder cannot be written (or created)."""
    name = getattr(exc, "sqlite_errorname", "")  # Python 3.11+
    if name:
        return name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN"))
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open database file" in text


@contextmanager
def index_errors(directory: Path, vault: Path) -> Iterator[None]:
    """One place that turns SQLite and file-system failures on a vault's index into a
    ``BrainError`` naming the file or folder and what to do; anything else passes through."""
    database = directory / INDEX_FILE
    try:
        yield
    except BrainError:
        raise
    except sqlite3.OperationalError as exc:
        if is_not_writable(exc):
            raise NotWritableError(not_writable_message(directory, str(exc))) from exc
        if "locked" in str(exc) or "busy" in str(exc):
            raise BrainError(
                f"the index database {database} is busy ({exc}): another brain process is writing it; try again"
            ) from exc
        raise BrainError(f"the index database {database} could not be used ({exc})") from exc  # disk full, I/O
    except sqlite3.DatabaseError as exc:
        if type(exc) is not sqlite3.DatabaseError:  # IntegrityError and the like: a bug, not damage
            raise
        raise IndexDamagedError(damaged_message(database, vault, str(exc))) from exc
    except OSError as exc:
        if (
            exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
            and exc.filename
            and _related(Path(exc.filename), directory)
        ):
            raise NotWritableError(not_writable_message(Path(exc.filename), exc.strerror or str(exc))) from exc
        raise


def damaged_message(database: Path, vault: Path, reason: str) -> str:
    return (
        f"the index database {database} is damaged ({reason}); run `brain index --rebuild --vault {vault}` "
        "to rebuild it (the damaged one is moved aside, not deleted)"
    )


def not_writable_message(where: Path, reason: str) -> str:
    return (
        f"cannot write to {where} ({reason}): brain keeps each vault's index under the brain home "
        f"({config.brain_home()}); make it writable or set BRAIN_HOME to a folder that is"
    )


def _related(path: Path, directory: Path) -> bool:
    """``path`` is the index folder, inside it, beside it, or one of the folders above it."""
    try:
        path, directory = path.absolute(), directory.absolute()
    except OSError:
        return False
    return directory.is_relative_to(path) or path.is_relative_to(directory.parent)


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
