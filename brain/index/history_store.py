"""The index's history: note versions (``note_versions``, their text in ``text_packs`` and
``text_segments``), the past chunks (``chunk_history``, ``version_chunks``, ``chunk_history_fts``)
and the link history (``link_history``); recording them, pruning them, carrying them into a
rebuilt index, and the reads of the past (``--as-of``, ``brain history``, ``brain diff``).

``HistoryStore`` is a parent of ``IndexStore`` (every ``store.add_version(...)`` is the
store's) and holds nothing of its own but the store's connection. Its boundary is the tables:
a method whose SQL reads or writes the history tables is here, and one that mixes the present
and the history in one statement or transaction is here when it records, prunes or reads the
history (``sync_edge_targets`` and ``fold_edges`` bring the link history up to the present
``links``; ``retire_chunks`` and ``carry_replaced_chunks`` keep present chunks as past ones;
``slice_rows_at`` reads past versions beside the present notes). Those that write the present
first and the history beside it stay in store.py (``touch_note``, ``bulk_writes``,
``rebuild_search_indexes``), and so does ``vacuum`` (the whole file); the BM25 ``fts_hits`` of
either is lexical_store.py's. The helpers both use (``_parts``, ``_marks``, ``dumps``, the stored vectors' forms) and
the meta keys history stamps are defined here, the module store.py imports, and store.py names
them again for the rest of brain. Part of the store: its SQL is the store's
(tests/test_architecture.py, ``STORE``); it never imports store.py.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
import zlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .health import HISTORY_TABLES, TEXT_TABLES
from .schema import (
    pack_ids,
    past_chunk_key,
    past_chunk_variant_key,
    searched,
    searched_if_any,
    unpack_ids,
)
from .version_text import (
    SEGMENTED,
    SEGMENTS_FROM,
    SegmentCache,
    chunk_dictionary,
    drop_unheld_segments,
    is_segmented,
    needs_dictionary,
    past_text,
    segmented_text,
)
from .version_text import decompress as decompress_text

if TYPE_CHECKING:
    from ..notes import Note, WorldTime

log = logging.getLogger("brain")
# meta: when the index last changed in a way a server's other checks (the file, resolver_key,
# vectors_version) do not see: `brain prune --vacuum` compacted it (its pages wait in the WAL
# while a snapshot holds the state before), or history lost something to pruning (`brain
# prune`, BRAIN_KEEP_VERSIONS: a snapshot and its views of the past still see what went). A
# server reloads on its change, whichever it was: it does the same for both (``server.service``).
# An index stamped by vacuumed_at and pruned_at, its two keys before, keeps them unread.
RELOAD = "reload_at"
HISTORY_CLOCK = "history_clock"  # meta: the latest moment history recorded at (``history_latest``)
NAMES_CLOCK = "names_clock"  # meta: the latest moment a note's names changed (``Recorder.names_moved``)
_PART = 900  # ids per IN (...) list: under SQLite's default limit of 999 variables
SLICE_BATCH = 1000  # rows of ``slice_rows_at`` read at a time
_T = TypeVar("_T")


@dataclass(frozen=True)
class VersionRow:
    """One version of a note: a content the index saw, and when it was current."""

    id: int
    note_id: int
    path: str
    title: str
    aliases: str  # JSON list
    hash: str
    size: int
    date: str | None  # the note's date as recall shows it (frontmatter, else the file's mtime)
    frontmatter: str  # JSON
    world_date: str | None  # world time, as the frontmatter states it
    valid_from: str | None
    valid_to: str | None
    status: str | None
    event: str  # created, changed, renamed, restored, recorded (already there when history began)
    recorded_from: float  # Unix time brain first saw it
    recorded_to: float | None  # when it was replaced; None while current
    ended: str | None  # changed, renamed, deleted, unreadable
    has_content: bool  # its bytes are kept


_VERSION_COLUMNS = (
    "id, note_id, path, title, aliases, hash, size, date, frontmatter, world_date, valid_from, valid_to,"
    " status, event, recorded_from, recorded_to, ended, content IS NOT NULL"
)

# What a version records of its note (``_recorded_of_note``'s values, in this order): opened by
# ``add_version``, written again in place by ``refresh_version``. One list, so that a column
# added to one is added to both.
_RECORDED_OF_NOTE = (
    "title",
    "aliases",
    "hash",
    "size",
    "date",
    "frontmatter",
    "world_date",
    "valid_from",
    "valid_to",
    "status",
)


def _recorded_of_note(note: Note, size: int, world: WorldTime) -> tuple[Any, ...]:
    return (
        note.title,
        dumps(note.aliases),
        note.content_hash,
        size,
        note.date,
        dumps(note.frontmatter),
        world.date,
        world.valid_from,
        world.valid_to,
        world.status,
    )


@dataclass(frozen=True)
class EdgeRow:
    """One edge of the link history: a note's link to a target, and when it was recorded."""

    id: int
    source_id: int
    target: str  # as written
    kind: str
    count: int  # times the note writes this link
    target_id: int | None
    status: str  # pending, resolved, dangling, attachment
    world_date: str | None  # the source note's world time when the edge was recorded
    valid_from: str | None
    valid_to: str | None
    note_status: str | None
    recorded_from: float
    recorded_to: float | None


