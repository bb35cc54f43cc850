"""The index database's schema: named, recorded migrations, in order (``schema.sql`` documents
the result). Never edit a released migration; append a new one."""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
import sqlite3
import sys
import time
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate, groupby, pairwise

from ..links import alias_key, note_keys, written_from_the_notes_folder
from ..migrations import Migrations
from ..text import composes_or_narrows, for_search, may_search_otherwise

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
def m003_index_id(conn: sqlite3.Connection) -> None:
    """A random identity per index database. The FAISS sidecar records it, so a cache is never
    paired with another database (``--rebuild`` builds a new one and swaps it in)."""
    conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('index_id', lower(hex(randomblob(8))))")


@INDEX_MIGRATIONS
def m004_skipped_stat(conn: sqlite3.Connection) -> None:
    """Size and mtime of a file skipped for its content (binary, too large, unreadable): while
    they are unchanged the file is not read again, nor counted as a pending change."""
    conn.executescript(
        """
        ALTER TABLE skipped ADD COLUMN size INTEGER;
        ALTER TABLE skipped ADD COLUMN mtime_ns INTEGER;
        """
    )


@INDEX_MIGRATIONS
def m005_reparse_oversized_frontmatter(conn: sqlite3.Connection) -> None:
    """Indexes made before frontmatter was bounded may hold a huge copy of it (a YAML alias
    bomb stored 254 MB, read on every ask). Forget those notes' stat and hash, so the next
    `brain index` reads and parses them again under the limits."""
    conn.execute("UPDATE notes SET hash = '', mtime_ns = -1 WHERE length(frontmatter) > 16384")


@INDEX_MIGRATIONS
def m006_fts_fold_yo(conn: sqlite3.Connection) -> None:
    """The lexical index folds ё into е (Ё into Е), and is refilled so.

    ``remove_diacritics`` folds Latin accents only: "ёлкин" and "елкин" stay two words, while
    Russian writes either letter for the same word. Titles, headings and text are folded on
    their way into chunks_fts (read only for matching; results show chunks.text) and queries
    are folded the same way (brain/recall/lexical.py).
    """
    conn.executescript(
        f"""
        DROP TRIGGER chunks_fts_insert;
        DROP TRIGGER chunks_fts_title;
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts (rowid, title, heading, text)
            VALUES (
                new.id,
                {fold_yo("(SELECT title FROM notes WHERE id = new.note_id)")},
                {fold_yo("new.heading")},
                {fold_yo("new.text")}
            );
        END;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title ON notes BEGIN
            UPDATE chunks_fts SET title = {fold_yo("new.title")}
            WHERE rowid IN (SELECT id FROM chunks WHERE note_id = new.id);
        END;
        DELETE FROM chunks_fts;
        {FILL_FTS};
        """
    )


def fold_yo(expression: str) -> str:
    """SQL folding ё into е (and Ё into Е) in ``expression``, as the lexical lane folds queries."""
    return f"replace(replace({expression}, 'ё', 'е'), 'Ё', 'Е')"


# Every chunk into chunks_fts, folded: the migration above and a tokenizer change refill with it.
FILL_FTS = (
    "INSERT INTO chunks_fts (rowid, title, heading, text) "
    f"SELECT c.id, {fold_yo('n.title')}, {fold_yo('c.heading')}, {fold_yo('c.text')} "
    "FROM chunks c JOIN notes n ON n.id = c.note_id"
)

# What each BRAIN_FTS_TOKENIZER name means to FTS5.
FTS_TOKENIZERS = {
    # Words, case and Latin accents folded: English, Russian, most alphabets. What m002 creates.
    "unicode61": "unicode61 remove_diacritics 2",
    # Character trigrams: Chinese, Japanese, Korean (no spaces between words). Case folded;
    # accents too where SQLite has the option (3.45+).
    "trigram": "trigram remove_diacritics 1" if sqlite3.sqlite_version_info >= (3, 45) else "trigram",
}
DEFAULT_FTS_TOKENIZER = "unicode61"


@INDEX_MIGRATIONS
def m007_history(conn: sqlite3.Connection) -> None:
    """Memory over time: note versions, the chunks of past versions, and link history.

    The present stays where recall reads it (notes, chunks, links, chunks_fts, FAISS); history
    sits beside it. An existing index starts its history from what it holds now: each note's
    current version recorded from its ``indexed_at``, each of its links an open edge since
    then. Versions recorded this way have no text (the index never kept a note's whole text).
    """
    conn.executescript(
        """
        CREATE TABLE note_versions (
            id INTEGER PRIMARY KEY,
            note_id INTEGER NOT NULL,
            path TEXT NOT NULL,
            title TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',
            hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            date TEXT,
            frontmatter TEXT NOT NULL DEFAULT '{}',
            world_date TEXT,
            valid_from TEXT,
            valid_to TEXT,
            status TEXT,
            content BLOB,
            event TEXT NOT NULL,
            recorded_from REAL NOT NULL,
            recorded_to REAL,
            ended TEXT
        );
        CREATE UNIQUE INDEX note_versions_current ON note_versions (note_id) WHERE recorded_to IS NULL;
        CREATE INDEX note_versions_note ON note_versions (note_id, recorded_from);
        CREATE INDEX note_versions_span ON note_versions (recorded_from, recorded_to);
        CREATE INDEX note_versions_path ON note_versions (path);
        CREATE INDEX note_versions_hash ON note_versions (hash);
        CREATE TABLE chunk_history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            note_id INTEGER NOT NULL,
            hash TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            title TEXT NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        CREATE INDEX chunk_history_content ON chunk_history (note_id, hash, ordinal);
        CREATE VIRTUAL TABLE chunk_history_fts USING fts5 (
            title, heading, text,
            content = 'chunk_history', content_rowid = 'id',
            tokenize = "unicode61 remove_diacritics 2"
        );
        CREATE TRIGGER chunk_history_fts_insert AFTER INSERT ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (rowid, title, heading, text)
            VALUES (new.id, new.title, new.heading, new.text);
        END;
        CREATE TRIGGER chunk_history_fts_delete AFTER DELETE ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
            VALUES ('delete', old.id, old.title, old.heading, old.text);
        END;
        CREATE TABLE link_history (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL,
            target TEXT NOT NULL,
            kind TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 1,
            target_id INTEGER,
            status TEXT NOT NULL DEFAULT 'pending',
            world_date TEXT,
            valid_from TEXT,
            valid_to TEXT,
            note_status TEXT,
            recorded_from REAL NOT NULL,
            recorded_to REAL
        );
        CREATE INDEX link_history_source ON link_history (source_id, recorded_from);
        CREATE INDEX link_history_target ON link_history (target_id, recorded_from);
        CREATE INDEX link_history_span ON link_history (recorded_from, recorded_to);
        CREATE INDEX link_history_open ON link_history (source_id, target, kind) WHERE recorded_to IS NULL;
        CREATE INDEX link_history_pending ON link_history (source_id) WHERE status = 'pending';
        """
    )
    from ..notes import world_time

    rows = conn.execute(
        "SELECT id, path, title, aliases, hash, size, date, frontmatter, indexed_at FROM notes"
    ).fetchall()
    for note_id, path, title, aliases, digest, size, date, frontmatter, indexed_at in rows:
        try:
            meta = json.loads(frontmatter or "{}")
        except ValueError:
            meta = {}
        world = world_time(meta if isinstance(meta, dict) else {})
        conn.execute(
            "INSERT INTO note_versions (note_id, path, title, aliases, hash, size, date, frontmatter, world_date,"
            " valid_from, valid_to, status, content, event, recorded_from)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'recorded', ?)",
            (
                note_id,
                path,
                title,
                aliases,
                digest,
                size,
                date,
                frontmatter,
                world.date,
                world.valid_from,
                world.valid_to,
                world.status,
                indexed_at,
            ),
        )
    conn.execute(
        "INSERT INTO link_history (source_id, target, kind, count, target_id, status, world_date, valid_from,"
        " valid_to, note_status, recorded_from)"
        " SELECT l.source_id, l.target, l.kind, count(*), l.target_id, l.status, v.world_date, v.valid_from,"
        " v.valid_to, v.status, v.recorded_from"
        " FROM links l JOIN note_versions v ON v.note_id = l.source_id AND v.recorded_to IS NULL"
        " GROUP BY l.source_id, l.target, l.kind ORDER BY min(l.id)"
    )
    since = conn.execute("SELECT min(recorded_from) FROM note_versions").fetchone()[0]
    conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('history_since', ?)", (repr(since or time.time()),))


@INDEX_MIGRATIONS
def m008_scan_snapshot(conn: sqlite3.Connection) -> None:
    """A compact copy of every note's path, id, size and mtime, for the walk that compares the
    vault with the index (``IndexStore.note_stats``): one blob read instead of 100,000 rows.
    Any change to those columns deletes it in the same transaction, so whenever it exists it
    is the notes as they are; the next reader stores a new one."""
    conn.executescript(
        """
        CREATE TABLE scan_snapshot (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            data BLOB NOT NULL
        );
        CREATE TRIGGER scan_snapshot_note_insert AFTER INSERT ON notes BEGIN
            DELETE FROM scan_snapshot;
        END;
        CREATE TRIGGER scan_snapshot_note_update AFTER UPDATE OF id, path, size, mtime_ns ON notes BEGIN
            DELETE FROM scan_snapshot;
        END;
        CREATE TRIGGER scan_snapshot_note_delete AFTER DELETE ON notes BEGIN
            DELETE FROM scan_snapshot;
        END;
        """
    )


@INDEX_MIGRATIONS
def m009_compact_chunks(conn: sqlite3.Connection) -> None:
    """Every chunk stored once: vectors as float16, chunks_fts an external-content index.

    At 100,000 notes the index held 6.5 KB per chunk: a float32 vector (1,536 bytes) beside
    ~1 KB of text left one chunk per 4 KB page, and chunks_fts kept a second copy of every
    text. Vectors are now float16 (768 bytes; e5 and MiniLM vectors lose nothing recall can
    tell: cosine moves by ~1e-4), in chunks and chunk_history alike, and read back as
    float32. chunks_fts keeps only its index: its content is the view ``chunks_fts_source``
    (the folded title, heading and text), and the triggers hand FTS5 the old values on a
    delete. A note's chunks are deleted before the note, so that trigger can still read
    the note's title. New chunks enter chunks_fts from ``IndexStore.replace_chunks`` (the
    one writer of chunks), in one statement per note, not from a trigger: FTS5 inside a
    trigger writes its pending terms out at every row, which made inserts four times slower.
    """
    conn.create_function("brain_float16", 1, _float16_blob, deterministic=True)
    conn.execute("UPDATE chunks SET vector = brain_float16(vector)")
    conn.execute("UPDATE chunk_history SET vector = brain_float16(vector)")
    # The vector files hold the float32 originals: a new version makes readers rebuild them
    # from what the database now holds (without the model), as after any change.
    conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1"
        " WHERE key = 'vectors_version' AND EXISTS (SELECT 1 FROM chunks)"
    )
    row = conn.execute("SELECT value FROM meta WHERE key = 'fts_tokenizer'").fetchone()
    tokenizer = row[0] if row and row[0] in FTS_TOKENIZERS else DEFAULT_FTS_TOKENIZER
    conn.executescript(
        f"""
        DROP TRIGGER chunks_fts_insert;
        DROP TRIGGER chunks_fts_delete;
        DROP TRIGGER chunks_fts_title;
        DROP TABLE chunks_fts;
        CREATE VIEW chunks_fts_source AS
            SELECT c.id AS id, {fold_yo("n.title")} AS title, {fold_yo("c.heading")} AS heading,
                   {fold_yo("c.text")} AS text
            FROM chunks c JOIN notes n ON n.id = c.note_id;
        {create_chunks_fts(tokenizer)};
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
            VALUES (
                'delete',
                old.id,
                {fold_yo("(SELECT title FROM notes WHERE id = old.note_id)")},
                {fold_yo("old.heading")},
                {fold_yo("old.text")}
            );
        END;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title ON notes BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
                SELECT 'delete', id, {fold_yo("old.title")}, {fold_yo("heading")}, {fold_yo("text")}
                FROM chunks WHERE note_id = old.id;
            INSERT INTO chunks_fts (rowid, title, heading, text)
                SELECT id, {fold_yo("new.title")}, {fold_yo("heading")}, {fold_yo("text")}
                FROM chunks WHERE note_id = new.id;
        END;
        CREATE TRIGGER notes_delete_chunks BEFORE DELETE ON notes BEGIN
            DELETE FROM chunks WHERE note_id = old.id;
        END;
        {REFILL_FTS};
        """
    )


