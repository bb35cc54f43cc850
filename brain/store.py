"""The per-vault index database: notes, chunks (with their vectors), links, metadata.

SQLite is the source of truth. Each chunk's vector is stored beside it, so the FAISS file
(``vectors.py``) is a derived cache that can always be rebuilt without the model; a
``vectors_version`` counter in ``meta`` says which state the FAISS file must match.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .migrations import Migrations, connect

INDEX_MIGRATIONS = Migrations("index")


@INDEX_MIGRATIONS
def m001_initial(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE notes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            tags TEXT NOT NULL DEFAULT '[]',
            date TEXT,
            frontmatter TEXT NOT NULL DEFAULT '{}',
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            hash TEXT NOT NULL,
            warnings TEXT NOT NULL DEFAULT '[]',
            indexed_at REAL NOT NULL
        );
        CREATE INDEX notes_hash ON notes (hash);
        CREATE TABLE aliases (
            note_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            alias TEXT NOT NULL
        );
        CREATE INDEX aliases_note ON aliases (note_id);
        CREATE INDEX aliases_alias ON aliases (alias COLLATE NOCASE);
        CREATE TABLE tags (
            note_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            tag TEXT NOT NULL
        );
        CREATE INDEX tags_note ON tags (note_id);
        CREATE INDEX tags_tag ON tags (tag);
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            note_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX chunks_note ON chunks (note_id, ordinal);
        CREATE TABLE links (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
            target_id INTEGER REFERENCES notes (id) ON DELETE SET NULL,
            target TEXT NOT NULL,
            kind TEXT NOT NULL,
            anchor TEXT,
            display TEXT,
            line INTEGER,
            status TEXT NOT NULL DEFAULT 'pending'
        );
        CREATE INDEX links_source ON links (source_id);
        CREATE INDEX links_target ON links (target_id);
        CREATE TABLE skipped (
            path TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT ''
        );
        """
    )


@INDEX_MIGRATIONS
def m002_lexical(conn: sqlite3.Connection) -> None:
    """FTS5 (BM25) over chunks, kept in step with them by triggers.

    ``unicode61 remove_diacritics 2`` folds case and accents for Latin, Cyrillic and other
    alphabets alike ("crème" matches "creme"). The title is copied in so exact titles score.
    """
    conn.executescript(
        """
        CREATE VIRTUAL TABLE chunks_fts USING fts5 (
            title, heading, text,
            tokenize = "unicode61 remove_diacritics 2"
        );
        INSERT INTO chunks_fts (rowid, title, heading, text)
            SELECT c.id, n.title, c.heading, c.text FROM chunks c JOIN notes n ON n.id = c.note_id;
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts (rowid, title, heading, text)
            VALUES (new.id, (SELECT title FROM notes WHERE id = new.note_id), new.heading, new.text);
        END;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            DELETE FROM chunks_fts WHERE rowid = old.id;
        END;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title ON notes BEGIN
            UPDATE chunks_fts SET title = new.title
            WHERE rowid IN (SELECT id FROM chunks WHERE note_id = new.id);
        END;
        """
    )


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


class IndexStore:
    """One vault's index database. Open with ``IndexStore.open(index_dir)``."""

    def __init__(self, conn: sqlite3.Connection, directory: Path):
        self.conn = conn
        self.directory = directory

    @classmethod
    def open(cls, directory: Path, *, create: bool = True) -> IndexStore:
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        conn = connect(str(directory / "index.db"))
        conn.row_factory = sqlite3.Row
        INDEX_MIGRATIONS.apply(conn)
        return cls(conn, directory)

    @classmethod
    def open_snapshot(cls, directory: Path) -> IndexStore:
        """A reader pinned to the state committed when it opens, until ``close()``.

        It holds one read transaction (SQLite WAL: writers go on committing; this reader keeps
        seeing the state it started from), so every query through it reads the rows its vectors
        were built from. The connection is not bound to the opening thread: a server builds a
        snapshot on one thread and queries it on another, never both at once.
        """
        conn = connect(str(directory / "index.db"), check_same_thread=False)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM meta").fetchone()  # the snapshot starts at the first read
        except BaseException:
            conn.close()
            raise
        return cls(conn, directory)

    def close(self) -> None:
        self.conn.close()

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
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
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

    def replace_skipped(self, entries: Iterable[tuple[str, str, str]]) -> None:
        self.conn.execute("DELETE FROM skipped")
        self.conn.executemany(
            "INSERT OR REPLACE INTO skipped (path, reason, detail) VALUES (?, ?, ?)", entries
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

    def term_chunk_counts(self, terms: Sequence[str]) -> dict[str, int]:
        """For each FTS term, how many chunks hold it (0 when none)."""
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab USING fts5vocab(main, 'chunks_fts', 'row')"
        )
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
        yield ids[start:start + _PART]


def _marks(part: Sequence[int]) -> str:
    return ",".join("?" * len(part))


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