# What makes two edges of a note, one ending where the other begins, one (``join_alike_edges``).
_ALIKE_EDGE = (
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
_EDGE_COLUMNS = (
    "id, source_id, target, kind, count, target_id, status, world_date, valid_from, valid_to, note_status,"
    " recorded_from, recorded_to"
)


_VERSION_COPY = (
    "id, note_id, path, title, aliases, hash, size, date, frontmatter, world_date, valid_from, valid_to, status,"
    " content, event, recorded_from, recorded_to, ended"
)


_EDGE_COPY = _EDGE_COLUMNS


_CHUNK_COPY = "id, note_id, key, title, heading, text, vector"


_VERSION_CHUNK_COPY = "note_id, hash, chunk_ids"


_SEGMENT_COPY = "id, note_id, key, pack_id, start, size"


_PACK_COPY = "id, note_id, data"


_EMPTY_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # SHA-256 of no bytes


def _parts(ids: Sequence[_T]) -> Iterator[list[_T]]:
    ids = list(ids)
    for start in range(0, len(ids), _PART):
        yield ids[start : start + _PART]


def _marks(part: Sequence[object]) -> str:
    return ",".join("?" * len(part))


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


class StoredVector(bytes):
    """A vector already in the form the index stores (``embedded_chunks`` read it): written as
    it is, not encoded again (``replace_chunks``)."""


def _stored(vectors: Sequence[bytes]) -> list[bytes]:
    """float32 vectors' bytes as the index stores them (vector_blobs.py; imported here, on
    first use, for numpy: a no-op `brain index` imports none); a ``StoredVector`` as it is."""
    fresh = [v for v in vectors if not isinstance(v, StoredVector)]
    if not fresh:
        return [bytes(v) for v in vectors]
    from .vector_blobs import encode

    encoded = iter(encode(fresh))
    return [bytes(v) if isinstance(v, StoredVector) else next(encoded) for v in vectors]


def _float32(blobs: Sequence[bytes]) -> list[bytes]:
    """Stored vectors as float32 bytes, what every reader of vectors expects."""
    from .vector_blobs import decode_many

    return decode_many(blobs)


class HistoryStore:
    """The history's SQL, on the store's connection (``IndexStore`` inherits it)."""

    conn: sqlite3.Connection

    if TYPE_CHECKING:  # the store's own, which these call (``IndexStore`` defines them)

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def get_meta(self, key: str, default: str | None = None) -> str | None: ...
        def set_meta(self, key: str, value: object) -> None: ...
        def _first_in_transaction(self, key: str) -> bool: ...
        def _has_table(self, name: str, schema: str = "main") -> bool: ...
        def _update_rows(self, table: str, statement: str, rows: list[tuple[Any, ...]]) -> None: ...
        def index_id(self) -> str | None: ...
        def vectors_version(self) -> int: ...
        def note_id(self, path: str) -> int | None: ...

    def _tuples(self) -> sqlite3.Cursor:
        """A cursor whose rows are plain tuples: a query's reads build a sqlite3.Row (the
        connection's) for each of a few thousand rows, then a tuple or a dict of it."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return cursor

    def written_link_targets_at(self, moment: float, note_ids: Sequence[int]) -> dict[tuple[int, str], int]:
        """``written_link_targets`` as the link history recorded it at ``moment``."""
        out: dict[tuple[int, str], int] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(
                "SELECT source_id, target, target_id FROM link_history WHERE status = 'resolved'"
                " AND target_id IS NOT NULL AND target_id != source_id AND recorded_from <= ?"
                f" AND (recorded_to IS NULL OR recorded_to > ?) AND source_id IN ({_marks(part)}) ORDER BY id",
                (moment, moment, *part),
            )
            out.update(((r[0], r[1]), r[2]) for r in rows)
        return out

    def current_version(self, note_id: int) -> VersionRow | None:
        row = self.conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE note_id = ? AND recorded_to IS NULL", (note_id,)
        ).fetchone()
        return VersionRow(*row) if row else None

    def add_version(
        self,
        note_id: int,
        note: Note,
        size: int,
        content: bytes | None,
        world: WorldTime,
        event: str,
        now: float,
    ) -> int:
        """Open a version (the note's current one from ``now``); ``content`` is compressed."""
        values = (note_id, note.path, *_recorded_of_note(note, size, world), content, event, now)
        cursor = self.conn.execute(
            f"INSERT INTO note_versions (note_id, path, {', '.join(_RECORDED_OF_NOTE)}, content, event, recorded_from)"
            f" VALUES ({_marks(values)})",
            values,
        )
        return int(cursor.lastrowid or 0)

    def refresh_version(self, version_id: int, note: Note, size: int, content: bytes | None, world: WorldTime) -> None:
        """The same bytes parsed again: the version's metadata in place, and its text as given
        (kept against the chunks just written: ``version_text.py``), else as it was."""
        released = self._segmented_notes("id = ?", (version_id,)) if content is not None else []
        self.conn.execute(
            f"UPDATE note_versions SET {', '.join(f'{column} = ?' for column in _RECORDED_OF_NOTE)},"
            " content = coalesce(?, content) WHERE id = ?",
            (*_recorded_of_note(note, size, world), content, version_id),
        )
        drop_unheld_segments(self.conn, released)  # the segments its past text listed, if no other version does

    def fill_version_content(self, note_id: int, digest: str, content: bytes) -> None:
        """Give the note's current version its (compressed) bytes if it has none and they match."""
        self.conn.execute(
            "UPDATE note_versions SET content = ? WHERE note_id = ? AND recorded_to IS NULL AND hash = ?"
            " AND content IS NULL",
            (content, note_id, digest),
        )

    def chunk_dictionary(self, note_id: int) -> bytes:
        """The note's current chunk texts as a preset dictionary for its version's bytes."""
        rows = self.conn.execute("SELECT text FROM chunks WHERE note_id = ? ORDER BY ordinal", (note_id,))
        return chunk_dictionary(r[0] for r in rows)

    def settle_version_text(self, note_id: int) -> None:
        """Keep the note's current version's bytes as a past text (plain, or in segments when
        long), not against its chunks: call before the version stops being current or the
        note's chunks are replaced (``version_text.py``)."""
        row = self.conn.execute(
            "SELECT id, hash, content FROM note_versions WHERE note_id = ? AND recorded_to IS NULL", (note_id,)
        ).fetchone()
        if row is None or row[2] is None:
            return
        blob = bytes(row[2])
        if is_segmented(blob):
            return
        if needs_dictionary(blob):
            data = self._text_against_chunks(note_id, row[1], blob)
        else:  # plain, as an older index kept it: in segments when long (else it stays as it is)
            try:
                data = decompress_text(blob)
            except zlib.error:
                return
            if len(data) < SEGMENTS_FROM or hashlib.sha256(data).hexdigest() != row[1]:
                return
        self.conn.execute(
            "UPDATE note_versions SET content = ? WHERE id = ?",
            (past_text(self.conn, note_id, data) if data is not None else None, row[0]),
        )

    def _text_against_chunks(self, note_id: int, digest: str, blob: bytes, schema: str = "main") -> bytes | None:
        """A version's bytes kept against its content's chunks: the note's current chunks, else
        the past chunks of that content; checked against the content hash. None (logged) if
        neither gives them back."""
        current = [
            r[0]
            for r in self.conn.execute(
                f"SELECT text FROM {schema}.chunks WHERE note_id = ? ORDER BY ordinal", (note_id,)
            )
        ]
        for texts in (current, self._past_chunk_texts(note_id, digest, schema)):
            dictionary = chunk_dictionary(texts)
            try:
                data = decompress_text(blob, dictionary)
            except zlib.error:
                continue
            if hashlib.sha256(data).hexdigest() == digest:
                return data
        log.error("note %s: the text of its version %s could not be read back from its chunks", note_id, digest[:12])
        return None

    def close_version(self, version_id: int, now: float, ended: str) -> None:
        """The version stops being current at ``now`` (``ended``: changed, renamed, deleted or
        unreadable)."""
        self.conn.execute(
            "UPDATE note_versions SET recorded_to = ?, ended = ? WHERE id = ? AND recorded_to IS NULL",
            (now, ended, version_id),
        )

    def version_before(self, version: VersionRow) -> VersionRow | None:
        """The version a note had just before ``version``: the one it replaced (not one that
        ended in a delete or as unreadable: the note was out of the index between them)."""
        row = self.conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE note_id = ? AND recorded_to = ? AND id < ?"
            " AND ended NOT IN ('deleted', 'unreadable') ORDER BY id DESC LIMIT 1",
            (version.note_id, version.recorded_from, version.id),
        ).fetchone()
        return VersionRow(*row) if row else None

    def content_held_elsewhere(self, version: VersionRow) -> bool:
        """Another version of the note has ``version``'s content (a revert came back to it)."""
        return (
            self.conn.execute(
                "SELECT 1 FROM note_versions WHERE note_id = ? AND hash = ? AND id <> ? LIMIT 1",
                (version.note_id, version.hash, version.id),
            ).fetchone()
            is not None
        )

    def fold_version(self, version: VersionRow, into: VersionRow, now: float | None, ended: str | None) -> None:
        """``version`` is not kept: ``into``, the version before it, covers its time up to
        ``now`` (None: ``into`` is current again, the note back as it was), and the note's
        edges opened or closed in that time open or close at ``now`` instead (an edge that
        lived only then goes), so the graph as of then is ``into``'s. Its text goes with it; its
        chunks were copied to history only if another version holds its content
        (``Recorder.before_write``)."""
        released = self._segmented_notes("id = ?", (version.id,))
        self.conn.execute("DELETE FROM note_versions WHERE id = ?", (version.id,))
        self.conn.execute("UPDATE note_versions SET recorded_to = ?, ended = ? WHERE id = ?", (now, ended, into.id))
        drop_unheld_segments(self.conn, released)

    def fold_edges(self, source_id: int, since: float, now: float) -> None:
        """The note's edges opened or closed from ``since`` until ``now`` open or close at ``now``
        (``fold_version``); call after the note's edges are in step with its new content. An
        edge that then closes at ``now`` where one the same opens goes on instead: the links
        the kept version and the new content both write are one span, as if the folded version
        had never been seen."""
        span = (source_id, since, now)
        self.conn.execute(
            "UPDATE link_history SET recorded_from = ? WHERE source_id = ? AND recorded_from >= ? AND recorded_from < ?",
            (now, *span),
        )
        self.conn.execute(
            "UPDATE link_history SET recorded_to = ? WHERE source_id = ? AND recorded_to >= ? AND recorded_to < ?",
            (now, *span),
        )
        self.conn.execute(
            "DELETE FROM link_history WHERE source_id = ? AND recorded_to IS NOT NULL AND recorded_to <= recorded_from",
            (source_id,),
        )
        same = "target, kind, count, world_date, valid_from, valid_to, note_status"
        closing = {
            tuple(r[1:]): r[0]
            for r in self.conn.execute(
                f"SELECT id, {same} FROM link_history WHERE source_id = ? AND recorded_to = ?", (source_id, now)
            )
        }
        for row in self.conn.execute(
            f"SELECT id, {same} FROM link_history WHERE source_id = ? AND recorded_from = ? AND recorded_to IS NULL",
            (source_id, now),
        ).fetchall():
            old = closing.pop(tuple(row[1:]), None)
            if old is not None:
                self.conn.execute("DELETE FROM link_history WHERE id = ?", (row[0],))
                self.conn.execute("UPDATE link_history SET recorded_to = NULL WHERE id = ?", (old,))

    def edges_moved_since(self, source_id: int, moment: float) -> bool:
        """Whether an edge of the note's links opened or closed after ``moment``."""
        row = self.conn.execute(
            "SELECT 1 FROM link_history WHERE source_id = ? AND (recorded_from > ? OR recorded_to > ?) LIMIT 1",
            (source_id, moment, moment),
        ).fetchone()
        return row is not None

    def edges_closed_at(self, source_id: int, moment: float) -> list[EdgeRow]:
        """The note's edges closed at ``moment`` (by the version that began then)."""
        rows = self.conn.execute(
            f"SELECT {_EDGE_COLUMNS} FROM link_history WHERE source_id = ? AND recorded_to = ? ORDER BY id",
            (source_id, moment),
        )
        return [EdgeRow(*r) for r in rows]

    def has_any_version(self) -> bool:
        return self.conn.execute("SELECT 1 FROM note_versions LIMIT 1").fetchone() is not None

    def has_versions(self, note_id: int) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM note_versions WHERE note_id = ? LIMIT 1", (note_id,)).fetchone()
            is not None
        )

    def identity_in_history(self, path: str, digest: str) -> int | None:
        """The id of a note no longer indexed that a new file at ``path`` with content ``digest``
        continues: the one whose last version was at ``path``, else one that once held these
        bytes (not empty ones: every empty note has them), the most recently seen."""
        row = self.conn.execute(
            "SELECT v.note_id FROM note_versions v WHERE v.path = ?"
            " AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.id = v.note_id)"
            " AND v.id = (SELECT max(w.id) FROM note_versions w WHERE w.note_id = v.note_id)"
            " ORDER BY v.id DESC LIMIT 1",
            (path,),
        ).fetchone()
        if row is None and digest != _EMPTY_HASH:
            row = self.conn.execute(
                "SELECT v.note_id FROM note_versions v WHERE v.hash = ?"
                " AND NOT EXISTS (SELECT 1 FROM notes n WHERE n.id = v.note_id)"
                " ORDER BY v.id DESC LIMIT 1",
                (digest,),
            ).fetchone()
        return int(row[0]) if row else None

    def retire_chunks(self, note_id: int, digest: str, title: str) -> None:
        """Keep the note's current chunks (with their vectors) as the past chunks of content
        ``digest``; call before they are replaced or deleted."""
        rows = self.conn.execute(
            "SELECT ordinal, heading, text, vector FROM chunks WHERE note_id = ? ORDER BY ordinal", (note_id,)
        ).fetchall()
        self._keep_past_chunks(note_id, digest, title, rows)

    def _keep_past_chunks(
        self, note_id: int, digest: str, title: str, rows: Sequence[tuple[int, str, str, bytes]]
    ) -> None:
        """(ordinal, heading, text, stored vector) become content ``digest``'s past chunks. A chunk
        the note's history already holds (the same title, heading, text and vector) is shared,
        not copied: a note that only grows would otherwise keep its whole length again at every
        version."""
        replaced = self.conn.execute(
            "DELETE FROM version_chunks WHERE note_id = ? AND hash = ?", (note_id, digest)
        ).rowcount
        known = dict(self.conn.execute("SELECT key, id FROM chunk_history WHERE note_id = ?", (note_id,)).fetchall())
        rows = sorted(rows, key=lambda row: row[0])
        keys = [past_chunk_key(title, heading, text) for _, heading, text, _ in rows]
        alike = sorted({known[key] for key in keys if key in known})
        vectors: dict[int, bytes] = {}
        for part in _parts(alike):
            found = self.conn.execute(f"SELECT id, vector FROM chunk_history WHERE id IN ({_marks(part)})", part)
            vectors.update((r[0], bytes(r[1])) for r in found)
        ids = []
        for key, (_, heading, text, vector) in zip(keys, rows):
            chunk_id = known.get(key)
            if chunk_id is not None and vectors.get(chunk_id) != bytes(vector):
                # Embedded otherwise (BRAIN_CHUNKING=…+path, the note in another folder): the past
                # as it was searched then keeps this vector, under a key of its own.
                key = past_chunk_variant_key(key, vector)
                chunk_id = known.get(key)
            if chunk_id is None:
                cursor = self.conn.execute(
                    "INSERT INTO chunk_history (note_id, key, title, heading, text, vector, search_title,"
                    " search_heading, search_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (note_id, key, title, heading, text, vector, searched(title), searched(heading), searched(text)),
                )
                chunk_id = known[key] = int(cursor.lastrowid or 0)
                vectors[chunk_id] = bytes(vector)
            ids.append(chunk_id)
        if ids:
            self.conn.execute(
                "INSERT INTO version_chunks (note_id, hash, chunk_ids) VALUES (?, ?, ?)",
                (note_id, digest, pack_ids(ids)),
            )
        if replaced:  # else nothing was let go: reading every past content's list costs a long log's every edit
            self._drop_unheld_chunks([note_id])

    def drop_history_chunks(self, note_id: int, digest: str) -> None:
        """Content ``digest`` is current again (a revert, a restore): its current chunks stand for
        it. Its past chunks that no other past content of the note holds go."""
        if self.conn.execute("DELETE FROM version_chunks WHERE note_id = ? AND hash = ?", (note_id, digest)).rowcount:
            self._drop_unheld_chunks([note_id])

    def _drop_unheld_chunks(self, note_ids: Iterable[int]) -> int:
        """Delete the past chunks of these notes that no past content of theirs holds; how many."""
        dropped = 0
        for note_id in note_ids:
            held: set[int] = set()
            for (blob,) in self.conn.execute("SELECT chunk_ids FROM version_chunks WHERE note_id = ?", (note_id,)):
                held.update(unpack_ids(blob))
            stored = [r[0] for r in self.conn.execute("SELECT id FROM chunk_history WHERE note_id = ?", (note_id,))]
            unheld = [chunk_id for chunk_id in stored if chunk_id not in held]
            for part in _parts(unheld):
                dropped += self.conn.execute(f"DELETE FROM chunk_history WHERE id IN ({_marks(part)})", part).rowcount
        return dropped

    def _past_chunk_texts(self, note_id: int, digest: str, schema: str = "main") -> list[str]:
        """The texts of a past content's chunks, in order ([] if history holds none)."""
        row = self.conn.execute(
            f"SELECT chunk_ids FROM {schema}.version_chunks WHERE note_id = ? AND hash = ?", (note_id, digest)
        ).fetchone()
        if row is None:
            return []
        ids = unpack_ids(row[0])
        texts: dict[int, str] = {}
        for part in _parts(sorted(set(ids))):
            rows = self.conn.execute(f"SELECT id, text FROM {schema}.chunk_history WHERE id IN ({_marks(part)})", part)
            texts.update((r[0], r[1]) for r in rows)
        return [texts[chunk_id] for chunk_id in ids if chunk_id in texts]

    def open_edges(self, source_id: int) -> list[EdgeRow]:
        rows = self.conn.execute(
            f"SELECT {_EDGE_COLUMNS} FROM link_history WHERE source_id = ? AND recorded_to IS NULL ORDER BY id",
            (source_id,),
        )
        return [EdgeRow(*r) for r in rows]

    def close_edges(self, edge_ids: Sequence[int], now: float) -> None:
        self.conn.executemany(
            "UPDATE link_history SET recorded_to = ? WHERE id = ? AND recorded_to IS NULL",
            [(now, edge_id) for edge_id in edge_ids],
        )

    def add_edges(self, source_id: int, edges: Sequence[tuple[str, str, int]], world: WorldTime, now: float) -> None:
        """Open edges (target as written, kind, how many times written) from ``now``, awaiting
        resolution (``sync_edge_targets``)."""
        self.conn.executemany(
            "INSERT INTO link_history (source_id, target, kind, count, status, world_date, valid_from, valid_to,"
            " note_status, recorded_from) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?)",
            [
                (source_id, target, kind, count, world.date, world.valid_from, world.valid_to, world.status, now)
                for target, kind, count in edges
            ],
        )

    def sync_edge_targets(
        self,
        now: float,
        *,
        full: bool,
        sources: Collection[int] = (),
        resolved: dict[tuple[int, str, str], tuple[int | None, str]] | None = None,
        within: tuple[int, int] | None = None,
    ) -> None:
        """After links were resolved (same transaction): open edges awaiting resolution take
        their link's target; with ``full``, an open edge whose link now resolves elsewhere (its
        target renamed, deleted, or newly there) is closed and a new one opened from ``now``;
        with ``sources``, the same for the open edges of those notes only (the notes whose links
        moved: every other edge still matches its link). ``resolved``, with ``full``: every
        link's resolution as the caller just made it, (source id, target, kind) → (target id,
        status), rather than read back (a first build: all of them). ``within``: only the edges of
        the notes whose ids are in this range (``resolved`` then holds those notes' links)."""
        # Edges and links are matched in Python, one pass over each: in SQL each of a hub note's
        # edges scanned all of its links (a note linking 682 others made this quadratic).
        of_range, bounds = (" AND source_id BETWEEN ? AND ?", within) if within is not None else ("", ())
        pending = self.conn.execute(
            "SELECT id, source_id, target, kind FROM link_history WHERE status = 'pending' AND recorded_to IS NULL"
            + of_range,
            bounds,
        ).fetchall()
        every = None
        if full:  # read once for both steps (links do not change here)
            every = resolved if resolved is not None else self._link_resolution(None, within)
            # The edges to compare, read before the pending ones take their targets from the
            # same resolution: those could not differ (a first build's are all pending).
            settled: list[Sequence[Any]] = self.conn.execute(
                f"SELECT {_EDGE_COLUMNS} FROM link_history WHERE recorded_to IS NULL AND status <> 'pending'"
                + of_range,
                bounds,
            ).fetchall()
        if pending:
            writers = sorted({r[1] for r in pending})
            resolution = (
                every
                if every is not None
                else self._link_resolution(writers if len(writers) < _PART * 4 else None, within)
            )
            self._update_rows(
                "link_history",
                "UPDATE link_history SET target_id = ?, status = ? WHERE id = ?",
                [(*resolution[(r[1], r[2], r[3])], r[0]) for r in pending if (r[1], r[2], r[3]) in resolution],
            )
        edges: Iterable[Sequence[Any]]
        if every is not None:
            resolution, edges = every, settled
        elif sources:
            ids = sorted(set(sources))
            resolution = self._link_resolution(ids)
            edges = []
            for part in _parts(ids):
                edges += self.conn.execute(
                    f"SELECT {_EDGE_COLUMNS} FROM link_history WHERE recorded_to IS NULL"
                    f" AND source_id IN ({_marks(part)})",
                    part,
                ).fetchall()
        else:
            return
        changed = []
        for row in edges:
            now_resolved = resolution.get((row[1], row[2], row[3]))
            if now_resolved is not None and now_resolved != (row[5], row[6]):
                changed.append((row, now_resolved))
        if not changed:
            return
        self.close_edges([row[0] for row, _ in changed], now)
        self.conn.executemany(
            "INSERT INTO link_history (source_id, target, kind, count, target_id, status, world_date, valid_from,"
            " valid_to, note_status, recorded_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(r[1], r[2], r[3], r[4], target, status, r[7], r[8], r[9], r[10], now) for r, (target, status) in changed],
        )

    def _link_resolution(
        self, sources: Sequence[int] | None, within: tuple[int, int] | None = None
    ) -> dict[tuple[int, str, str], tuple[int | None, str]]:
        """(source id, target as written, kind) → (target id, status) of resolved links, of these
        sources (None: all, or all whose ids are ``within`` this range)."""
        sql = "SELECT source_id, target, kind, target_id, status FROM links WHERE status != 'pending'"
        if sources is None and within is not None:
            rows = self.conn.execute(f"{sql} AND source_id BETWEEN ? AND ?", within).fetchall()
        elif sources is None:
            rows = self.conn.execute(sql).fetchall()
        else:
            rows = []
            for part in _parts(sources):
                rows += self.conn.execute(f"{sql} AND source_id IN ({_marks(part)})", part).fetchall()
        return {(r[0], r[1], r[2]): (r[3], r[4]) for r in rows}

    def close_orphan_history(self, now: float) -> list[int]:
        """Close versions and edges left open for notes the index no longer holds (what a
        rebuild carried over from notes deleted since); returns those notes' ids."""
        orphans = [
            r[0]
            for r in self.conn.execute(
                "SELECT note_id FROM note_versions WHERE recorded_to IS NULL AND note_id NOT IN (SELECT id FROM notes)"
            )
        ]
        self.conn.execute(
            "UPDATE note_versions SET recorded_to = ?, ended = 'deleted' WHERE recorded_to IS NULL"
            " AND note_id NOT IN (SELECT id FROM notes)",
            (now,),
        )
        self.conn.execute(
            "UPDATE link_history SET recorded_to = ? WHERE recorded_to IS NULL AND source_id NOT IN (SELECT id FROM notes)",
            (now,),
        )
        return orphans

    def prune_versions_of(self, note_id: int, keep: int) -> None:
        """Keep the last ``keep`` past versions recorded of a note (the current one always stays); drop
        the others, the chunks only they held, and the note's edges that closed before the
        oldest version left began. The past before the last of them is then incomplete:
        ``history_pruned_before`` moves up to it, so ``--as-of`` earlier says so."""
        old_versions = (
            "SELECT id, recorded_to FROM note_versions WHERE note_id = ? AND recorded_to IS NOT NULL"
            " ORDER BY id DESC LIMIT -1 OFFSET ?"
        )
        (versions_end,) = self.conn.execute(
            f"SELECT max(recorded_to) FROM ({old_versions})", (note_id, keep)
        ).fetchone()
        released = self._segmented_notes(f"id IN (SELECT id FROM ({old_versions}))", (note_id, keep))
        dropped = self.conn.execute(
            f"DELETE FROM note_versions WHERE id IN (SELECT id FROM ({old_versions}))", (note_id, keep)
        ).rowcount
        drop_unheld_segments(self.conn, released)
        dropped += self._drop_orphan_history_chunks("AND note_id = ?", (note_id,))
        old_edges = (
            "FROM link_history WHERE source_id = ? AND recorded_to IS NOT NULL"
            " AND recorded_to <= coalesce((SELECT min(recorded_from) FROM note_versions WHERE note_id = ?), 9e99)"
        )
        (edges_end,) = self.conn.execute(f"SELECT max(recorded_to) {old_edges}", (note_id, note_id)).fetchone()
        dropped += self.conn.execute(f"DELETE {old_edges}", (note_id, note_id)).rowcount
        ends = [end for end in (versions_end, edges_end) if end is not None]
        if ends:
            self.note_pruned_before(max(ends))
        if dropped:
            self._stamp_pruned()

    def _stamp_pruned(self) -> None:
        """History lost something in this transaction: ``RELOAD`` says when (once a transaction)."""
        if self._first_in_transaction(RELOAD):
            self.set_meta(RELOAD, repr(time.time()))

    def note_pruned_before(self, moment: float) -> None:
        """History before ``moment`` is incomplete (pruned): ``history_pruned_before`` only moves up."""
        previous = float(self.get_meta("history_pruned_before", "0") or 0)
        if moment > previous:
            self.set_meta("history_pruned_before", moment)

    def notes_over_keep(self, keep: int) -> list[int]:
        """Ids of the notes with more than ``keep`` past versions."""
        rows = self.conn.execute(
            "SELECT note_id FROM note_versions WHERE recorded_to IS NOT NULL GROUP BY note_id HAVING count(*) > ?",
            (keep,),
        )
        return [r[0] for r in rows]

    def prune_before(self, cutoff: float) -> dict[str, int]:
        """Drop what stopped being current before ``cutoff``: versions, the chunks only they
        held, closed edges. Returns how many of each."""
        released = self._segmented_notes("recorded_to IS NOT NULL AND recorded_to < ?", (cutoff,))
        versions = self.conn.execute(
            "DELETE FROM note_versions WHERE recorded_to IS NOT NULL AND recorded_to < ?", (cutoff,)
        ).rowcount
        drop_unheld_segments(self.conn, released)
        chunks = self._drop_orphan_history_chunks("", ())
        edges = self.conn.execute(
            "DELETE FROM link_history WHERE recorded_to IS NOT NULL AND recorded_to < ?", (cutoff,)
        ).rowcount
        if versions or chunks or edges:
            self._stamp_pruned()
        return {"versions": versions, "chunks": chunks, "links": edges}

    def prune_preview(self, cutoff: float) -> dict[str, float | int | None]:
        """What ``prune_before(cutoff)`` would drop, before it does: past versions and closed
        links (and how many there are), and when the first and the last of them were replaced."""
        dropped = (
            "SELECT count(*), min(recorded_to), max(recorded_to) FROM {} WHERE recorded_to IS NOT NULL"
            " AND recorded_to < ?"
        )
        versions, v_first, v_last = self.conn.execute(dropped.format("note_versions"), (cutoff,)).fetchone()
        links, l_first, l_last = self.conn.execute(dropped.format("link_history"), (cutoff,)).fetchone()
        firsts = [m for m in (v_first, l_first) if m is not None]
        lasts = [m for m in (v_last, l_last) if m is not None]
        counts = self.history_counts()
        return {
            "versions": int(versions),
            "links": int(links),
            "all_versions": counts["past_versions"],
            "all_links": counts["closed_edges"],
            "first": min(firsts, default=None),
            "last": max(lasts, default=None),
        }

    def _drop_orphan_history_chunks(self, where: str, params: tuple) -> int:
        """Past chunks no version needs any more: no version holds a content they stand in, or
        that content is current. Returns how many went. Current is the current version's (not
        the note row's: a note being deleted still has its row, its content already retired)."""
        unneeded = (
            "FROM version_chunks c WHERE"
            " (NOT EXISTS (SELECT 1 FROM note_versions v WHERE v.note_id = c.note_id AND v.hash = c.hash)"
            " OR EXISTS (SELECT 1 FROM note_versions w WHERE w.note_id = c.note_id AND w.hash = c.hash"
            " AND w.recorded_to IS NULL))"
            f" {where.replace('note_id', 'c.note_id')}"
        )
        notes = [r[0] for r in self.conn.execute(f"SELECT DISTINCT c.note_id {unneeded}", params)]
        for part in _parts(notes):
            self.conn.execute(
                f"DELETE FROM version_chunks WHERE (note_id, hash) IN (SELECT c.note_id, c.hash {unneeded}"
                f" AND c.note_id IN ({_marks(part)}))",
                (*params, *part),
            )
        return self._drop_unheld_chunks(notes)

    def _segmented_notes(self, where: str, params: tuple) -> list[int]:
        """The notes of the versions ``where`` picks whose text is kept in segments: those whose
        segments may be let go once these versions go or take other text."""
        rows = self.conn.execute(
            f"SELECT DISTINCT note_id FROM note_versions WHERE ({where}) AND substr(content, 1, 1) = ?",
            (*params, SEGMENTED),
        )
        return [r[0] for r in rows]

    def history_fingerprint(self) -> str:
        """Changes whenever this index's history or present changes (a rebuild that carried the
        history of an index that moved on since must start over). Counts, not only the last ids:
        pruning drops old rows, and past versions whose chunks later ones share leave
        ``chunk_history`` as it was."""
        one = lambda sql: self.conn.execute(sql).fetchone()[0]
        meta = self._has_table("meta")  # a damaged index's history is carried without it
        parts = [
            self.index_id() if meta else None,
            self.vectors_version() if meta else None,
            one("SELECT max(id) FROM note_versions"),
            one("SELECT count(*) FROM note_versions WHERE recorded_to IS NULL"),
            one("SELECT max(id) FROM link_history"),
            one("SELECT count(*) FROM link_history WHERE recorded_to IS NULL"),
            one("SELECT count(*) FROM chunk_history"),
            one("SELECT count(*) FROM note_versions"),
            one("SELECT count(*) FROM link_history"),
            one("SELECT count(*) FROM version_chunks"),
            one("SELECT count(*) FROM text_segments") if self._has_table("text_segments") else None,
        ]
        return ":".join(str(part) for part in parts)

    def carry_history_from(self, old: Path) -> None:
        """Seed this (new, empty) index with the history of the index database ``old``, ids kept:
        its versions, edges and past chunks. Note ids continue after the old ones, so a note
        the new index has not seen before gets an id of its own. ``carry_replaced_chunks``
        finishes the job once the new index holds the vault."""
        self.conn.execute("ATTACH DATABASE ? AS old", (str(old.absolute()),))
        try:
            with self.transaction():
                self.conn.execute(
                    f"INSERT INTO note_versions ({_VERSION_COPY}) SELECT {_VERSION_COPY} FROM old.note_versions"
                )
                if all(self._has_table(name, "old") for name in TEXT_TABLES):
                    self.conn.execute(f"INSERT INTO text_packs ({_PACK_COPY}) SELECT {_PACK_COPY} FROM old.text_packs")
                    self.conn.execute(
                        f"INSERT INTO text_segments ({_SEGMENT_COPY}) SELECT {_SEGMENT_COPY} FROM old.text_segments"
                    )
                else:  # a damaged index's segments, or their bytes, gone: those texts are not kept
                    self.conn.execute(
                        "UPDATE note_versions SET content = NULL WHERE substr(content, 1, 1) = ?", (SEGMENTED,)
                    )
                # The old index's current versions keep their bytes against its chunks: past texts here.
                rows = self.conn.execute(
                    "SELECT id, note_id, hash, content FROM note_versions WHERE recorded_to IS NULL AND content IS NOT NULL"
                ).fetchall()
                old_chunks = self._has_table("chunks", "old")  # gone from a damaged index: those texts with them
                for version_id, note_id, digest, content in rows:
                    if needs_dictionary(bytes(content)):
                        data = self._text_against_chunks(note_id, digest, bytes(content), "old") if old_chunks else None
                        self.conn.execute(
                            "UPDATE note_versions SET content = ? WHERE id = ?",
                            (past_text(self.conn, note_id, data) if data is not None else None, version_id),
                        )
                self.conn.execute(f"INSERT INTO link_history ({_EDGE_COPY}) SELECT {_EDGE_COPY} FROM old.link_history")
                # Their searched form made by this brain as they come in: set after, each chunk it
                # changed was indexed in chunk_history_fts again (vaultofknowledge: 111 of 6,588).
                self.conn.create_function("brain_searched", 1, searched_if_any, deterministic=True)
                self.conn.execute(
                    f"INSERT INTO chunk_history ({_CHUNK_COPY}, search_title, search_heading, search_text)"
                    f" SELECT {_CHUNK_COPY}, brain_searched(title), brain_searched(heading), brain_searched(text)"
                    " FROM old.chunk_history ORDER BY id"
                )
                self.conn.execute(
                    f"INSERT INTO version_chunks ({_VERSION_CHUNK_COPY})"
                    f" SELECT {_VERSION_CHUNK_COPY} FROM old.version_chunks"
                )
                last = self.conn.execute(
                    "SELECT max(coalesce((SELECT seq FROM old.sqlite_sequence WHERE name = 'notes'), 0),"
                    " coalesce((SELECT max(note_id) FROM note_versions), 0))"
                ).fetchone()[0]
                self.conn.execute("DELETE FROM sqlite_sequence WHERE name = 'notes'")
                self.conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('notes', ?)", (last,))
                old_meta = self._has_table("meta", "old")  # gone from a damaged index: its history without it
                for key in ("history_since", "history_pruned_before", HISTORY_CLOCK, NAMES_CLOCK):
                    row = (
                        self.conn.execute("SELECT value FROM old.meta WHERE key = ?", (key,)).fetchone()
                        if old_meta
                        else None
                    )
                    if row is not None:
                        self.set_meta(key, row[0])
                first = self.conn.execute("SELECT min(recorded_from) FROM note_versions").fetchone()[0]
                if not old_meta and first is not None:  # from its first version on, as m007_history
                    self.set_meta("history_since", repr(first))
                model = (
                    self.conn.execute("SELECT value FROM old.meta WHERE key = 'model'").fetchone() if old_meta else None
                )
                self.set_meta("history_vectors_model", model[0] if model else "")
                self.set_meta("history_carry_from", str(old.absolute()))
                self.set_meta("history_carry", "seeded")
        finally:
            self.conn.execute("DETACH DATABASE old")

    def carry_replaced_chunks(self, old: Path) -> list[str]:
        """The old index's current chunks of contents that are not current here (the note changed
        or went since the old index was last brought up to date) become past chunks here. Returns
        the tables that needs which a damaged old index lacks (then nothing is carried)."""
        self.conn.execute("ATTACH DATABASE ? AS old", (str(old.absolute()),))
        try:
            lacking = [name for name in ("notes", "chunks") if not self._has_table(name, "old")]
            if lacking:
                return lacking
            with self.transaction():
                contents = self.conn.execute(
                    "SELECT n.id, n.hash, n.title FROM old.notes n"
                    " WHERE NOT EXISTS (SELECT 1 FROM notes m WHERE m.id = n.id AND m.hash = n.hash)"
                    " AND NOT EXISTS (SELECT 1 FROM version_chunks h WHERE h.note_id = n.id AND h.hash = n.hash)"
                    " AND EXISTS (SELECT 1 FROM note_versions v WHERE v.note_id = n.id AND v.hash = n.hash)"
                    " ORDER BY n.id"
                ).fetchall()
                for note_id, digest, title in contents:
                    rows = self.conn.execute(
                        "SELECT ordinal, heading, text, vector FROM old.chunks WHERE note_id = ? ORDER BY ordinal",
                        (note_id,),
                    ).fetchall()
                    self._keep_past_chunks(note_id, digest, title, rows)
        finally:
            self.conn.execute("DETACH DATABASE old")
        return []

    def optimize_history_search(self) -> None:
        """Merge the past chunks' BM25 index into one segment. Deleting from an FTS5 index only
        adds tombstones: without this, pruning every past chunk left the index's pages in
        place (1,000 versions pruned: 10.8 MB of a 11 MB database, which VACUUM cannot free)."""
        with self.transaction():
            self.conn.execute("INSERT INTO chunk_history_fts (chunk_history_fts) VALUES ('optimize')")

    def versions_at(self, moment: float | None) -> list[VersionRow]:
        """The version of every note current at ``moment`` (None: now), by note id."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: a sqlite3.Row each was a fifth of reading 100,000
        if moment is None:
            sql = f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE recorded_to IS NULL ORDER BY note_id"
            return [VersionRow(*r) for r in cursor.execute(sql)]
        rows = cursor.execute(
            f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE recorded_from <= ?"
            " AND (recorded_to IS NULL OR recorded_to > ?) ORDER BY note_id",
            (moment, moment),
        )
        return [VersionRow(*r) for r in rows]

    def slice_rows_at(self, moment: float | None) -> Iterator[tuple]:
        """What a view of the past keeps of the version of every note current at ``moment``
        (None: now, of the notes the notes table holds), by note id: (note id, path, title,
        aliases, date, frontmatter, world date, valid from, valid to, recorded from, recorded
        to, 1 where its content is the note's now, its content hash); none of the rest of a
        ``VersionRow``."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        columns = (
            "v.note_id, v.path, v.title, v.aliases, v.date, v.frontmatter, v.world_date, v.valid_from, v.valid_to,"
            " v.recorded_from, v.recorded_to, coalesce(v.hash = n.hash, 0), v.hash"
        )
        if moment is None:  # a version may lag a crash: the notes are the notes table's
            sql = (
                f"SELECT {columns} FROM note_versions v JOIN notes n ON n.id = v.note_id"
                " WHERE v.recorded_to IS NULL ORDER BY v.note_id"
            )
            cursor.execute(sql)
        else:
            sql = (
                f"SELECT {columns} FROM note_versions v LEFT JOIN notes n ON n.id = v.note_id"
                " WHERE v.recorded_from <= ? AND (v.recorded_to IS NULL OR v.recorded_to > ?) ORDER BY v.note_id"
            )
            cursor.execute(sql, (moment, moment))
        # a batch at a time: the rows a view keeps objects of would hold most of them all in
        # memory after they go (100,000 notes: 50 MB of a view's resident 193 MB)
        while batch := cursor.fetchmany(SLICE_BATCH):
            yield from batch

    def names_at(self, moment: float) -> list[tuple[int, str, str, str]]:
        """(note id, path, title, aliases as JSON) of every note current at ``moment``, by note id:
        what a note is found by then (``reading.read_note_at``), without the rest of its version."""
        return self.conn.execute(
            "SELECT note_id, path, title, aliases FROM note_versions WHERE recorded_from <= ?"
            " AND (recorded_to IS NULL OR recorded_to > ?) ORDER BY note_id",
            (moment, moment),
        ).fetchall()

    def version_at(self, note_id: int, moment: float) -> VersionRow | None:
        """The note's version current at ``moment``; None when it had none then."""
        row = self.conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE note_id = ? AND recorded_from <= ?"
            " AND (recorded_to IS NULL OR recorded_to > ?) ORDER BY id DESC LIMIT 1",
            (note_id, moment, moment),
        ).fetchone()
        return VersionRow(*row) if row else None

    def history_changed_between(self, start: float, end: float) -> bool:
        """Whether a version or an edge began or ended after ``start`` and by ``end``; if not,
        history's slice at either moment is the same (``brain serve`` takes a view of the past
        it keeps for another moment then)."""
        for table in ("note_versions", "link_history"):
            row = self.conn.execute(
                f"SELECT 1 FROM {table} WHERE (recorded_from > ? AND recorded_from <= ?)"
                " OR (recorded_to > ? AND recorded_to <= ?) LIMIT 1",
                (start, end, start, end),
            ).fetchone()
            if row is not None:
                return True
        return False

    def history_latest(self) -> float:
        """The latest moment history holds (a version or an edge opened or closed); 0 when none.
        Read from ``history_clock`` (``Recorder.now`` keeps it, in the transaction that records
        at it); an index from before it is read once from the tables (max(recorded_to) reads
        every entry of an index: 75 ms at a million edges, each run)."""
        clock = self.get_meta(HISTORY_CLOCK)
        if clock is not None:
            return float(clock)
        moments = self.conn.execute(
            "SELECT max(recorded_from), max(recorded_to) FROM note_versions"
            " UNION ALL SELECT max(recorded_from), max(recorded_to) FROM link_history"
        ).fetchall()
        return max((m for row in moments for m in row if m is not None), default=0.0)

    def record_history_clock(self, moment: float) -> None:
        """``moment`` is the latest history has recorded at (call inside that transaction)."""
        self.set_meta(HISTORY_CLOCK, repr(moment))

    def versions_of(self, note_id: int) -> list[VersionRow]:
        """Every version of a note, oldest first: in the order they were recorded (row ids only
        grow), which a clock set back cannot reorder."""
        rows = self.conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE note_id = ? ORDER BY id", (note_id,)
        )
        return [VersionRow(*r) for r in rows]

    def version_bytes(self, version_id: int, cache: SegmentCache | None = None) -> bytes | None:
        """The version's bytes (the file as it was), or None when not kept, or when what is kept
        does not read back as the bytes its hash names (logged): missing, never wrong. ``cache``:
        the segments of the text read before (``SegmentCache``), for reading a note's versions
        one after another."""
        row = self.conn.execute(
            "SELECT note_id, hash, content FROM note_versions WHERE id = ?", (version_id,)
        ).fetchone()
        if row is None or row[2] is None:
            return None
        note_id, digest, blob = row[0], row[1], bytes(row[2])
        if needs_dictionary(blob):
            return self._text_against_chunks(note_id, digest, blob)
        data = self._past_text(note_id, digest, blob, cache)
        if data is None and cache is not None:
            cache.clear()  # (what it held may be from before a prune)
            data = self._past_text(note_id, digest, blob, None)
        if data is None:
            log.error("note %s: the text of its version %s could not be read back", note_id, digest[:12])
        return data

    def _past_text(self, note_id: int, digest: str, blob: bytes, cache: SegmentCache | None) -> bytes | None:
        try:
            data = (
                segmented_text(self.conn, note_id, blob, cache=cache) if is_segmented(blob) else decompress_text(blob)
            )
        except zlib.error:
            return None
        return data if data is not None and hashlib.sha256(data).hexdigest() == digest else None

    def version_spans(self, note_ids: Sequence[int]) -> dict[int, tuple[float, float | None]]:
        """note id → (recorded_from, recorded_to) of its current version."""
        out: dict[int, tuple[float, float | None]] = {}
        for part in _parts(note_ids):
            rows = self._tuples().execute(
                f"SELECT note_id, recorded_from, recorded_to FROM note_versions WHERE note_id IN ({_marks(part)})"
                " AND recorded_to IS NULL",
                part,
            )
            out.update((r[0], r[1:]) for r in rows)
        return out

    def latest_versions(self) -> list[VersionRow]:
        """The latest version of every note history knows, present or deleted, by note id."""
        rows = self.conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE id IN"
            " (SELECT max(id) FROM note_versions GROUP BY note_id) ORDER BY note_id"
        )
        return [VersionRow(*r) for r in rows]

    def history_chunks_of(self, note_ids: Sequence[int]) -> list[tuple[int, int, str]]:
        """(past chunk id, note id, content hash) of every past chunk of these notes, once for
        each past content of the note that holds it."""
        out: list[tuple[int, int, str]] = []
        for part in _parts(note_ids):
            rows = self.conn.execute(
                f"SELECT note_id, hash, chunk_ids FROM version_chunks WHERE note_id IN ({_marks(part)})", part
            )
            for note_id, digest, blob in rows:
                out.extend((chunk_id, note_id, digest) for chunk_id in dict.fromkeys(unpack_ids(blob)))
        return out

    def history_chunk_rows(self, chunk_ids: Sequence[int]) -> dict[int, tuple[int, str, str]]:
        """past chunk id → (note id, heading, text)."""
        out: dict[int, tuple[int, str, str]] = {}
        for part in _parts(chunk_ids):
            rows = self.conn.execute(
                f"SELECT id, note_id, heading, text FROM chunk_history WHERE id IN ({_marks(part)})", part
            )
            out.update((r[0], (r[1], r[2], r[3])) for r in rows)
        return out

    def history_chunk_fields(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
        """past chunk id → (title, heading, text): its FTS columns, as searched (m021: the text a
        word split by an invisible character is whole in)."""
        out: dict[int, tuple[str, str, str]] = {}
        for part in _parts(chunk_ids):
            rows = self.conn.execute(
                f"SELECT id, title, heading, text FROM chunk_history_fts_source WHERE id IN ({_marks(part)})", part
            )
            out.update((r[0], (r[1], r[2], r[3])) for r in rows)
        return out

    def history_chunk_vectors(self, chunk_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        """(past chunk id, note id, float32 vector bytes)."""
        rows = self.history_chunk_codes(chunk_ids)
        return [(r[0], r[1], v) for r, v in zip(rows, _float32([r[2] for r in rows]))]

    def history_chunk_codes(self, chunk_ids: Sequence[int]) -> list[tuple[int, int, bytes]]:
        """(past chunk id, note id, vector as stored: ``vector_blobs``)."""
        out: list[tuple[int, int, bytes]] = []
        for part in _parts(chunk_ids):
            out += self._tuples().execute(
                f"SELECT id, note_id, vector FROM chunk_history WHERE id IN ({_marks(part)})", part
            )
        return out

    def history_chunks_to_embed(self, after_id: int, limit: int) -> list[tuple[int, str, str, str]]:
        """(past chunk id, title, heading, text) past ``after_id``, ascending: a rebuild re-embeds them."""
        rows = self.conn.execute(
            "SELECT id, title, heading, text FROM chunk_history WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def set_history_vectors(self, rows: Iterable[tuple[bytes, int]]) -> None:
        """(float32 vector bytes, past chunk id) for each past chunk re-embedded."""
        rows = list(rows)
        blobs = _stored([v for v, _ in rows])
        self.conn.executemany("UPDATE chunk_history SET vector = ? WHERE id = ?", zip(blobs, (i for _, i in rows)))

    def history_term_chunk_ids(self, term: str) -> Iterator[int]:
        """Ids of the past chunks that hold an FTS term (as ``term_chunk_counts`` takes it)."""
        cursor = self.conn.execute(
            "SELECT rowid FROM chunk_history_fts WHERE chunk_history_fts MATCH ?",
            ('"' + term.replace('"', '""') + '"',),
        )
        try:
            while rows := cursor.fetchmany(4096):
                yield from (r[0] for r in rows)
        finally:
            cursor.close()

    def history_vocabulary_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Terms of the past chunks' index (of every moment) that begin with ``prefix``, the most
        widespread first (``vocabulary_with_prefix``'s, over chunk_history_fts)."""
        self.conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_history_vocab"
            " USING fts5vocab(main, 'chunk_history_fts', 'row')"
        )
        return self._terms_with_prefix("chunk_history_vocab", prefix, limit)

    def _terms_with_prefix(self, vocab: str, prefix: str, limit: int) -> list[str]:
        """The terms of the fts5vocab table ``vocab`` (of temp) that begin with ``prefix``, the most
        widespread first: those between it and it followed by the last code point."""
        rows = self.conn.execute(
            f"SELECT term FROM temp.{vocab} WHERE term > ? AND term < ? ORDER BY doc DESC LIMIT ?",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [r[0] for r in rows]

    def any_settled_edge(self) -> bool:
        """Whether the link history holds an edge that was resolved, or found dangling (a first
        build has none yet: every edge awaits resolution)."""
        return (
            self.conn.execute("SELECT 1 FROM link_history WHERE status IN ('resolved', 'dangling') LIMIT 1").fetchone()
            is not None
        )

    def every_version_span(self) -> list[tuple[int, str, str, float, float | None]]:
        """Every note version's (note id, path, aliases, recorded from, recorded to), oldest first."""
        return self.conn.execute(
            "SELECT note_id, path, aliases, recorded_from, recorded_to FROM note_versions ORDER BY recorded_from, id"
        ).fetchall()

    def resolved_link_history(self) -> list[tuple[int, int, str, str, int, float, float | None]]:
        """The link history's resolved edges: (id, source id, target, kind, target id, recorded
        from, recorded to), in the order they were written."""
        return self.conn.execute(
            "SELECT id, source_id, target, kind, target_id, recorded_from, recorded_to FROM link_history"
            " WHERE status = 'resolved' ORDER BY id"
        ).fetchall()

    def dangling_dotted_wikilink_history(self) -> list[tuple[int, int, str, str, None, float, float | None]]:
        """The link history's dangling edges of wikilinks (any kind but markdown) whose target holds
        a ".", as ``resolved_link_history`` gives them: those a `[[../Note]]` made among them."""
        return self.conn.execute(
            "SELECT id, source_id, target, kind, target_id, recorded_from, recorded_to FROM link_history"
            " WHERE status = 'dangling' AND kind != 'markdown' AND target LIKE '%.%' ORDER BY id"
        ).fetchall()

    def cut_edge(self, edge_id: int, pieces: list[tuple[int | None, str, float, float | None]]) -> list[int]:
        """The edge ``edge_id`` read again as ``pieces`` (target id, status, recorded from,
        recorded to), one after another over its span: it keeps the first, each other is a copy of
        it with its own target, status and span (``linking.reread_link_history``). Returns the
        pieces' ids."""
        (target_id, status, _, ended), *rest = pieces
        self.conn.execute(
            "UPDATE link_history SET target_id = ?, status = ?, recorded_to = ? WHERE id = ?",
            (target_id, status, ended, edge_id),
        )
        ids = [edge_id]
        for answer, status, begun, ended in rest:
            cursor = self.conn.execute(
                "INSERT INTO link_history (source_id, target, kind, count, target_id, status, world_date,"
                " valid_from, valid_to, note_status, recorded_from, recorded_to) SELECT source_id, target, kind,"
                " count, ?, ?, world_date, valid_from, valid_to, note_status, ?, ? FROM link_history WHERE id = ?",
                (answer, status, begun, ended, edge_id),
            )
            ids.append(cast(int, cursor.lastrowid))
        return ids

    def join_alike_edges(self, edge_ids: Collection[int]) -> int:
        """Each of these edges and an edge of its note alike in all but its span, one ending where the
        other begins, made one (the earlier kept, to the later's end): what ``cut_edge`` read again
        of a span that ended where a run opened the same edge anew (an upgrade that recorded as a
        change of link what the rule changed). Returns how many edges were joined into others."""
        pairs = (
            "SELECT a.id, b.id, b.recorded_to FROM link_history a JOIN link_history b ON b.source_id = a.source_id"
            f" AND b.recorded_from = a.recorded_to AND {' AND '.join(f'b.{c} IS a.{c}' for c in _ALIKE_EDGE)}"
        )
        joined = 0
        for edge_id in sorted(edge_ids):
            # the one it ends where it begins, then the one ending where it begins (by id each: no scan)
            while pair := (
                self.conn.execute(f"{pairs} WHERE a.id = ? LIMIT 1", (edge_id,)).fetchone()
                or self.conn.execute(f"{pairs} WHERE b.id = ? LIMIT 1", (edge_id,)).fetchone()
            ):
                self.conn.execute("DELETE FROM link_history WHERE id = ?", (pair[1],))
                self.conn.execute("UPDATE link_history SET recorded_to = ? WHERE id = ?", (pair[2], pair[0]))
                edge_id = pair[0]
                joined += 1
        return joined

    def edges_at(self, moment: float) -> list[tuple[int, int, str, int]]:
        """(source id, target id, kind, times written) of every resolved edge recorded at
        ``moment``, between two different notes, in link order."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: 500,000 sqlite3.Row objects, then tuples, were a third of the read
        return cursor.execute(
            "SELECT source_id, target_id, kind, count FROM link_history WHERE status = 'resolved'"
            " AND target_id IS NOT NULL AND target_id != source_id"
            " AND recorded_from <= ? AND (recorded_to IS NULL OR recorded_to > ?) ORDER BY id",
            (moment, moment),
        ).fetchall()

    def edges_from(self, note_id: int) -> list[EdgeRow]:
        """Every edge the note's links ever made, oldest first."""
        rows = self.conn.execute(
            f"SELECT {_EDGE_COLUMNS} FROM link_history WHERE source_id = ? ORDER BY id", (note_id,)
        )
        return [EdgeRow(*r) for r in rows]

    def edges_into(self, note_id: int) -> list[EdgeRow]:
        """Every edge other notes' links ever resolved to this note, oldest first."""
        rows = self.conn.execute(
            f"SELECT {_EDGE_COLUMNS} FROM link_history WHERE target_id = ? AND source_id != ? ORDER BY id",
            (note_id, note_id),
        )
        return [EdgeRow(*r) for r in rows]

    def versions_at_path(self, path: str) -> list[VersionRow]:
        """Every version any note had at ``path``, oldest first (``brain history``'s notes that
        lived at a path another note holds)."""
        rows = self.conn.execute(f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE path = ? ORDER BY id", (path,))
        return [VersionRow(*r) for r in rows]

    def version_names(self) -> list[tuple[int, str, str, str]]:
        """(note id, path, title, aliases JSON) of every version, newest first: every name a note
        ever had."""
        rows = self.conn.execute("SELECT note_id, path, title, aliases FROM note_versions ORDER BY id DESC")
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def paths_over_time(self, note_ids: Sequence[int]) -> dict[int, list[tuple[float, str]]]:
        """note id → (recorded_from, path) of each of its versions, oldest first."""
        out: dict[int, list[tuple[float, str]]] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(
                f"SELECT note_id, recorded_from, path FROM note_versions WHERE note_id IN ({_marks(part)}) ORDER BY id",
                part,
            )
            for note_id, start, path in rows:
                out.setdefault(note_id, []).append((start, path))
        return out

    def whereabouts_now(self, notes: Sequence[tuple[int, str]]) -> dict[int, tuple[str | None, str | None, bool]]:
        """(note id, a path it had) → (its path now when another, else None; how it left the
        index (deleted, unreadable), else None; whether a different note is at that path now)."""
        latest = self.latest_of([note_id for note_id, _ in notes])
        out: dict[int, tuple[str | None, str | None, bool]] = {}
        for note_id, path in notes:
            version = latest.get(note_id)
            if version is None:
                continue
            gone = (version.ended or "deleted") if version.recorded_to is not None else None
            moved = version.path if gone is None and version.path != path else None
            reused = (gone is not None or moved is not None) and self.note_id(path) not in (None, note_id)
            out[note_id] = (moved, gone, reused)
        return out

    def latest_of(self, note_ids: Sequence[int]) -> dict[int, VersionRow]:
        """note id → its latest version, present or past."""
        out: dict[int, VersionRow] = {}
        for part in _parts(note_ids):
            rows = self.conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM note_versions WHERE id IN"
                f" (SELECT max(id) FROM note_versions WHERE note_id IN ({_marks(part)}) GROUP BY note_id)",
                part,
            )
            for r in rows:
                version = VersionRow(*r)
                out[version.note_id] = version
        return out

    def history_counts(self) -> dict[str, int]:
        one = lambda sql: int(self.conn.execute(sql).fetchone()[0] or 0)
        return {
            "versions": one("SELECT count(*) FROM note_versions"),
            "past_versions": one("SELECT count(*) FROM note_versions WHERE recorded_to IS NOT NULL"),
            "notes_with_past": one("SELECT count(DISTINCT note_id) FROM note_versions WHERE recorded_to IS NOT NULL"),
            "deleted_notes": one(
                "SELECT count(DISTINCT note_id) FROM note_versions WHERE note_id NOT IN (SELECT id FROM notes)"
            ),
            "past_chunks": one("SELECT count(*) FROM chunk_history"),
            "edges": one("SELECT count(*) FROM link_history"),
            "closed_edges": one("SELECT count(*) FROM link_history WHERE recorded_to IS NOT NULL"),
            "texts": one("SELECT count(*) FROM note_versions WHERE content IS NOT NULL"),
        }

    def history_bytes(self) -> tuple[int, int] | None:
        """(bytes the history tables and their indexes take, bytes of the whole database). The
        first is read from SQLite's dbstat, one b-tree at a time (only history's pages are
        visited); None where SQLite was built without it."""
        names = [
            r[0]
            for r in self.conn.execute(
                f"SELECT name FROM sqlite_master WHERE tbl_name IN ({_marks(sorted(HISTORY_TABLES))})"
                " OR name LIKE 'chunk_history_fts%'",
                sorted(HISTORY_TABLES),
            )
        ]
        history = 0
        try:
            for name in names:
                row = self.conn.execute(
                    "SELECT pgsize FROM dbstat WHERE name = ? AND aggregate = TRUE", (name,)
                ).fetchone()
                history += int(row[0] or 0) if row else 0
        except sqlite3.OperationalError:
            return None
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        return history, int(pages) * int(size)