@INDEX_MIGRATIONS
def m010_name_keys(conn: sqlite3.Connection) -> None:
    """What link resolution needs to touch only what changed (``linking.resolve_links``).

    Each note keeps the keys ``links.Resolver`` files it under (``links.note_keys``: its
    casefolded path and file name without ``.md``), each alias its ``links.alias_key``, all
    indexed: the links of a changed note are resolved against the few notes those keys find,
    not against 100,000. And ``meta.names_version`` counts changes to what resolution depends
    on (a note added, deleted, renamed, or its aliases changed), bumped by triggers in the
    same transaction: equal to ``meta.resolver_key`` (the version links were last resolved
    against), no link but a pending one can resolve differently, and nothing need be hashed.
    The aliases rows are rewritten with every note, so the triggers watch ``notes.aliases``
    (the same list, written in the same statement as the rows by ``IndexStore.write_note``).
    """
    conn.executescript(
        """
        ALTER TABLE notes ADD COLUMN path_key TEXT;
        ALTER TABLE notes ADD COLUMN name_key TEXT;
        ALTER TABLE aliases ADD COLUMN key TEXT;
        """
    )
    conn.executemany(
        "UPDATE notes SET path_key = ?, name_key = ? WHERE id = ?",
        [(*note_keys(path), note_id) for note_id, path in conn.execute("SELECT id, path FROM notes").fetchall()],
    )
    conn.executemany(
        "UPDATE aliases SET key = ? WHERE rowid = ?",
        [(alias_key(alias), rowid) for rowid, alias in conn.execute("SELECT rowid, alias FROM aliases").fetchall()],
    )
    bump = (
        "INSERT INTO meta (key, value) VALUES ('names_version', '1')"
        " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;"
    )
    # Unlike the resolver_key fingerprint it replaces, the version never repeats: links
    # resolved under the old one are resolved once more, in full.
    conn.executescript(
        f"""
        CREATE INDEX notes_path_key ON notes (path_key);
        CREATE INDEX notes_name_key ON notes (name_key);
        CREATE INDEX aliases_key ON aliases (key);
        INSERT OR REPLACE INTO meta (key, value) VALUES ('names_version', '1');
        CREATE TRIGGER names_note_insert AFTER INSERT ON notes BEGIN
            {bump}
        END;
        CREATE TRIGGER names_note_delete AFTER DELETE ON notes BEGIN
            {bump}
        END;
        CREATE TRIGGER names_note_update AFTER UPDATE OF id, path, aliases ON notes
        WHEN old.id IS NOT new.id OR old.path IS NOT new.path OR old.aliases IS NOT new.aliases BEGIN
            {bump}
        END;
        """
    )


@INDEX_MIGRATIONS
def m011_scan_snapshot_log(conn: sqlite3.Connection) -> None:
    """The scan snapshot survives small changes: a log of the notes changed since it was stored.

    m008 deleted the snapshot with any change to a note's id, path, size or mtime, so after
    one edited note the next walk (or the link resolution before m010) read 100,000 rows and
    stored 5.6 MB again. Now the triggers log each changed row instead: (old id, old path) of
    a row updated or deleted, (new id, NULL) of a row inserted or updated. ``note_stats``
    reads the snapshot, drops the entries of logged ids, and reads those ids' rows: the notes
    as they are, whatever happened in between. Past 2,000 log rows the log is not worth
    reading: the snapshot and log are dropped, and the next reader stores a new snapshot.
    Nothing is logged while there is no snapshot.
    """
    conn.executescript(
        """
        DROP TRIGGER scan_snapshot_note_insert;
        DROP TRIGGER scan_snapshot_note_update;
        DROP TRIGGER scan_snapshot_note_delete;
        DELETE FROM scan_snapshot;
        CREATE TABLE scan_snapshot_log (
            note_id INTEGER NOT NULL,
            path TEXT
        );
        CREATE TRIGGER scan_snapshot_note_insert AFTER INSERT ON notes
        WHEN EXISTS (SELECT 1 FROM scan_snapshot) BEGIN
            INSERT INTO scan_snapshot_log (note_id, path) VALUES (new.id, NULL);
        END;
        CREATE TRIGGER scan_snapshot_note_update AFTER UPDATE OF id, path, size, mtime_ns ON notes
        WHEN EXISTS (SELECT 1 FROM scan_snapshot) BEGIN
            INSERT INTO scan_snapshot_log (note_id, path) VALUES (old.id, old.path), (new.id, NULL);
        END;
        CREATE TRIGGER scan_snapshot_note_delete AFTER DELETE ON notes
        WHEN EXISTS (SELECT 1 FROM scan_snapshot) BEGIN
            INSERT INTO scan_snapshot_log (note_id, path) VALUES (old.id, old.path);
        END;
        CREATE TRIGGER scan_snapshot_log_full AFTER INSERT ON scan_snapshot_log
        WHEN new.rowid > 2000 BEGIN
            DELETE FROM scan_snapshot;
            DELETE FROM scan_snapshot_log;
        END;
        """
    )


@INDEX_MIGRATIONS
def m012_name_changes(conn: sqlite3.Connection) -> None:
    """A change of names re-resolves the links it can move, not all of them (``linking.resolve_links``).

    A link can answer differently only when a note filed under one of its keys came, went, or
    changed the names it is filed under (or when its own note moved, and then its links are
    written again, pending). Every key ``links.lookup_keys`` gives a link shares one stem, the
    file name it ends in (``links.link_stem``); ``links.stem_hash`` is that stem's CRC-32 (four
    bytes), indexed. And while ``meta.name_changes_from`` is the names version links were last
    resolved against, triggers log in ``name_changes`` the keys of every note added, deleted,
    renamed or with changed aliases, old and new: its ``name_key`` (its path key's stem is the
    same) and its aliases' keys. The new aliases are logged as their rows are written, after
    the note's (``IndexStore.write_note``), for a note already logged. The links to resolve
    again are those under the logged keys' stems. Past 2,000 rows the log is dropped, with the
    marker: the next resolution is a full one, and starts the log again. A key of NULL (a note
    written by a brain from before m010) means the same. Links get their stems as they are
    written; those an older brain wrote, or written before this migration, at the next
    resolution (``IndexStore.fill_link_stems``).
    """
    logged = "EXISTS (SELECT 1 FROM meta WHERE key = 'name_changes_from')"
    conn.executescript(
        f"""
        ALTER TABLE links ADD COLUMN stem_hash INTEGER;
        CREATE INDEX links_stem ON links (stem_hash);
        CREATE TABLE name_changes (
            note_id INTEGER NOT NULL,
            key TEXT
        );
        CREATE INDEX name_changes_note ON name_changes (note_id);
        CREATE TRIGGER name_changes_note_insert AFTER INSERT ON notes
        WHEN {logged} BEGIN
            INSERT INTO name_changes (note_id, key) VALUES (new.id, new.name_key);
        END;
        CREATE TRIGGER name_changes_note_update AFTER UPDATE OF id, path, aliases ON notes
        WHEN (old.id IS NOT new.id OR old.path IS NOT new.path OR old.aliases IS NOT new.aliases)
        AND {logged} BEGIN
            INSERT INTO name_changes (note_id, key) VALUES (old.id, old.name_key), (new.id, new.name_key);
            INSERT INTO name_changes (note_id, key) SELECT note_id, key FROM aliases WHERE note_id = old.id;
        END;
        CREATE TRIGGER name_changes_note_delete BEFORE DELETE ON notes
        WHEN {logged} BEGIN
            INSERT INTO name_changes (note_id, key) VALUES (old.id, old.name_key);
            INSERT INTO name_changes (note_id, key) SELECT note_id, key FROM aliases WHERE note_id = old.id;
        END;
        CREATE TRIGGER name_changes_alias_insert AFTER INSERT ON aliases
        WHEN {logged} AND EXISTS (SELECT 1 FROM name_changes WHERE note_id = new.note_id) BEGIN
            INSERT INTO name_changes (note_id, key) VALUES (new.note_id, new.key);
        END;
        CREATE TRIGGER name_changes_full AFTER INSERT ON name_changes
        WHEN new.rowid > 2000 BEGIN
            DELETE FROM name_changes;
            DELETE FROM meta WHERE key = 'name_changes_from';
        END;
        """
    )


@INDEX_MIGRATIONS
def m013_fts_title_when_changed(conn: sqlite3.Connection) -> None:
    """The BM25 index takes a note's new title only when the title changed.

    m009's trigger ran on every write of a note (``IndexStore.write_note`` sets every column):
    each edit of a note's words deleted its old chunks from chunks_fts and inserted them again,
    for them to be deleted once more a statement later, with the note's new chunks coming in.
    The same entries result when it runs only for a changed title; an edit writes less to
    FTS5, and never hands it one rowid three times in one transaction.
    """
    conn.executescript(
        f"""
        DROP TRIGGER chunks_fts_title;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title ON notes WHEN old.title IS NOT new.title BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
                SELECT 'delete', id, {fold_yo("old.title")}, {fold_yo("heading")}, {fold_yo("text")}
                FROM chunks WHERE note_id = old.id;
            INSERT INTO chunks_fts (rowid, title, heading, text)
                SELECT id, {fold_yo("new.title")}, {fold_yo("heading")}, {fold_yo("text")}
                FROM chunks WHERE note_id = new.id;
        END;
        """
    )


@INDEX_MIGRATIONS
def m014_links_unresolved(conn: sqlite3.Connection) -> None:
    """The links that are not resolved, indexed: what every run asks of the links table.

    Each `brain index` reports the links by status, and each run that changed a note looks
    for the links still pending: both read every link (500,000 at 100,000 notes, 50 ms a
    pass). Most links resolve, so an index of the others is small: the pending ones are
    found through it, and the resolved ones counted as all links (``count(*)`` reads the
    smallest index) less the others.
    """
    conn.execute("CREATE INDEX links_unresolved ON links (status) WHERE status <> 'resolved'")


@INDEX_MIGRATIONS
def m015_vectors_one_byte_a_value(conn: sqlite3.Connection) -> None:
    """Vectors stored with one signed byte a dimension and a two-byte step (8 + m) × 2**x
    (vector_blobs.py).

    At 100,000 notes a float16 vector was 768 of the 3.4 KB each chunk took; now 386. Each
    value moves by at most half a step (about 1/250 of the vector's largest value; the
    labelled sets' figures within 0.0022, README), and stays exactly a float16, which the
    FAISS file's codes are. The vector files hold the float16 values: a
    new ``vectors_version`` makes readers rebuild them from the database, as m009 did.
    """
    from .vector_blobs import from_float16

    conn.create_function("brain_vector_from_float16", 1, from_float16, deterministic=True)
    conn.execute("UPDATE chunks SET vector = brain_vector_from_float16(vector)")
    conn.execute("UPDATE chunk_history SET vector = brain_vector_from_float16(vector)")
    conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1"
        " WHERE key = 'vectors_version' AND EXISTS (SELECT 1 FROM chunks)"
    )


@INDEX_MIGRATIONS
def m016_names_version_random_step(conn: sqlite3.Connection) -> None:
    """``names_version`` moves by a random step, not by one (the triggers of m010, again).

    What a `brain ask` keeps for the next run (recall-cache.npz: the names and the link graph)
    is stamped with it. An index.db restored from a backup and then given other renames
    counted to the very version the kept file was built at, and its link graph, of notes
    renamed otherwise, was taken over as this index's. A random step is never repeated.
    """
    bump = (
        "INSERT INTO meta (key, value) VALUES ('names_version', '1')"
        " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 + abs(random() % 1073741824);"
    )
    conn.executescript(
        f"""
        DROP TRIGGER names_note_insert;
        DROP TRIGGER names_note_delete;
        DROP TRIGGER names_note_update;
        CREATE TRIGGER names_note_insert AFTER INSERT ON notes BEGIN
            {bump}
        END;
        CREATE TRIGGER names_note_delete AFTER DELETE ON notes BEGIN
            {bump}
        END;
        CREATE TRIGGER names_note_update AFTER UPDATE OF id, path, aliases ON notes
        WHEN old.id IS NOT new.id OR old.path IS NOT new.path OR old.aliases IS NOT new.aliases BEGIN
            {bump}
        END;
        """
    )


