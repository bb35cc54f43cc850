"""The per-vault index database: notes, chunks (with their vectors), links, metadata.

SQLite is the source of truth. Each chunk's vector is stored beside it, so the FAISS file
(``vectors.py``) is a derived cache that can always be rebuilt without the model; a
``vectors_version`` counter in ``meta`` says which state the FAISS file must match.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
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


@INDEX_MIGRATIONS
def m003_fts_fold_yo(conn: sqlite3.Connection) -> None:
    """The lexical index folds ё into е (Ё into Е), and is refilled so.

    ``remove_diacritics`` folds Latin accents only: "ёлкин" and "елкин" stay two words, while
    Russian writes either letter for the same word. Titles, headings and text are folded on
    their way into chunks_fts (read only for matching; results show chunks.text) and queries
    are folded the same way (brain/recall/lexical.py).
    """
    conn.executescript(
        """
        DROP TRIGGER chunks_fts_insert;
        DROP TRIGGER chunks_fts_title;
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts (rowid, title, heading, text)
            VALUES (
                new.id,
                replace(replace((SELECT title FROM notes WHERE id = new.note_id), 'ё', 'е'), 'Ё', 'Е'),
                replace(replace(new.heading, 'ё', 'е'), 'Ё', 'Е'),
                replace(replace(new.text, 'ё', 'е'), 'Ё', 'Е')
            );
        END;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title ON notes BEGIN
            UPDATE chunks_fts SET title = replace(replace(new.title, 'ё', 'е'), 'Ё', 'Е')
            WHERE rowid IN (SELECT id FROM chunks WHERE note_id = new.id);
        END;
        DELETE FROM chunks_fts;
        INSERT INTO chunks_fts (rowid, title, heading, text)
            SELECT c.id, replace(replace(n.title, 'ё', 'е'), 'Ё', 'Е'), replace(replace(c.heading, 'ё', 'е'), 'Ё', 'Е'),
                   replace(replace(c.text, 'ё', 'е'), 'Ё', 'Е')
            FROM chunks c JOIN notes n ON n.id = c.note_id;
        """
    )


# The lexical index's tokenizers, by the name BRAIN_FTS_TOKENIZER takes.
FTS_TOKENIZERS = {
    # Words, case and Latin accents folded: English, Russian, most alphabets. What m002 creates.
    "unicode61": "unicode61 remove_diacritics 2",
    # Character trigrams: Chinese, Japanese, Korean (no spaces between words). Case folded;
    # accents too where SQLite has the option (3.45+).
    "trigram": "trigram remove_diacritics 1" if sqlite3.sqlite_version_info >= (3, 45) else "trigram",
}
DEFAULT_FTS_TOKENIZER = "unicode61"


def fts_tokenizer_setting() -> str:
    """The tokenizer ``BRAIN_FTS_TOKENIZER`` asks for (default unicode61)."""
    from . import config
    from .errors import ConfigError

    value = (config.env("BRAIN_FTS_TOKENIZER", DEFAULT_FTS_TOKENIZER) or "").strip().lower()
    if value not in FTS_TOKENIZERS:
        raise ConfigError(
            f"BRAIN_FTS_TOKENIZER={value!r} is not a tokenizer brain knows: use {' or '.join(FTS_TOKENIZERS)}"
        )
    return value


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

    def fts_tokenizer(self) -> str:
        """The tokenizer chunks_fts was created with (indexes from before the option: unicode61)."""
        return self.get_meta("fts_tokenizer") or DEFAULT_FTS_TOKENIZER

    def recreate_fts(self, tokenizer: str) -> None:
        """Create chunks_fts anew with ``tokenizer`` and refill it; inside a transaction.

        The triggers name the table, not its tokenizer, so they keep working on the new one.
        """
        self.conn.execute("DROP TABLE chunks_fts")
        self.conn.execute(
            "CREATE VIRTUAL TABLE chunks_fts USING fts5 (title, heading, text, "
            f"tokenize = '{FTS_TOKENIZERS[tokenizer]}')"
        )
        self.conn.execute(
            "INSERT INTO chunks_fts (rowid, title, heading, text) "
            "SELECT c.id, replace(replace(n.title, 'ё', 'е'), 'Ё', 'Е'), replace(replace(c.heading, 'ё', 'е'), 'Ё', 'Е'),"
            " replace(replace(c.text, 'ё', 'е'), 'Ё', 'Е') FROM chunks c JOIN notes n ON n.id = c.note_id"
        )
        self.set_meta("fts_tokenizer", tokenizer)

    def has_chunks(self) -> bool:
        return self.conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None

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


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)