@INDEX_MIGRATIONS
def m017_postings_log(conn: sqlite3.Connection) -> None:
    """A log of the chunks whose BM25 entries changed, for the lexical postings (``postings.py``).

    The postings file is a base built from the chunks as they were at one log position; a
    query drops the base's entries of the chunks logged since and scores those chunks as they
    are now. Chunk ids are never reused (AUTOINCREMENT), so a chunk added since is one past the
    base's last id; what must be logged is a chunk deleted, a chunk whose words changed in
    place, and every chunk of a note whose title changed (the title is a BM25 column). A new
    base records the log's position it was read at, and the rows up to it are then deleted.
    """
    conn.executescript(
        """
        CREATE TABLE postings_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            chunk_id INTEGER NOT NULL
        );
        CREATE TRIGGER postings_log_chunk_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO postings_log (chunk_id) VALUES (old.id);
        END;
        CREATE TRIGGER postings_log_chunk_update AFTER UPDATE OF id, note_id, heading, text ON chunks BEGIN
            INSERT INTO postings_log (chunk_id) VALUES (old.id);
            INSERT INTO postings_log (chunk_id) VALUES (new.id);
        END;
        CREATE TRIGGER postings_log_title AFTER UPDATE OF title ON notes WHEN old.title IS NOT new.title BEGIN
            INSERT INTO postings_log (chunk_id) SELECT id FROM chunks WHERE note_id = new.id;
        END;
        """
    )


@INDEX_MIGRATIONS
def m018_past_chunks_shared(conn: sqlite3.Connection) -> None:
    """A past chunk is stored once per note, however many of its versions held it.

    A past version kept a copy of every chunk it had, so a note that only grows (a log, a
    journal appended through the day) paid for its whole length again at each version: 800
    appends of a 59 KB log kept 22,873 past chunks, 60 MB, where 800 differ. Now
    ``chunk_history`` holds each distinct past chunk of a note once (``key``: ``past_chunk_key``
    of its title, heading and text, and ``past_chunk_variant_key`` for one embedded otherwise),
    and ``version_chunks`` holds, for each past content of a note, its chunks' ids in order
    (``pack_ids``). Ids are kept for the chunks that stay (the first of each alike) and never
    reused (the sequence is kept).
    """
    (seq,) = conn.execute(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunk_history'), 0)"
    ).fetchone()
    conn.execute(
        "CREATE TEMP TABLE past_chunk_keys (id INTEGER PRIMARY KEY, note_id INTEGER, hash TEXT, ordinal INTEGER,"
        " key BLOB)"
    )
    first: dict[tuple[int, bytes], bytes] = {}  # (note, key) → the first one's vector, as a digest
    for part in _chunk_history_parts(conn):
        keyed = []
        for chunk_id, note_id, digest, ordinal, title, heading, text, vector in part:
            key = past_chunk_key(title, heading, text)
            seen = hashlib.blake2b(bytes(vector), digest_size=16).digest()
            if first.setdefault((note_id, key), seen) != seen:
                key = past_chunk_variant_key(key, vector)
            keyed.append((chunk_id, note_id, digest, ordinal, key))
        conn.executemany("INSERT INTO temp.past_chunk_keys VALUES (?, ?, ?, ?, ?)", keyed)
    conn.executescript(
        """
        CREATE TEMP TABLE past_chunk_kept AS
            SELECT note_id, key, min(id) AS id FROM past_chunk_keys GROUP BY note_id, key;
        CREATE UNIQUE INDEX temp.past_chunk_kept_key ON past_chunk_kept (note_id, key);
        CREATE TABLE version_chunks (
            note_id INTEGER NOT NULL,
            hash TEXT NOT NULL,
            chunk_ids BLOB NOT NULL,
            PRIMARY KEY (note_id, hash)
        ) WITHOUT ROWID;
        """
    )
    rows = conn.execute(
        "SELECT k.note_id, k.hash, kept.id FROM past_chunk_keys k"
        " JOIN past_chunk_kept kept ON kept.note_id = k.note_id AND kept.key = k.key"
        " ORDER BY k.note_id, k.hash, k.ordinal, k.id"
    )
    contents: dict[tuple[int, str], list[int]] = {}
    for note_id, digest, chunk_id in rows:
        contents.setdefault((note_id, digest), []).append(chunk_id)
    conn.executemany(
        "INSERT INTO version_chunks (note_id, hash, chunk_ids) VALUES (?, ?, ?)",
        ((note_id, digest, pack_ids(ids)) for (note_id, digest), ids in contents.items()),
    )
    conn.executescript(
        """
        DROP TRIGGER chunk_history_fts_insert;
        DROP TRIGGER chunk_history_fts_delete;
        ALTER TABLE chunk_history RENAME TO chunk_history_unshared;
        CREATE TABLE chunk_history (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            note_id INTEGER NOT NULL,
            key BLOB NOT NULL,
            title TEXT NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            vector BLOB NOT NULL
        );
        INSERT INTO chunk_history (id, note_id, key, title, heading, text, vector)
            SELECT c.id, c.note_id, kept.key, c.title, c.heading, c.text, c.vector
            FROM chunk_history_unshared c JOIN past_chunk_kept kept ON kept.id = c.id ORDER BY c.id;
        DROP TABLE chunk_history_unshared;
        CREATE UNIQUE INDEX chunk_history_key ON chunk_history (note_id, key);
        CREATE TRIGGER chunk_history_fts_insert AFTER INSERT ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (rowid, title, heading, text)
            VALUES (new.id, new.title, new.heading, new.text);
        END;
        CREATE TRIGGER chunk_history_fts_delete AFTER DELETE ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
            VALUES ('delete', old.id, old.title, old.heading, old.text);
        END;
        INSERT INTO chunk_history_fts (chunk_history_fts) VALUES ('rebuild');
        DROP TABLE temp.past_chunk_keys;
        DROP TABLE temp.past_chunk_kept;
        """
    )
    conn.execute("DELETE FROM sqlite_sequence WHERE name = 'chunk_history'")
    conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('chunk_history', ?)", (seq,))


@INDEX_MIGRATIONS
def m019_reread_obsidian_forms(conn: sqlite3.Connection) -> None:
    """brain reads more of a note as Obsidian does: a property whose value is a wikilink is a
    link; a markdown link need not end in .md and resolves by file name too; HTML comments hold
    no link or tag; ``\\#`` is no tag and tags differing in case are one; an empty frontmatter
    is empty, not the text up to the note's next rule; an Excalidraw drawing is chunked without
    its scene. Forget the stat and hash of each note an older brain may have read otherwise
    (found by its frontmatter, warnings, tags and chunks' text), so the next `brain index` reads
    it again: the same bytes make no new version, and a chunk of the same text keeps its vector.
    """
    conn.execute(
        """
        UPDATE notes SET hash = '', mtime_ns = -1
        WHERE frontmatter LIKE '%[[%'
            OR frontmatter LIKE '%excalidraw-plugin%' OR path LIKE '%.excalidraw.md'
            OR warnings LIKE '%frontmatter is not a mapping%' OR warnings LIKE '%broken YAML frontmatter%'
            OR id IN (
                SELECT note_id FROM chunks
                WHERE text LIKE '%](%' OR text LIKE '%<!--%' OR text LIKE '%\\#%' OR (ordinal = 0 AND text LIKE '---%')
            )
            OR id IN (
                SELECT a.note_id FROM tags a JOIN tags b
                ON b.note_id = a.note_id AND b.rowid > a.rowid AND lower(b.tag) = lower(a.tag)
            )
        """
    )


@INDEX_MIGRATIONS
def m020_past_texts_in_segments(conn: sqlite3.Connection) -> None:
    """A long past text is kept as segments shared between a note's versions (version_text.py).

    Each version kept its whole text, zlib-compressed, so a note that grows (a log, a journal)
    paid for its whole length again at each version: 800 appends to a log of 255 KB at the end
    kept 17.6 MB of texts. Now a text of ``SEGMENTS_FROM`` bytes or more is cut into segments at
    line ends its own bytes choose, each stored once per note (``text_segments``; their bytes in
    ``text_packs``, those a text brought compressed together), and the version lists them. Every text not kept against its chunks is converted here, in this
    migration's one transaction, and only when it reads back as the bytes its hash names; one
    that does not stays as it was. (The pages freed are reused; ``brain prune --vacuum`` gives
    them back to the disk.)
    """
    conn.executescript(
        """
        CREATE TABLE text_packs (
            id INTEGER PRIMARY KEY,
            note_id INTEGER NOT NULL,
            data BLOB NOT NULL
        );
        CREATE TABLE text_segments (
            id INTEGER PRIMARY KEY,
            note_id INTEGER NOT NULL,
            key BLOB NOT NULL,
            pack_id INTEGER NOT NULL,
            start INTEGER NOT NULL,
            size INTEGER NOT NULL
        );
        CREATE UNIQUE INDEX text_segments_key ON text_segments (note_id, key);
        """
    )
    from .version_text import SEGMENTS_FROM, is_segmented, needs_dictionary, past_text

    after = 0
    while rows := conn.execute(
        "SELECT id, note_id, hash, content FROM note_versions WHERE id > ? AND content IS NOT NULL"
        " ORDER BY id LIMIT 200",
        (after,),
    ).fetchall():
        after = rows[-1][0]
        for version_id, note_id, digest, content in rows:
            blob = bytes(content)
            if is_segmented(blob) or needs_dictionary(blob):
                continue
            try:
                data = zlib.decompress(blob)
            except zlib.error:
                continue
            if len(data) >= SEGMENTS_FROM and hashlib.sha256(data).hexdigest() == digest:
                text = past_text(conn, note_id, data)
                conn.execute("UPDATE note_versions SET content = ? WHERE id = ?", (text, version_id))


@INDEX_MIGRATIONS
def m021_search_text(conn: sqlite3.Connection) -> None:
    """BM25 reads a note's title, headings and text as the index searches them (``text.for_search``).

    FTS5's unicode61 takes every invisible format character for a separator: "pass\\u200bword"
    pasted from the web was "pass" and "word", a soft hyphen split "Kuber\\u00adnetes", and the
    query "password" did not find it; tag characters (an instruction no one sees) were embedded
    with the words. The stored title, heading and text stay as the note holds them; where the
    searched form differs it is kept beside them (``search_title``, ``search_heading``,
    ``search_text``, NULL where it is the same), and the BM25 indexes read that (``searched``).
    The past's index (chunk_history_fts) is made again over a view doing the same and folding
    ё into е as the present's does (it never did: the query's "елка" missed a past "ёлка"), its
    past chunks given their searched form here; it keeps the old one's tokens, and the past chunks
    the view gives otherwise are indexed again (``_keep_past_index``). The notes whose title, path, headings or text hold
    such a character are read again by the next run (the same bytes make no new version): their
    chunks are searched and embedded so, and the other notes' chunks keep their vectors.
    """
    conn.executescript(
        """
        ALTER TABLE notes ADD COLUMN search_title TEXT;
        ALTER TABLE chunks ADD COLUMN search_heading TEXT;
        ALTER TABLE chunks ADD COLUMN search_text TEXT;
        ALTER TABLE chunk_history ADD COLUMN search_title TEXT;
        ALTER TABLE chunk_history ADD COLUMN search_heading TEXT;
        ALTER TABLE chunk_history ADD COLUMN search_text TEXT;
        """
    )
    search_past_chunks(conn)
    conn.create_function("brain_may_search_otherwise", 1, may_search_otherwise, deterministic=True)
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE brain_may_search_otherwise(title)"
        " OR brain_may_search_otherwise(path) OR id IN (SELECT note_id FROM chunks"
        " WHERE brain_may_search_otherwise(heading) OR brain_may_search_otherwise(text))"
    )
    title, heading, text = (
        fold_yo(f"coalesce({prefix}search_{column}, {prefix}{column})")
        for prefix, column in (("n.", "title"), ("c.", "heading"), ("c.", "text"))
    )
    # The past's columns as searched, ё folded as the present's (m006) and the query are: the
    # past's index held ё, and the query's "елка" did not find a past "ёлка".
    past = {
        f"{row}{column}": fold_yo(f"coalesce({row}search_{column}, {row}{column})")
        for row in ("", "new.", "old.")
        for column in ("title", "heading", "text")
    }
    conn.executescript(
        f"""
        DROP VIEW chunks_fts_source;
        CREATE VIEW chunks_fts_source AS
            SELECT c.id AS id, {title} AS title, {heading} AS heading, {text} AS text
            FROM chunks c JOIN notes n ON n.id = c.note_id;
        DROP TRIGGER chunks_fts_delete;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
            VALUES (
                'delete',
                old.id,
                {fold_yo("(SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id)")},
                {fold_yo("coalesce(old.search_heading, old.heading)")},
                {fold_yo("coalesce(old.search_text, old.text)")}
            );
        END;
        DROP TRIGGER chunks_fts_title;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title, search_title ON notes
        WHEN coalesce(old.search_title, old.title) IS NOT coalesce(new.search_title, new.title) BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
                SELECT 'delete', id, {fold_yo("coalesce(old.search_title, old.title)")},
                       {fold_yo("coalesce(search_heading, heading)")}, {fold_yo("coalesce(search_text, text)")}
                FROM chunks WHERE note_id = old.id;
            INSERT INTO chunks_fts (rowid, title, heading, text)
                SELECT id, {fold_yo("coalesce(new.search_title, new.title)")},
                       {fold_yo("coalesce(search_heading, heading)")}, {fold_yo("coalesce(search_text, text)")}
                FROM chunks WHERE note_id = new.id;
        END;
        DROP TRIGGER postings_log_title;
        CREATE TRIGGER postings_log_title AFTER UPDATE OF title, search_title ON notes
        WHEN coalesce(old.search_title, old.title) IS NOT coalesce(new.search_title, new.title) BEGIN
            INSERT INTO postings_log (chunk_id) SELECT id FROM chunks WHERE note_id = new.id;
        END;
        DROP TRIGGER postings_log_chunk_update;
        CREATE TRIGGER postings_log_chunk_update
        AFTER UPDATE OF id, note_id, heading, text, search_heading, search_text ON chunks BEGIN
            INSERT INTO postings_log (chunk_id) VALUES (old.id);
            INSERT INTO postings_log (chunk_id) VALUES (new.id);
        END;
        DROP TRIGGER chunk_history_fts_insert;
        DROP TRIGGER chunk_history_fts_delete;
        ALTER TABLE chunk_history_fts RENAME TO chunk_history_fts_before;
        CREATE VIEW chunk_history_fts_source AS
            SELECT id, {past["title"]} AS title, {past["heading"]} AS heading, {past["text"]} AS text
            FROM chunk_history;
        {create_past_fts(DEFAULT_FTS_TOKENIZER)};
        CREATE TRIGGER chunk_history_fts_insert AFTER INSERT ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (rowid, title, heading, text)
            VALUES (new.id, {past["new.title"]}, {past["new.heading"]}, {past["new.text"]});
        END;
        CREATE TRIGGER chunk_history_fts_delete AFTER DELETE ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
            VALUES ('delete', old.id, {past["old.title"]}, {past["old.heading"]}, {past["old.text"]});
        END;
        CREATE TRIGGER chunk_history_fts_update
        AFTER UPDATE OF id, title, heading, text, search_title, search_heading, search_text ON chunk_history BEGIN
            INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
            VALUES ('delete', old.id, {past["old.title"]}, {past["old.heading"]}, {past["old.text"]});
            INSERT INTO chunk_history_fts (rowid, title, heading, text)
            VALUES (new.id, {past["new.title"]}, {past["new.heading"]}, {past["new.text"]});
        END;
        """
    )
    _keep_past_index(conn)


# A past chunk the past's index holds otherwise than the view gives it: its searched form differs, or
# it holds ё or Ё (folded now). The others are indexed as they were.
_PAST_OTHERWISE = " OR ".join(
    [f"search_{column} IS NOT NULL" for column in ("title", "heading", "text")]
    + [f"instr({column}, '{letter}')" for column in ("title", "heading", "text") for letter in "ёЁ"]
)


def _keep_past_index(conn: sqlite3.Connection) -> None:
    """m021's past index (chunk_history_fts, made again over its view) given the tokens of the one it
    replaces, the same tokenizer's over the same rows, and only the past chunks the view gives
    otherwise indexed again. A 'rebuild' tokenized every past chunk: 67 of a 76 s upgrade at 500,000
    past chunks (bench/upgrade_cost.py). Where most past chunks are given otherwise (a vault writing
    ё), taking each out and in again costs more than the rebuild, which is done then. The old tokens
    wait in temporary tables while the old table goes, so the new one takes the pages it freed
    (copied beside it, index.db grew by their size); the new table is written only after the copy,
    so FTS5 reads its structure from the copied rows."""
    before = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunk_history_fts_before'").fetchone()[0]
    shadows = ("data", "idx", "docsize", "config")
    # the past chunks to index again, found in one pass over the past's text
    conn.execute(f"CREATE TEMP TABLE past_otherwise AS SELECT id FROM chunk_history WHERE {_PAST_OTHERWISE}")
    otherwise = conn.execute("SELECT count(*) FROM temp.past_otherwise").fetchone()[0]
    past = conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
    # another tokenizer's tokens are of no use (m021 makes the table with this one)
    kept = 'tokenize = "unicode61 remove_diacritics 2"' in before and 2 * otherwise < past
    if kept:
        for shadow in shadows:
            conn.execute(f"CREATE TEMP TABLE past_fts_{shadow} AS SELECT * FROM chunk_history_fts_before_{shadow}")
    conn.execute("DROP TABLE chunk_history_fts_before")
    if not kept:
        conn.execute("DROP TABLE temp.past_otherwise")
        conn.execute("INSERT INTO chunk_history_fts (chunk_history_fts) VALUES ('rebuild')")
        return
    for shadow in shadows:
        conn.execute(f"DELETE FROM chunk_history_fts_{shadow}")
        conn.execute(f"INSERT INTO chunk_history_fts_{shadow} SELECT * FROM temp.past_fts_{shadow}")
        conn.execute(f"DROP TABLE temp.past_fts_{shadow}")
    # What the old index holds of them is their stored columns, as its triggers gave them.
    conn.execute(
        "INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)"
        " SELECT 'delete', id, title, heading, text FROM chunk_history WHERE id IN temp.past_otherwise"
    )
    conn.execute(
        "INSERT INTO chunk_history_fts (rowid, title, heading, text) SELECT id, title, heading, text"
        " FROM chunk_history_fts_source WHERE id IN temp.past_otherwise"
    )
    conn.execute("DROP TABLE temp.past_otherwise")


@INDEX_MIGRATIONS
def m022_title_in_first_chunks(conn: sqlite3.Connection) -> None:
    """BM25 reads a note's title in its first ``TITLED_CHUNKS`` chunks (64), not in every chunk.

    FTS5 counts a term's documents by row, and each chunk is a row: a note of 400 chunks (a log,
    a book) put its title's words in 400 rows, and in a vault of a few thousand chunks those
    words became common (IDF near 0, or over a quarter of the rows: dropped from the query);
    the note, and every other note whose title shares a word with it, lost the weight a search
    by title gives. A note's first 64 chunks hold its title; the others hold '' in the title
    column and their heading path without a first heading that repeats the title (``# Zephyr
    log`` atop a note of that name: in every chunk's path). The view and triggers hand FTS5
    those forms (``lexical_title``, ``lexical_heading``); a rename re-indexes the note's chunks
    as before. Only the chunks past a note's first 64 are indexed again, taken out as m021's view
    gives them, which is what chunks_fts holds (a chunk m021 found but that no run read since has
    no searched form yet: its text as stored); a 'rebuild' read every chunk, 49 of 53 s at
    bench/scale.py's 100,000 notes, where none is past the 64th (bench/upgrade_cost.py). No chunk
    is embedded again; the lexical postings, read from the old form, are dropped (built again by
    the next run). The
    past is scored alike where it is read (``PastIndex``).
    """
    title, heading, text = (
        fold_yo(f"coalesce({prefix}search_{column}, {prefix}{column})")
        for prefix, column in (("n.", "title"), ("c.", "heading"), ("c.", "text"))
    )
    deleted_title = fold_yo("(SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id)")
    conn.executescript(
        f"""
        DROP VIEW chunks_fts_source;
        CREATE VIEW chunks_fts_source AS
            SELECT c.id AS id, {lexical_title(title, "c.ordinal")} AS title,
                   {lexical_heading(heading, title, "c.ordinal")} AS heading, {text} AS text
            FROM chunks c JOIN notes n ON n.id = c.note_id;
        DROP TRIGGER chunks_fts_delete;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
            VALUES (
                'delete',
                old.id,
                {lexical_title(deleted_title, "old.ordinal")},
                {lexical_heading(fold_yo("coalesce(old.search_heading, old.heading)"), deleted_title, "old.ordinal")},
                {fold_yo("coalesce(old.search_text, old.text)")}
            );
        END;
        DROP TRIGGER chunks_fts_title;
        CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title, search_title ON notes
        WHEN coalesce(old.search_title, old.title) IS NOT coalesce(new.search_title, new.title) BEGIN
            INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
                SELECT 'delete', id, {lexical_title(fold_yo("coalesce(old.search_title, old.title)"), "ordinal")},
                       {lexical_heading(fold_yo("coalesce(search_heading, heading)"), fold_yo("coalesce(old.search_title, old.title)"), "ordinal")},
                       {fold_yo("coalesce(search_text, text)")}
                FROM chunks WHERE note_id = old.id;
            INSERT INTO chunks_fts (rowid, title, heading, text)
                SELECT id, {lexical_title(fold_yo("coalesce(new.search_title, new.title)"), "ordinal")},
                       {lexical_heading(fold_yo("coalesce(search_heading, heading)"), fold_yo("coalesce(new.search_title, new.title)"), "ordinal")},
                       {fold_yo("coalesce(search_text, text)")}
                FROM chunks WHERE note_id = new.id;
        END;
        INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
            SELECT 'delete', c.id, {title}, {heading}, {text} FROM chunks c JOIN notes n ON n.id = c.note_id
            WHERE c.id IN (SELECT id FROM chunks WHERE ordinal >= {TITLED_CHUNKS});
        INSERT INTO chunks_fts (rowid, title, heading, text)
            SELECT id, title, heading, text FROM chunks_fts_source
            WHERE id IN (SELECT id FROM chunks WHERE ordinal >= {TITLED_CHUNKS});
        DELETE FROM meta WHERE key = 'postings_stamp';
        DELETE FROM postings_log;
        INSERT OR REPLACE INTO meta (key, value)
            VALUES ('postings_cleared', coalesce((SELECT value FROM meta WHERE key = 'postings_cleared'), 0) + 1);
        """
    )


# The chunks of a note whose BM25 row holds its title (m022): its first 64. The title in every
# chunk helps a chunk that matches a query's title and body words at once; a note counts at
# most this many times for its title's words. Measured (bench/quality_ablation.py, MiniLM, five
# sets): the title in the first chunk alone cost four sets 0.002-0.010 nDCG@10, in the first 16
# cost two; 64 changes only notes longer (6 of vaultofknowledge's, none of the others') and
# moves no query.
TITLED_CHUNKS = 64


def lexical_title(title: str, ordinal: str) -> str:
    """SQL: the title column of a chunk (m022): the note's title in its first ``TITLED_CHUNKS``, else ''."""
    return f"CASE WHEN {ordinal} < {TITLED_CHUNKS} THEN {title} ELSE '' END"


def lexical_heading(heading: str, title: str, ordinal: str) -> str:
    """SQL: the heading column of a chunk (m022): its heading path, less a first heading equal to
    the note's title past the first ``TITLED_CHUNKS`` (``as_indexed`` in Python)."""
    return (
        f"CASE WHEN {ordinal} < {TITLED_CHUNKS} OR {title} = '' THEN {heading} WHEN {heading} = {title} THEN ''"
        f" WHEN substr({heading}, 1, length({title}) + 3) = {title} || ' > '"
        f" THEN substr({heading}, length({title}) + 4) ELSE {heading} END"
    )


def as_indexed(title: str, heading: str, titled: bool) -> tuple[str, str]:
    """(title, heading) columns of a chunk as chunks_fts holds them (m022's SQL, in Python;
    ``titled``: among its note's first ``TITLED_CHUNKS``): the past's chunks are scored so
    (``PastIndex``)."""
    if titled or not title:
        return title, heading
    if heading == title:
        return "", ""
    return "", heading[len(title) + 3 :] if heading.startswith(title + " > ") else heading


@INDEX_MIGRATIONS
def m023_composed_and_narrow(conn: sqlite3.Connection) -> None:
    """BM25 reads one word however it is composed or however wide its letters are.

    A word typed composed and stored decomposed (macOS names files so: "Мой" as "и" + U+0306 was
    the word "мои" to FTS5, Greek "ά" lost its accent) was another word, and so were full-width
    "ＳＱＬｉｔｅ" and "２０２４" (CJK text) and "sqlite", "2024": ``text.for_search`` now reads
    text composed (NFC) and those widths as the usual letters. The searched form of every chunk,
    title and past chunk it changes is stored here (BM25 finds their words at once), and the
    notes holding one are read again by the next run (the same bytes make no new version), for
    the chunks whose embedded text changes to be embedded again. The tokenizer is unchanged.
    """
    conn.create_function("brain_composes_or_narrows", 1, composes_or_narrows, deterministic=True)
    conn.create_function("brain_searched", 1, searched, deterministic=True)
    # chunks_fts_title and postings_log_title follow the title; chunk_history_fts's triggers the past
    conn.execute(
        "UPDATE notes SET search_title = brain_searched(title), hash = '', mtime_ns = -1"
        " WHERE brain_composes_or_narrows(title) OR brain_composes_or_narrows(path)"
        " OR id IN (SELECT note_id FROM chunks WHERE brain_composes_or_narrows(heading)"
        " OR brain_composes_or_narrows(text))"
    )
    # no trigger writes a chunk's changed words to chunks_fts: its rows go out as they were
    # indexed and come back as searched now (postings_log_chunk_update records them for the postings)
    conn.execute(
        "CREATE TEMP TABLE m023_chunks AS SELECT id FROM chunks"
        " WHERE brain_composes_or_narrows(heading) OR brain_composes_or_narrows(text)"
    )
    changed = "SELECT id, title, heading, text FROM chunks_fts_source WHERE id IN (SELECT id FROM temp.m023_chunks)"
    conn.execute(
        f"INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text) SELECT 'delete', * FROM ({changed})"
    )
    conn.execute(
        "UPDATE chunks SET search_heading = brain_searched(heading), search_text = brain_searched(text)"
        " WHERE id IN (SELECT id FROM temp.m023_chunks)"
    )
    conn.execute(f"INSERT INTO chunks_fts (rowid, title, heading, text) {changed}")
    conn.execute("DROP TABLE temp.m023_chunks")
    search_past_chunks(conn)


# It only stores searched forms and writes those chunks' BM25 rows out and back as they are: run
# again, it gives the same rows (the notes it marks are read again, and keep their vectors).
INDEX_MIGRATIONS.safe_to_run_again.add("m023_composed_and_narrow")


# A version's world time as the edges its links made keep it (``link_history``'s world_date,
# valid_from, valid_to, note_status): what ``Recorder._sync_edges`` compares.
_VERSION_WORLD = "world_date, valid_from, valid_to, status"
_Span = tuple[int, float, float | None, tuple]  # note id, recorded_from, recorded_to, world time


def _versions_world(conn: sqlite3.Connection, version_ids: Sequence[int]) -> dict[int, _Span]:
    out: dict[int, _Span] = {}
    for at in range(0, len(version_ids), 500):
        part = version_ids[at : at + 500]
        for version_id, note_id, start, end, *world in conn.execute(
            f"SELECT id, note_id, recorded_from, recorded_to, {_VERSION_WORLD} FROM note_versions"
            f" WHERE id IN ({', '.join('?' * len(part))})",
            part,
        ):
            out[version_id] = (note_id, start, end, tuple(world))
    return out


def _edges_follow_versions(conn: sqlite3.Connection, before: dict[int, _Span], after: dict[int, _Span]) -> None:
    """The edges a note's links made while a version was current keep its world time as it is now
    read (``after``; ``before``: as it was): a migration that reads the versions' world time
    again (m024, m025, m030, m032) gives it to their edges too, so that the past's edges say what
    its versions say, and the next run, reading the note again, finds its open edges in step
    (it closed them and opened them anew: the link history said the note changed at the
    upgrade). An edge over versions now read otherwise is cut where they meet."""
    changed: dict[int, list[tuple[float, float, tuple, tuple]]] = {}
    for version_id, (note_id, start, end, world) in after.items():
        if world != before[version_id][3]:
            changed.setdefault(note_id, []).append(
                (start, math.inf if end is None else end, before[version_id][3], world)
            )
    writes: _EdgeWrites = ([], [], [])
    for note_id, versions in sorted(changed.items()):
        edges = conn.execute(
            "SELECT id, source_id, target, kind, count, target_id, status, recorded_from, recorded_to,"
            " world_date, valid_from, valid_to, note_status FROM link_history WHERE source_id = ?",
            (note_id,),
        ).fetchall()
        for edge_id, *columns, recorded_from, recorded_to, ew, evf, evt, ens in edges:
            stamp = (ew, evf, evt, ens)
            ends = math.inf if recorded_to is None else recorded_to
            ours = [(v[0], v[1], v[3]) for v in versions if v[2] == stamp and v[0] < ends and v[1] > recorded_from]
            if ours:
                _cut_edge(writes, edge_id, columns, recorded_from, ends, stamp, ours)
    _write_edges(conn, writes)


# link_history's rows ``_cut_edge`` writes: (world time, id) and (world time, recorded_from,
# recorded_to, id) to update (most edges keep their span: its indexes are left as they are),
# (source_id … status, world time, recorded_from, recorded_to) to insert.
_EdgeWrites = tuple[list[tuple], list[tuple], list[tuple]]


def _cut_edge(
    writes: _EdgeWrites,
    edge_id: int,
    columns: Sequence,
    recorded_from: float,
    ends: float,
    stamp: tuple,
    versions: Sequence[tuple[float, float, tuple]],
) -> None:
    """An edge (``link_history``'s row ``edge_id``: its ``columns`` from source_id to status,
    recorded from ``recorded_from`` to ``ends``, math.inf while open, stamped ``stamp``) takes
    the world time of the ``versions`` (from, to, world time) current over it: cut where they
    meet, a part no version covers keeping its stamp, the parts alike one. The rows to write are
    added to ``writes`` (``_write_edges`` writes them)."""
    cuts = sorted({recorded_from, ends, *(t for v in versions for t in v[:2] if recorded_from < t < ends)})
    pieces: list[list] = []  # [from, to, world time]
    for start, end in pairwise(cuts):
        world = next((v[2] for v in versions if v[0] <= start and end <= v[1]), stamp)
        if pieces and pieces[-1][2] == world:
            pieces[-1][1] = end
        else:
            pieces.append([start, end, world])
    for at, (start, end, world) in enumerate(pieces):
        row = (*world, start, None if end == math.inf else end)
        if at == 0 and len(pieces) == 1:
            writes[0].append((*world, edge_id))
        elif at == 0:
            writes[1].append((*row, edge_id))
        else:
            writes[2].append((*columns, *row))


def _write_edges(conn: sqlite3.Connection, writes: _EdgeWrites) -> None:
    conn.executemany(
        "UPDATE link_history SET world_date = ?, valid_from = ?, valid_to = ?, note_status = ? WHERE id = ?", writes[0]
    )
    conn.executemany(
        "UPDATE link_history SET world_date = ?, valid_from = ?, valid_to = ?, note_status = ?,"
        " recorded_from = ?, recorded_to = ? WHERE id = ?",
        writes[1],
    )
    conn.executemany(
        "INSERT INTO link_history (source_id, target, kind, count, target_id, status, world_date,"
        " valid_from, valid_to, note_status, recorded_from, recorded_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        writes[2],
    )


def _read_dates_again(conn: sqlite3.Connection, read_otherwise: Callable[[str | None], bool]) -> None:
    """The notes whose stored frontmatter ``read_otherwise`` says the rules now read otherwise are
    read again by the next run (hash and mtime cleared: the same bytes make no new version and keep
    their vectors); their past versions' dates and world dates are read again here, a version's date
    kept where no field gives one (the file's modification time then is not kept)."""
    from ..notes import frontmatter_date, world_time

    conn.create_function("brain_read_otherwise", 1, read_otherwise, deterministic=True)
    conn.execute("UPDATE notes SET hash = '', mtime_ns = -1 WHERE brain_read_otherwise(frontmatter)")
    rows = conn.execute(
        "SELECT id, date, frontmatter FROM note_versions WHERE brain_read_otherwise(frontmatter)"
    ).fetchall()
    before = _versions_world(conn, [row[0] for row in rows])
    for version_id, date, frontmatter in rows:
        meta = json.loads(frontmatter)
        world = world_time(meta)
        conn.execute(
            "UPDATE note_versions SET date = ?, world_date = ?, valid_from = ?, valid_to = ? WHERE id = ?",
            (frontmatter_date(meta) or date, world.date, world.valid_from, world.valid_to, version_id),
        )
    _edges_follow_versions(conn, before, _versions_world(conn, [row[0] for row in rows]))


@INDEX_MIGRATIONS
def m024_frontmatter_dates(conn: sqlite3.Connection) -> None:
    """A frontmatter date is read by the rules ``--as-of`` reads (``moments.written_date``):
    Python's ``fromisoformat`` read ``date: 2026-12-01+03`` as 03:00 and ``2026-12-01x10`` as
    10:00. A note's date and world dates are stored when it is read, and a note whose bytes do not
    change is not read again: the notes whose stored frontmatter holds a date written otherwise
    than as the ISO form brain reads it to (YAML's own dates are stored so, and are left) are read
    again by the next run (the same bytes make no new version, and keep their vectors); their
    past versions' world dates, and their dates where a field gives one, are read again here."""
    from ..notes import frontmatter_dates_written_otherwise

    _read_dates_again(conn, frontmatter_dates_written_otherwise)


# It marks notes to be read again and sets past versions' dates from their frontmatter: run
# again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m024_frontmatter_dates")


@INDEX_MIGRATIONS
def m025_frontmatter_dates_in_ascii_digits(conn: sqlite3.Connection) -> None:
    """A frontmatter date is read in ASCII digits alone, as YAML's dates and Obsidian's date
    properties are and as a typed moment (``--as-of``) is: ``date: ٢٠٢٤-٠٣-٠١`` (or fullwidth
    ``２０２４-０３-０１``, Devanagari…), which Python's ``\\d`` and ``int`` read as 2024-03-01, is no date
    (a warning names it and its ASCII form). The notes whose stored frontmatter holds a date field
    with such digits are read again by the next run, as m024's are (the same bytes make no new
    version, and keep their vectors); their past versions' world dates are read again here, and
    their dates where a field gives one (else the date stored stays: the file's modification
    time then is not kept)."""
    from ..notes import frontmatter_dates_in_other_digits

    _read_dates_again(conn, frontmatter_dates_in_other_digits)


# As m024: it marks notes to be read again and sets past versions' dates from their frontmatter.
INDEX_MIGRATIONS.safe_to_run_again.add("m025_frontmatter_dates_in_ascii_digits")


def _read_again_notes_with_a_chunk(
    conn: sqlite3.Connection, looks_like: str, holds: Callable[[str | None], bool]
) -> None:
    """Marks the notes with a chunk that ``holds`` what a migration's reading changed, to be read
    again by the next run (hash and mtime cleared: the same bytes make no new version, and a chunk
    of the same text keeps its vector). ``looks_like``, a LIKE pattern every such chunk matches,
    spares most chunks ``holds``, Python called from SQLite for each chunk it passes."""
    conn.create_function("brain_chunk_read_otherwise", 1, holds, deterministic=True)
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id IN"
        " (SELECT note_id FROM chunks WHERE text LIKE ? AND brain_chunk_read_otherwise(text))",
        (looks_like,),
    )


# A line that opened a fence before m026 and opens none now: a run of backticks with another
# backtick after it on the line ("```make test```").
_INLINE_TRIPLE_BACKTICKS = re.compile(r"^ {0,3}`{3,}(?!`)[^`\n]*`", re.MULTILINE)


def _holds_inline_triple_backticks(text: str | None) -> bool:
    return text is not None and _INLINE_TRIPLE_BACKTICKS.search(text) is not None


@INDEX_MIGRATIONS
def m026_inline_code_in_triple_backticks(conn: sqlite3.Connection) -> None:
    """A line that starts with backticks and has another backtick after them (```` ```make test``` ````)
    is inline code, as CommonMark and Obsidian read it, not a fence: brain read it as a fence
    that nothing closed, and the rest of the note held no link, no tag and no heading. The notes
    whose chunks hold such a line are read again by the next run (hash and mtime cleared: the
    same bytes make no new version, and a chunk of the same text keeps its vector)."""
    _read_again_notes_with_a_chunk(conn, "%```%`%", _holds_inline_triple_backticks)


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m026_inline_code_in_triple_backticks")


# A heading that ends in a "#" after a word ("## Learn C#"): read as closing, before m027. As
# ``links.heading_of`` reads a heading: after its "#"s any white space (a no-break space too),
# and its closing "#"s close only after a space or a tab ("## C\u00a0#" is "C\u00a0#" now, "C" then).
_HASH_ENDED_HEADING = re.compile(r"^ {0,3}#{1,6}[^\S\n][^\n]*[^ \t#\n]#+[ \t]*$", re.MULTILINE)


# What every such heading ends in: a line ending in "#". Searched first, it spares the heading's
# search most chunks (150,010 chunks of bench/upgrade_cost.py's vault: 0.3 s, against 2.2-2.8 s).
_HASH_AT_LINE_END = re.compile(r"#[ \t]*$", re.MULTILINE)


def _holds_hash_ended_heading(text: str | None) -> bool:
    return (
        text is not None and _HASH_AT_LINE_END.search(text) is not None and _HASH_ENDED_HEADING.search(text) is not None
    )


@INDEX_MIGRATIONS
def m027_headings_ending_in_a_hash(conn: sqlite3.Connection) -> None:
    """A heading's closing #s close it only after a space or a tab, as CommonMark and Obsidian
    read them: brain read "## Learn C#" as "Learn C", in every chunk's heading path under it. The
    notes whose chunks hold such a heading are read again by the next run (hash and mtime
    cleared: the same bytes make no new version; their chunks under it, of a new heading, are
    embedded again)."""
    _read_again_notes_with_a_chunk(conn, "%#%", _holds_hash_ended_heading)


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m027_headings_ending_in_a_hash")


# A tags or aliases key in other case than brain read before m028 ("Tags", "ALIASES"), in a
# stored frontmatter (JSON).
_KEY_IN_OTHER_CASE = re.compile(r'"(?!(?:tags?|alias(?:es)?)")(?i:tags?|alias(?:es)?)":')


def _holds_key_in_other_case(frontmatter: str | None) -> bool:
    return frontmatter is not None and _KEY_IN_OTHER_CASE.search(frontmatter) is not None


@INDEX_MIGRATIONS
def m028_tags_and_aliases_in_any_case(conn: sqlite3.Connection) -> None:
    """A note's tags and aliases are read from its ``Tags:`` or ``Aliases:`` property too (any
    case), as Obsidian reads them: brain read only ``tags``/``tag`` and ``aliases``/``alias``, so a
    link to such an alias was dangling and the tags missing. The notes whose stored frontmatter
    holds such a key are read again by the next run (hash and mtime cleared: the same bytes make
    no new version, and a chunk of the same text keeps its vector)."""
    conn.create_function("brain_key_in_other_case", 1, _holds_key_in_other_case, deterministic=True)
    conn.execute("UPDATE notes SET hash = '', mtime_ns = -1 WHERE brain_key_in_other_case(frontmatter)")


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m028_tags_and_aliases_in_any_case")


@INDEX_MIGRATIONS
def m029_wikilinks_from_the_notes_folder(conn: sqlite3.Connection) -> None:
    """A wikilink written from the linking note's folder (``[[../Other/Note]]``, ``[[./Note]]``,
    Obsidian's "Relative path to file" format) resolves there, as Obsidian resolves it: brain left
    it dangling. The notes that hold one are read again by the next run, and their links
    resolved (hash and mtime cleared: the same bytes make no new version, and a chunk of the same
    text keeps its vector). A target is read as the resolver reads it (``written_from_the_notes_folder``):
    ``[[..\\Other\\Note]]`` and ``[[/../Other/Note]]`` are such links, ``[[../]]`` is none."""
    conn.create_function("brain_from_the_notes_folder", 1, written_from_the_notes_folder, deterministic=True)
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id IN (SELECT source_id FROM links"
        " WHERE kind != 'markdown' AND target LIKE '%.%' AND brain_from_the_notes_folder(target))"
    )


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m029_wikilinks_from_the_notes_folder")


@INDEX_MIGRATIONS
def m030_date_keys_in_any_case(conn: sqlite3.Connection) -> None:
    """A note's date is read from its ``Created:`` or ``DATE:`` property too (any case, the usual
    key first), as its world date already was (``world_time``): ``Created: 2024-01-01`` set the
    world date but the note's date fell back to the file's modification time. The notes whose
    stored frontmatter holds a date field under such a key are read again by the next run, as
    m024's are (the same bytes make no new version, and keep their vectors); their past versions'
    dates are read again here."""
    from ..notes import frontmatter_date_key_in_other_case

    _read_dates_again(conn, frontmatter_date_key_in_other_case)


# As m024: it marks notes to be read again and sets past versions' dates from their frontmatter.
INDEX_MIGRATIONS.safe_to_run_again.add("m030_date_keys_in_any_case")


# A line a "#" opens (a heading's, before m031, where chunks hold it: whole, stripped).
_HASH_OPENED_LINE = re.compile(r"^[ \t]*#", re.MULTILINE)


def may_hide_a_heading(text: str | None) -> bool:
    """Whether ``text``, a note's chunks in order one after another, may hold a line a "#" opens
    inside an HTML comment, which m031 reads as no heading (``links.comment_hidden_lines``). It
    never says no of a note whose chunking m031 changes (tests/test_chunking.py holds it to that
    over random notes), and says no of a note without ``<!--``, of a comment closed on its line or
    before any heading, and of an arrow (``A --> B``) with no comment open before it. Where code
    may hide a comment's mark (a backtick or a tilde between its ``<!--`` and ``-->``), any "#"
    line after its ``<!--`` with a ``-->`` after it counts: chunks hold a fence's lines in pieces,
    and a chunk's overlap again, so what is code cannot be read from them."""
    if text is None or "<!--" not in text:
        return False
    lines = [match.start() for match in _HASH_OPENED_LINE.finditer(text)]
    done = 0
    while lines and (start := text.find("<!--", done)) >= 0:
        end = text.find("-->", start + 2)  # "<!-->" closes itself, as mask_comments reads it
        if end < 0:  # an unclosed "<!--" hides nothing
            return False
        first = bisect.bisect_right(lines, start)
        if "`" in text[start:end] or "~" in text[start:end]:
            return first < len(lines) and lines[first] < text.rfind("-->")
        if first < len(lines) and lines[first] < end:
            return True
        done = end + 3
    return False


def _notes_hiding_a_heading(conn: sqlite3.Connection) -> list[int]:
    """The notes whose chunks (in order) ``may_hide_a_heading``: m031's."""
    rows = conn.execute(
        "SELECT note_id, text FROM chunks WHERE note_id IN (SELECT note_id FROM chunks WHERE text LIKE '%<!--%')"
        " ORDER BY note_id, ordinal"
    )
    marked = [
        note_id
        for note_id, chunks in groupby(rows, key=lambda row: row[0])
        if may_hide_a_heading("\n".join(text for _, text in chunks))
    ]
    return marked


@INDEX_MIGRATIONS
def m031_no_headings_in_html_comments(conn: sqlite3.Connection) -> None:
    """A ``# heading`` inside an HTML comment (``<!-- … -->``) is none, as Obsidian hides the
    comment and brain reads no link or tag in it: it made a chunk heading, the rest of the comment
    and what followed filed under it. The notes whose chunks may hold such a heading
    (``may_hide_a_heading``: not every note with ``-->``, a mermaid arrow's mark) are read again by
    the next run (hash and mtime cleared: the same bytes make no new version, and a chunk of the
    same text keeps its vector)."""
    conn.executemany(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id = ?",
        [(note_id,) for note_id in _notes_hiding_a_heading(conn)],
    )


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m031_no_headings_in_html_comments")


@INDEX_MIGRATIONS
def m032_status_key_in_any_case(conn: sqlite3.Connection) -> None:
    """A note's status is read from its ``Status:`` property too (any case, the usual key first),
    as its dates, aliases and tags are: ``Status: done`` left it none. The notes whose stored
    frontmatter holds such a key are read again by the next run (hash and mtime cleared: the same
    bytes make no new version, and keep their vectors; their open edges take the status); their
    past versions' status is read again here."""
    from ..notes import frontmatter_status_key_in_other_case, world_time

    conn.create_function("brain_status_key_in_other_case", 1, frontmatter_status_key_in_other_case, deterministic=True)
    conn.execute("UPDATE notes SET hash = '', mtime_ns = -1 WHERE brain_status_key_in_other_case(frontmatter)")
    rows = conn.execute(
        "SELECT id, frontmatter FROM note_versions WHERE brain_status_key_in_other_case(frontmatter)"
    ).fetchall()
    before = _versions_world(conn, [row[0] for row in rows])
    for version_id, frontmatter in rows:
        meta = json.loads(frontmatter)
        status = world_time(meta if isinstance(meta, dict) else {}).status
        conn.execute("UPDATE note_versions SET status = ? WHERE id = ?", (status, version_id))
    _edges_follow_versions(conn, before, _versions_world(conn, [row[0] for row in rows]))


# It marks notes to be read again and sets past versions' status from their frontmatter.
INDEX_MIGRATIONS.safe_to_run_again.add("m032_status_key_in_any_case")


# A heading line holding an HTML comment closed on it, as a chunk's text holds it (``heading_of``
# drops the comment since m033).
_HEADING_WITH_COMMENT = re.compile(r"^ {0,3}#{1,6}[^\S\n][^\n]*<!--[^\n]*-->", re.MULTILINE)


def _holds_heading_with_comment(text: str | None) -> bool:
    return text is not None and _HEADING_WITH_COMMENT.search(text) is not None


@INDEX_MIGRATIONS
def m033_no_html_comments_in_headings(conn: sqlite3.Connection) -> None:
    """An HTML comment in a heading (``# Plan <!-- draft -->``) is not its text, as Obsidian hides
    it: it stayed in the chunk's heading, what `brain ask` shows. The notes with a chunk heading
    holding a comment's mark, or a chunk holding a heading line with a comment (a heading merged
    into the section before, whose heading path it cut short, is in no chunk's heading: ``# P``,
    ``## Q``, then ``# P <!-- c -->`` filed the next chunk under P > Q), are read again by the next
    run (hash and mtime cleared: the same bytes make no new version)."""
    conn.create_function("brain_heading_with_comment", 1, _holds_heading_with_comment, deterministic=True)
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id IN (SELECT note_id FROM chunks WHERE heading LIKE '%<!--%'"
        " OR (text LIKE '%<!--%-->%' AND brain_heading_with_comment(text)))"
    )


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m033_no_html_comments_in_headings")


# What brain read otherwise before m034, in a chunk's text: a setext heading (a line of "===" or
# "---" under a line of text that opens no list item, quote, table or heading), a fence in a
# quote or a callout ("> ```") or indented four columns or more (in a list item), a heading line
# opening an HTML comment it does not close.
_READ_OTHERWISE_SINCE_M034 = re.compile(
    r"^(?! {0,3}(?:[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[>|<]|#{1,6}[ \t]))[ \t]*\S[^\n]*\n {0,3}(?:=+|-+)[ \t]*$"
    r"|^ {0,3}>(?:[ \t]*>)*[ \t]*(?:`{3,}|~{3,})"
    r"|^(?: {0,3}\t| {4,})[ \t]*(?:`{3,}|~{3,})"
    r"|^ {0,3}#{1,6}[ \t][^\n]*<!--(?:(?!-->)[^\n])*$",
    re.MULTILINE,
)


# A setext underline of one mark ("=" or "-", any length being one), which m034's first look
# (a "--" or a "==" in the chunk) passes over: looked for by this before the whole pattern.
_ONE_MARK_UNDERLINE = re.compile(r"\n {0,3}[-=][ \t]*(?:\n|\Z)")


def _one_mark_underline(text: str | None) -> bool:
    return text is not None and _ONE_MARK_UNDERLINE.search(text) is not None


def read_otherwise_since_m034(text: str | None) -> bool:
    """Whether a chunk's text holds what m034's reading changed (it may read the same: a
    setext heading's text in a list item, a fence in a quote without a link in it)."""
    return text is not None and _READ_OTHERWISE_SINCE_M034.search(text) is not None


@INDEX_MIGRATIONS
def m034_setext_headings_and_nested_fences(conn: sqlite3.Connection) -> None:
    """Notes are read as Obsidian reads them in three more ways: a line of text over ``===`` or
    ``---`` is a heading (setext; brain read the underline as text, the section as the one
    above it); a fence in a quote or a callout (``> ```python``), or in a list item indented by a
    tab, is code (its links and tags counted, its ``#include`` a tag); and an HTML comment opened
    on a heading line and not closed on it is text (it hid the lines below it to its ``-->``:
    their links, tags and headings). The notes with a chunk holding one of these are read again
    by the next run (hash and mtime cleared: the same bytes make no new version, and a chunk of
    the same text keeps its vector)."""
    conn.create_function("brain_read_otherwise_since_m034", 1, read_otherwise_since_m034, deterministic=True)
    conn.create_function("brain_one_mark_underline", 1, _one_mark_underline, deterministic=True)
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id IN (SELECT note_id FROM chunks"
        " WHERE (text LIKE '%--%' OR text LIKE '%==%' OR text LIKE '%```%' OR text LIKE '%~~~%'"
        " OR brain_one_mark_underline(text)) AND brain_read_otherwise_since_m034(text))"
    )


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m034_setext_headings_and_nested_fences")


# m027's and m033's markers as released (637aeaf): m035 marks what the markers they have now
# catch and these missed.
_HASH_ENDED_HEADING_AS_RELEASED = re.compile(r"^ {0,3}#{1,6}[ \t][^\n]*[^\s#]#+[ \t]*$", re.MULTILINE)


def _hash_ended_heading_missed(text: str | None) -> bool:
    """Whether a chunk holds a heading m027 marks now and marked not as released (``#\u00a0C#``)."""
    return _holds_hash_ended_heading(text) and _HASH_ENDED_HEADING_AS_RELEASED.search(text or "") is None


def _edges_out_of_step(conn: sqlite3.Connection) -> None:
    """Every edge of ``link_history`` takes the world time of its note's versions current over
    it, cut where they differ (``_cut_edge``): what m024, m025, m030 and m032 as released left
    out of step, of any note (they kept no trace of which). Found in one statement: an edge and
    a version of its note over the same time, whose world times differ (a few, if any)."""
    rows = conn.execute(
        "SELECT e.id, e.source_id, e.target, e.kind, e.count, e.target_id, e.status, e.recorded_from,"
        " e.recorded_to, e.world_date, e.valid_from, e.valid_to, e.note_status,"
        " v.recorded_from, v.recorded_to, v.world_date, v.valid_from, v.valid_to, v.status"
        " FROM link_history e JOIN note_versions v ON v.note_id = e.source_id"
        " AND v.recorded_from < coalesce(e.recorded_to, 9e99) AND coalesce(v.recorded_to, 9e99) > e.recorded_from"
        " WHERE e.id IN (SELECT e.id FROM link_history e JOIN note_versions v ON v.note_id = e.source_id"
        " AND v.recorded_from < coalesce(e.recorded_to, 9e99) AND coalesce(v.recorded_to, 9e99) > e.recorded_from"
        " AND NOT (v.world_date IS e.world_date AND v.valid_from IS e.valid_from AND v.valid_to IS e.valid_to"
        " AND v.status IS e.note_status))"
        " ORDER BY e.id, v.recorded_from"
    )
    touched = set()
    writes: _EdgeWrites = ([], [], [])
    for edge_id, found in groupby(rows.fetchall(), key=lambda row: row[0]):
        spans = list(found)
        _, *columns, recorded_from, recorded_to = spans[0][:9]
        versions = [(row[13], math.inf if row[14] is None else row[14], tuple(row[15:19])) for row in spans]
        ends = math.inf if recorded_to is None else recorded_to
        _cut_edge(writes, edge_id, columns, recorded_from, ends, tuple(spans[0][9:13]), versions)
        touched.add(columns[0])
    _write_edges(conn, writes)
    _rejoin_edges(conn, touched)


# What makes two edges of a note, one closed when the other opened, one edge (``_rejoin_edges``).
_SAME_EDGE = " AND ".join(
    f"b.{column} IS a.{column}"
    for column in (
        "target",
        "kind",
        "count",
        "target_id",
        "status",
        "world_date",
        "valid_from",
        "valid_to",
        "note_status",
    )
)


def _rejoin_edges(conn: sqlite3.Connection, source_ids: set[int]) -> None:
    """A note's edge closed where one alike opened is one edge: a run after m024, m025, m030 or
    m032 as released found the open edges out of step with the note, closed them at the upgrade
    and opened them anew, as if the note changed then; given their versions' world time
    (``_cut_edge``), the two are alike, and joined (as ``IndexStore`` rejoins an edge a run
    closed and opened again)."""
    for source_id in sorted(source_ids):
        while pair := conn.execute(
            "SELECT a.id, b.id, b.recorded_to FROM link_history a JOIN link_history b ON b.source_id = a.source_id"
            f" AND b.recorded_from = a.recorded_to AND {_SAME_EDGE} WHERE a.source_id = ? LIMIT 1",
            (source_id,),
        ).fetchone():
            conn.execute("DELETE FROM link_history WHERE id = ?", (pair[1],))
            conn.execute("UPDATE link_history SET recorded_to = ? WHERE id = ?", (pair[2], pair[0]))


@INDEX_MIGRATIONS
def m035_what_edited_migrations_missed(conn: sqlite3.Connection) -> None:
    """m024-m033 were edited after their release, and an index that ran them as released runs
    them no more. The notes the markers of m027, m029 and m033 catch now and as released missed
    (a heading whose "#"s a no-break space follows, ``[[..\\Other\\Note]]`` and
    ``[[/../Other/Note]]``, a heading with a comment merged into the section before) are read
    again by the next run (hash and mtime cleared: the same bytes make no new version, and a
    chunk of the same text keeps its vector); and the edges of ``link_history`` that m024, m025,
    m030 and m032 left with an older world time than their versions' take it, of every note,
    cut where the versions differ (``_edges_out_of_step``)."""
    conn.create_function("brain_hash_ended_heading_missed", 1, _hash_ended_heading_missed, deterministic=True)
    conn.create_function("brain_from_the_notes_folder", 1, written_from_the_notes_folder, deterministic=True)
    conn.create_function("brain_heading_with_comment", 1, _holds_heading_with_comment, deterministic=True)
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id IN"
        " (SELECT note_id FROM chunks WHERE text LIKE '%#%' AND brain_hash_ended_heading_missed(text))"
        " OR id IN (SELECT source_id FROM links WHERE kind != 'markdown' AND target LIKE '%.%'"
        " AND NOT (target LIKE './%' OR target LIKE '../%') AND brain_from_the_notes_folder(target))"
        " OR id IN (SELECT note_id FROM chunks WHERE heading NOT LIKE '%<!--%' AND text LIKE '%<!--%-->%'"
        " AND brain_heading_with_comment(text))"
    )
    _edges_out_of_step(conn)


# It marks notes to be read again and gives edges their versions' world time: run again, it
# gives the same rows (the edges are in step).
INDEX_MIGRATIONS.safe_to_run_again.add("m035_what_edited_migrations_missed")


# What brain reads otherwise since m036, in a chunk's text: math ("$$"), or a line indented four
# columns or more (a tab: "\t", " \t") that may open indented code: first in the chunk, or after
# a blank line (between a chunk's blocks), a heading or a fence's line (``links.mask_code``).
_MATH_OR_INDENTED = re.compile(r"\$\$|(?:\A|\n(?:[ \t]*| {0,3}[#`~][^\n]*)\n|\A {0,3}[#`~][^\n]*\n)(?: {4}| {0,3}\t)")


def may_hold_math_or_indented_code(text: str | None) -> bool:
    """Whether a chunk's text may hold math or indented code, whose links and tags brain counted
    before m036 (``links.mask_code`` blanks them since)."""
    return text is not None and _MATH_OR_INDENTED.search(text) is not None


_MATH_BLOCK = re.compile(r"(?:\A|\n)[ \t>]*\$\$")  # "$$" opening its line: a block's (``links._mask_math``)


def opens_math_block(text: str | None) -> bool:
    """Whether a chunk's text holds a line ``$$`` opens, which may open math over lines: a
    heading inside it is none since m036 (``links.outline``), and the chunks after it differ."""
    return text is not None and _MATH_BLOCK.search(text) is not None


# A line an outline may read as a heading or its underline (ATX "#", setext "===" or "---").
_HEADING_LINE = re.compile(r"(?:\A|\n) {0,3}(?:#|=+[ \t]*(?:\n|\Z)|-+[ \t]*(?:\n|\Z))")


def may_hold_heading_line(text: str | None) -> bool:
    """Whether a chunk's text holds a line an outline may read as a heading or a setext underline."""
    return text is not None and _HEADING_LINE.search(text) is not None


_TAG_MARK = re.compile(r"#[^\s#]")  # a "#" a tag may start at ("# Title" opens none)
_STILL_CODE = re.compile(r"[ \t]*\n|(?: {4}| {0,3}\t)[^\n]*\n?")  # a blank line, or one indented as code


def first_line_may_have_been_code(text: str | None) -> bool:
    """Whether a chunk's first lines may have been indented code whose indent its text lost:
    ``BRAIN_CHUNKING=note`` and ``windows`` strip a chunk's text, a first line's indent with it.
    True when that line, or the indented (or blank) lines after it that code would run on
    over, hold a link's, a tag's, a fence's or math's mark: what reading it as code changes."""
    if not text:
        return False
    end = text.find("\n") + 1 or len(text)
    while end < len(text) and (match := _STILL_CODE.match(text, end)):
        end = match.end()
    block = text[:end]
    return any(mark in block for mark in ("[[", "](", "`", "~", "$$")) or _TAG_MARK.search(block) is not None


@INDEX_MIGRATIONS
def m036_math_and_indented_code(conn: sqlite3.Connection) -> None:
    """Math (``$$ … $$``) and indented code (a line indented four columns or more after a blank
    line or a heading, outside a list) hold no link and no tag, as Obsidian renders them: brain
    counted their ``[[links]]`` and ``#tags``. The notes with a chunk that may hold either and a
    chunk holding a link's or a tag's mark are read again by the next run (hash and mtime
    cleared: the same bytes make no new version, and a chunk of the same text keeps its vector)."""
    conn.create_function("brain_math_or_indented", 1, may_hold_math_or_indented_code, deterministic=True)
    conn.create_function("brain_first_line_was_code", 1, first_line_may_have_been_code, deterministic=True)
    conn.create_function("brain_opens_math_block", 1, opens_math_block, deterministic=True)
    conn.create_function("brain_heading_line", 1, may_hold_heading_line, deterministic=True)
    # "note" and "windows" chunks lost their first line's indent: any of them may open indented code
    stripped = (
        conn.execute(
            "SELECT 1 FROM meta WHERE key = 'chunking' AND (value LIKE 'heading%' OR value LIKE 'short%')"
        ).fetchone()
        is None
    )
    conn.execute(
        "UPDATE notes SET hash = '', mtime_ns = -1 WHERE id IN (SELECT note_id FROM chunks"
        " WHERE (text LIKE '%$$%' OR text LIKE '%    %' OR instr(text, char(9)) > 0) AND brain_math_or_indented(text)"
        " OR ? AND brain_first_line_was_code(text))"
        " AND id IN (SELECT note_id FROM chunks WHERE text LIKE '%[[%' OR text LIKE '%](%' OR text LIKE '%#%')"
        # a heading inside a $$ block is none since: the notes with a block and a heading's line
        " OR id IN (SELECT note_id FROM chunks WHERE text LIKE '%$$%' AND brain_opens_math_block(text))"
        " AND id IN (SELECT note_id FROM chunks WHERE brain_heading_line(text))",
        (stripped,),
    )


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m036_math_and_indented_code")


@INDEX_MIGRATIONS
def m037_duplicate_names_as_obsidian_opens_them(conn: sqlite3.Connection) -> None:
    """A link that several notes answer (a file name in several folders, ``[[Index]]``) goes to
    the one Obsidian opens (``links.first_match``: inside the linking note's folder first, then the
    shortest path), not to the one fewest folders away. The next run resolves every link again
    (``resolve_links`` in full, once: the ``resolver_key`` links were resolved against is
    forgotten), and no note is read again. The link history is read again by the same rule first
    (``linking.reread_link_history``): the vault did not change, so no link of the past moves at
    that run; each took, at each moment, the note Obsidian opened from it then."""
    conn.execute("DELETE FROM meta WHERE key = 'resolver_key'")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('links_dirty', '1')")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('links_history_reread', '1')")


# It only has the links resolved again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m037_duplicate_names_as_obsidian_opens_them")


@INDEX_MIGRATIONS
def m038_link_history_of_wikilinks_from_the_notes_folder(conn: sqlite3.Connection) -> None:
    """m029 and m035 had a wikilink written from its note's folder (``[[../Other/Note]]``,
    ``[[..\\Other\\Note]]``) resolve, where brain left it dangling, but only read its note again:
    the run after the upgrade recorded the link's edge dangling up to that run and resolved from
    it, a change of link the user never made (`brain history`), and `--as-of` before it found the
    link dangling, where Obsidian opened its note. The next run reads the link history again by
    the rule (``linking.reread_link_history``, as m037 does; an index that had not run m037 had
    it read so there): each such edge takes, at each moment, the note the link opened then, and
    one that run opened anew is joined to it. No note is read again."""
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('links_dirty', '1')")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('links_history_reread', '1')")


# It only has the link history read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m038_link_history_of_wikilinks_from_the_notes_folder")


@INDEX_MIGRATIONS
def m039_past_search_in_the_index_s_tokenizer(conn: sqlite3.Connection) -> None:
    """The past chunks' BM25 index (chunk_history_fts, which ``--as-of`` searches) made with the
    index's tokenizer, as chunks_fts is. It was always unicode61's: under
    ``BRAIN_FTS_TOKENIZER=trigram`` the lexical lane, asking for a query's trigrams, found a past
    chunk only by a word of exactly three letters ("rocket" and "dawn" missed a past "The rocket
    launched at dawn"). An index under unicode61 has nothing to do; one under trigram has its past
    chunks indexed again, once."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'fts_tokenizer'").fetchone()
    tokenizer = row[0] if row and row[0] in FTS_TOKENIZERS else DEFAULT_FTS_TOKENIZER
    if tokenizer != DEFAULT_FTS_TOKENIZER:
        remake_past_fts(conn, tokenizer)


# It makes the past's index again from its rows: run again, it gives the same index.
INDEX_MIGRATIONS.safe_to_run_again.add("m039_past_search_in_the_index_s_tokenizer")


# A markdown link whose target holds a "(" (``[x](Meeting%20(2024).md)``, ``[x](<Plan (v2).md>)``),
# read to its first ")" before m040, a dangling "Meeting (2024"; or with a title in '…' or (…),
# no link: a "(" or a "'" before the first ")" after a "](" (an apostrophe in a name too, read again).
_MARKDOWN_TARGET_WITH_PARENTHESES = re.compile(r"\]\([^)\n]*['(]")


def _holds_markdown_target_with_parentheses(text: str | None) -> bool:
    return text is not None and _MARKDOWN_TARGET_WITH_PARENTHESES.search(text) is not None


@INDEX_MIGRATIONS
def m040_markdown_links_with_parentheses(conn: sqlite3.Connection) -> None:
    """A markdown link's target holds balanced parentheses (CommonMark; what Obsidian writes for a
    note named "Meeting (2024)" with wikilinks off), and anything but "<", ">" between ``<>``;
    its title is in "…", '…' or (…). brain ended such a target at the first ")", a dangling link
    where Obsidian has the note's (and read no link with a title but in "…"), and the
    chunker, no link to it, could cut it between its words. The notes whose chunks hold such a
    target are read again by the next run (hash and mtime cleared: the same bytes make no new
    version, and a chunk of the same text keeps its vector)."""
    _read_again_notes_with_a_chunk(conn, "%](%", _holds_markdown_target_with_parentheses)


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m040_markdown_links_with_parentheses")


# What an inline tag was before m041: letters, digits, "_", "-" and "/", one a letter.
_TAG_BEFORE_M041 = re.compile(r"[^\W\d][\w/-]*|\d+[^\W\d][\w/-]*")


def _holds_a_tag_read_otherwise(text: str | None) -> bool:
    from ..notes import inline_tags

    return text is not None and any(not _TAG_BEFORE_M041.fullmatch(tag) for tag in inline_tags(text))


@INDEX_MIGRATIONS
def m041_tags_as_obsidian_reads_them(conn: sqlite3.Connection) -> None:
    """An inline tag is every character up to a space or Obsidian's punctuation, as Obsidian reads
    it: brain's letters and digits cut one at a combining mark (``#हिन्दी`` was "ह", a decomposed
    ``#café`` "cafe"), and read no emoji tag (``#🌱/seedling``) nor ``#2024-05``. The notes whose
    chunks hold such a tag are read again by the next run (hash and mtime cleared: the same bytes
    make no new version, and a chunk of the same text keeps its vector)."""
    _read_again_notes_with_a_chunk(conn, "%#%", _holds_a_tag_read_otherwise)


# It only marks notes to be read again: run again, it gives the same rows.
INDEX_MIGRATIONS.safe_to_run_again.add("m041_tags_as_obsidian_reads_them")


def search_past_chunks(conn: sqlite3.Connection) -> None:
    """Give each past chunk that holds a character ``for_search`` may drop its ``search_*``
    columns: m021 and m023 (a rebuild's carry makes them as the chunks come in, ``searched_if_any``). (SQL's GLOB with
    ``SEARCHED_OTHERWISE``'s class took a second for 6,500 chunks; ``may_search_otherwise``, some ms.)"""
    conn.create_function("brain_may_search_otherwise", 1, may_search_otherwise, deterministic=True)
    rows = conn.execute(
        "SELECT id, title, heading, text FROM chunk_history WHERE brain_may_search_otherwise(title)"
        " OR brain_may_search_otherwise(heading) OR brain_may_search_otherwise(text)"
    ).fetchall()
    found = [(*(searched(value) for value in row[1:]), row[0]) for row in rows]
    conn.executemany(
        "UPDATE chunk_history SET search_title = ?, search_heading = ?, search_text = ? WHERE id = ?",
        [row for row in found if row[:3] != (None, None, None)],
    )


def searched_if_any(value: str) -> str | None:
    """``searched``, for_search asked only of a value holding a character it may drop (a carry asks
    it of each past chunk's three columns as they come in: most hold none)."""
    return searched(value) if may_search_otherwise(value) else None


def searched(value: str) -> str | None:
    """What a ``search_*`` column holds for ``value``: its ``for_search`` form, None where that is
    the value itself (most text: the column costs nothing)."""
    found = for_search(value)
    return None if found == value else found


def _chunk_history_parts(conn: sqlite3.Connection) -> Iterator[list[tuple]]:
    """m018's pre-shared ``chunk_history``, by id, a few thousand rows at a time."""
    after = 0
    while rows := conn.execute(
        "SELECT id, note_id, hash, ordinal, title, heading, text, vector FROM chunk_history WHERE id > ?"
        " ORDER BY id LIMIT 5000",
        (after,),
    ).fetchall():
        yield rows
        after = rows[-1][0]


def past_chunk_key(title: str, heading: str, text: str) -> bytes:
    """What makes two past chunks of a note one (``chunk_history.key``): their title, heading and
    text, which are all the BM25 index and, mostly, the embedder read of them."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (title, heading, text):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.digest()


def past_chunk_variant_key(key: bytes, vector: bytes) -> bytes:
    """The key of a past chunk alike (``key``) to one the note's history holds, but whose vector
    is another: with ``BRAIN_CHUNKING=…+path`` the embedder reads the note's folders too, so a
    note moved to another folder embeds the same chunks otherwise. It is a chunk of its own."""
    return hashlib.blake2b(key + bytes(vector), digest_size=16).digest()


def pack_ids(ids: Sequence[int]) -> bytes:
    """A past content's chunk ids in order (``version_chunks.chunk_ids``): each the difference
    from the one before, as 8-byte little-endian integers, zlib-compressed. A note that grows
    lists the same chunks again at every version, mostly in runs of consecutive ids: 800
    versions of a log would keep 2.6 MB of plain ids, and its runs compress to a few bytes."""
    values = array("q", [b - a for a, b in zip([0, *ids], ids)])
    if sys.byteorder == "big":  # stored little-endian, as a database may move between machines
        values.byteswap()
    return zlib.compress(values.tobytes())


def unpack_ids(blob: bytes) -> list[int]:
    values = array("q")
    values.frombytes(zlib.decompress(bytes(blob)))
    if sys.byteorder == "big":
        values.byteswap()
    return list(accumulate(values))


def stem_hash(stem: str) -> int:
    """What ``links.stem_hash`` files a link under: the CRC-32 of its stem (``links.link_stem``)
    as a signed 32-bit integer, four bytes in SQLite. Two stems alike cost only a few links
    resolved again for nothing."""
    value = zlib.crc32(stem.encode("utf-8", "surrogatepass"))
    return value - (1 << 32) if value >= 1 << 31 else value


def create_chunks_fts(tokenizer: str) -> str:
    """The statement creating chunks_fts (an index over the view chunks_fts_source) with one
    of ``FTS_TOKENIZERS``: m009 and a tokenizer change (``IndexStore.recreate_fts``)."""
    return (
        "CREATE VIRTUAL TABLE chunks_fts USING fts5 (title, heading, text,"
        " content = 'chunks_fts_source', content_rowid = 'id',"
        f" tokenize = '{FTS_TOKENIZERS[tokenizer]}')"
    )


# chunks_fts refilled from its content (chunks_fts_source) since m009.
REFILL_FTS = "INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')"


def create_past_fts(tokenizer: str) -> str:
    """The statement creating chunk_history_fts (an index over the view chunk_history_fts_source)
    with one of ``FTS_TOKENIZERS``: m021 (unicode61, in the very words an index holds since), m039
    and a tokenizer change (``IndexStore.recreate_fts``)."""
    return f"""CREATE VIRTUAL TABLE chunk_history_fts USING fts5 (
            title, heading, text,
            content = 'chunk_history_fts_source', content_rowid = 'id',
            tokenize = "{FTS_TOKENIZERS[tokenizer]}"
        )"""


def remake_past_fts(conn: sqlite3.Connection, tokenizer: str) -> None:
    """chunk_history_fts made anew with ``tokenizer`` and refilled from its view. The triggers name
    the table, not its tokenizer, so they keep writing the new one."""
    conn.execute("DROP TABLE chunk_history_fts")
    conn.execute(create_past_fts(tokenizer))
    conn.execute("INSERT INTO chunk_history_fts (chunk_history_fts) VALUES ('rebuild')")


def _float16_blob(blob: bytes | None) -> bytes | None:
    """A float32 vector's bytes as float16 (a blob that is not float32 is left as it is)."""
    if blob is None or len(blob) % 4:
        return blob
    import numpy as np

    return np.frombuffer(blob, dtype=np.float32).astype(np.float16).tobytes()


# The tables an index holds once every migration ran, and the last of them: what
# ``store.missing_tables`` holds a current index to without running the migrations in memory
# (``Migrations.tables_made``: 0.1-0.3 s, numpy imported by m015, on each `brain status`).
# tests/test_migrations_record.py holds it to them: a new migration updates it.
LATEST_TABLES = (
    "m041_tags_as_obsidian_reads_them",
    frozenset(
        [
            "aliases",
            "chunk_history",
            "chunk_history_fts",
            "chunk_history_fts_config",
            "chunk_history_fts_data",
            "chunk_history_fts_docsize",
            "chunk_history_fts_idx",
            "chunks",
            "chunks_fts",
            "chunks_fts_config",
            "chunks_fts_data",
            "chunks_fts_docsize",
            "chunks_fts_idx",
            "link_history",
            "links",
            "meta",
            "name_changes",
            "note_versions",
            "notes",
            "postings_log",
            "scan_snapshot",
            "scan_snapshot_log",
            "skipped",
            "tags",
            "text_packs",
            "text_segments",
            "version_chunks",
        ]
    ),
)
