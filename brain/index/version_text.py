"""How history keeps a note version's bytes: zlib, for the current version a delta against its
own chunks, and for a long past one segments shared between its versions.

Every version keeps the file's bytes (``note_versions.content``), so a past version's text can
be shown and compared after the file has changed. The current version's text is, give or take
frontmatter and markup, the text of the note's chunks, which the index holds anyway: its bytes
are compressed with those chunk texts as zlib's preset dictionary, and take ~80 bytes instead of
~2.5 KB for a note of five chunks (bench/scale.py: index.db 0.5 KB a chunk smaller).

The dictionary must be there to read the text back, so only a *current* version is kept this
way, while the note's chunks are the chunks of that content: before a version stops being
current (the note changes, is renamed or deleted), or its chunks are rewritten, its bytes are
kept as a past text (``IndexStore.settle_version_text``). zlib marks a stream made with a
dictionary (FDICT) and checks the dictionary's Adler-32 on the way back, so a wrong one is an
error, never wrong text; readers check the SHA-256 too.

A past text under ``SEGMENTS_FROM`` bytes is one zlib stream. A longer one is cut into
*segments* at line ends chosen by the lines' own bytes (``split_segments``), each kept once per
note (``text_segments``; the bytes of those a version brings compressed together in
``text_packs``), and the version keeps the list of its segments' ids (``segment_list``). A cut
depends on the lines around it and on where the cut before it fell, so an edit changes the
segments around it and the rest are the ones earlier versions have: a log appended to 800 times
kept its whole text again at each version (17.6 MB for 255 KB at the end), and keeps each
version's new segments now (0.45 MB).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

log = logging.getLogger(__name__)

WINDOW = 32768  # deflate reaches back 32 KB: a longer dictionary's start is never used
LEVEL = 6

# A content kept as segments begins with this byte and then lists them (``segment_list``). No zlib
# stream begins with it: its first byte's low four bits say deflate, 8 (RFC 1950).
SEGMENTED = b"\x00"
# Past texts this long or longer are kept as segments; shorter ones (most notes) as before, one
# zlib stream. bench/history.py's cost run (1,003 notes, 1,000 past versions) kept 7.27 MB of
# history from 4 KB on against 7.33 MB with every text whole; from 512 bytes on 7.10 MB, but then
# an edit of a 1 KB note took ~0.1 ms more (a few statements more) and a read of its text 5×.
SEGMENTS_FROM = 4096
# A segment ends at a line end once it holds MIN_SEGMENT bytes, at each line with a chance of
# its length over CUT_SPAN (so ~2 KB on average whatever the lines' lengths), and by
# MAX_SEGMENT bytes at the latest (a longer line is cut between words, a longer word anywhere).
MIN_SEGMENT = 512
CUT_SPAN = 1536
MAX_SEGMENT = 8192


def chunk_dictionary(texts: Iterable[str]) -> bytes:
    """The preset dictionary made of a content's chunk texts, in order."""
    return "\n".join(texts).encode("utf-8", "surrogatepass")[-WINDOW:]


def compress(data: bytes, dictionary: bytes = b"") -> bytes:
    """``data`` as zlib, against ``dictionary`` when there is one."""
    if not dictionary:
        return zlib.compress(data, LEVEL)
    packer = zlib.compressobj(LEVEL, zdict=dictionary)
    return packer.compress(data) + packer.flush()


def is_segmented(blob: bytes) -> bool:
    """The content is a list of segments (``segment_list``), not a zlib stream."""
    return blob[:1] == SEGMENTED


def needs_dictionary(blob: bytes) -> bool:
    """The stream was made with a preset dictionary (zlib's FDICT flag, RFC 1950)."""
    return len(blob) >= 2 and not is_segmented(blob) and bool(blob[1] & 0x20)


def decompress(blob: bytes, dictionary: bytes = b"") -> bytes:
    """The bytes back; ``zlib.error`` when the stream needs a dictionary and this is not it."""
    if not needs_dictionary(blob):
        return zlib.decompress(blob)
    unpacker = zlib.decompressobj(zdict=dictionary)
    data = unpacker.decompress(blob) + unpacker.flush()
    if not unpacker.eof:
        raise zlib.error("incomplete stream")
    return data


def segment_list(ids: Sequence[int]) -> bytes:
    """A version's content as its segments' ids, in order: ``SEGMENTED``, then each id's
    difference from the one before (zigzag, so a smaller one is small too) as a LEB128
    varint, zlib-compressed. A note that grows lists mostly ids a few apart: ~2 bytes each."""
    out = bytearray()
    before = 0
    for segment_id in ids:
        delta = segment_id - before
        before = segment_id
        value = delta * 2 if delta >= 0 else -delta * 2 - 1
        while value >= 0x80:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        out.append(value)
    return SEGMENTED + zlib.compress(bytes(out), LEVEL)


def segment_ids(blob: bytes) -> list[int]:
    """The segment ids a ``segment_list`` holds, in order."""
    ids = []
    value = shift = before = 0
    for byte in zlib.decompress(blob[1:]):
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            before += value // 2 if value % 2 == 0 else -(value + 1) // 2
            ids.append(before)
            value = shift = 0
    return ids


def segment_key(data: bytes) -> bytes:
    """What makes two segments of a note one (``text_segments.key``)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def split_segments(data: bytes) -> list[bytes]:
    """``data`` cut into segments whose cuts depend on the bytes near them only: a cut follows a
    line whose CRC-32, taken with the line before it, falls under a bar set by its length (once
    the segment holds ``MIN_SEGMENT`` bytes). An edit moves the cuts of a segment or two; before
    it they are where they were, and after it they fall where they fell once the lines are the
    same again. Joined, the segments are ``data``."""
    bar = (1 << 32) // CUT_SPAN
    out = []
    start = end = size = before = 0
    for piece in _pieces(data):
        end += len(piece)
        size += len(piece)
        mark = zlib.crc32(piece, before)  # this piece's CRC with the one before it
        before = zlib.crc32(piece)
        if size >= MAX_SEGMENT or (size >= MIN_SEGMENT and mark < len(piece) * bar):
            out.append(data[start:end])
            start, size = end, 0
    if start < len(data):
        out.append(data[start:])
    return out


def _pieces(data: bytes) -> Iterator[bytes]:
    """``data``'s lines with their ends; a line over ``MAX_SEGMENT`` by words (with the space
    after each), a word over it in pieces of that size."""
    for line in data.splitlines(keepends=True):
        if len(line) <= MAX_SEGMENT:
            yield line
            continue
        words = line.split(b" ")
        for i, word in enumerate(words):
            if i < len(words) - 1:
                word += b" "
            for start in range(0, len(word), MAX_SEGMENT):
                yield word[start : start + MAX_SEGMENT]


# ----- past texts in the database (``text_segments``, ``text_packs``; IndexStore and m020) ----

_PART = 500  # ids in one IN (...)

Segment = tuple[int, int, int, int]  # id, pack id, where it starts in its pack's bytes, its size


def past_text(conn: sqlite3.Connection, note_id: int, data: bytes, schema: str = "main") -> bytes:
    """What ``note_versions.content`` keeps of a past version's bytes ``data``: one zlib stream
    under ``SEGMENTS_FROM`` bytes, else the list of its segments. The segments the note lacks
    are stored here, together as one pack (compressed as one: a text's first version takes
    what it took whole). One the note has is taken only when its bytes are these (else the
    text is kept whole, never pointed at other bytes)."""
    if len(data) < SEGMENTS_FROM:
        return compress(data)
    parts = split_segments(data)
    if b"".join(parts) != data:  # never: split_segments only cuts
        raise AssertionError("split_segments lost bytes")
    keys = [segment_key(part) for part in parts]
    known = _segments(conn, note_id, "key", sorted(set(keys)), schema)
    packs = _packs(conn, note_id, {segment[1] for segment in known.values()}, schema)
    for key, part in zip(keys, parts):
        if key in known and _cut(packs, known[key]) != part:
            log.error("note %s: a stored segment is not the bytes its key names; its text is kept whole", note_id)
            return compress(data)
    fresh = {key: part for key, part in zip(keys, parts) if key not in known}
    if fresh:
        cursor = conn.execute(
            f"INSERT INTO {schema}.text_packs (note_id, data) VALUES (?, ?)",
            (note_id, compress(b"".join(fresh.values()))),
        )
        pack_id = int(cursor.lastrowid or 0)
        start = 0
        for key, part in fresh.items():
            cursor = conn.execute(
                f"INSERT INTO {schema}.text_segments (note_id, key, pack_id, start, size) VALUES (?, ?, ?, ?, ?)",
                (note_id, key, pack_id, start, len(part)),
            )
            known[key] = (int(cursor.lastrowid or 0), pack_id, start, len(part))
            start += len(part)
    return segment_list([known[key][0] for key in keys])


class SegmentCache:
    """The segments, and their packs inflated, of the last text ``segmented_text`` read for a
    note: reading its versions one after another (``brain history``), each reads and inflates
    only what the one before did not list (a log's next version shares all but its last few
    segments). It holds one version's, whatever the walk's length. A prune between two reads
    may have packed a pack again (its segments moved): what is read through the cache is
    checked against its hash as ever, and read again without it when it differs."""

    def __init__(self) -> None:
        self.note_id: int | None = None
        self.segments: dict[int, Segment] = {}
        self.packs: dict[int, bytes] = {}

    def clear(self) -> None:
        self.note_id, self.segments, self.packs = None, {}, {}


def segmented_text(
    conn: sqlite3.Connection, note_id: int, blob: bytes, schema: str = "main", cache: SegmentCache | None = None
) -> bytes | None:
    """The bytes a ``segment_list`` names, joined; None when one of them is missing, another
    note's, or unreadable (the caller checks the whole against the version's hash)."""
    ids = segment_ids(blob)
    if cache is not None and cache.note_id != note_id:
        cache.clear()
        cache.note_id = note_id
    kept = cache.segments if cache is not None else {}
    wanted = set(ids)
    stored = {segment_id: kept[segment_id] for segment_id in wanted if segment_id in kept}
    fresh = _segments(conn, note_id, "id", sorted(wanted - stored.keys()), schema)
    stored.update(fresh)
    if any(segment_id not in stored for segment_id in ids):
        return None
    held = cache.packs if cache is not None else {}
    needed = {segment[1] for segment in stored.values()}
    packs = {pack_id: held[pack_id] for pack_id in needed if pack_id in held}
    packs.update(_packs(conn, note_id, needed - packs.keys(), schema))
    parts = [_cut(packs, stored[segment_id]) for segment_id in ids]
    if any(part is None for part in parts):
        return None
    if cache is not None:
        cache.segments, cache.packs = stored, packs
    return b"".join(part for part in parts if part is not None)


def drop_unheld_segments(conn: sqlite3.Connection, note_ids: Iterable[int]) -> int:
    """Delete the segments of these notes that no version of theirs lists, and what their packs
    held of them: a pack left with none goes, one left with some is packed again without the
    rest. How many segments went."""
    dropped = 0
    for note_id in sorted(set(note_ids)):
        held: set[int] = set()
        for (blob,) in conn.execute(
            "SELECT content FROM note_versions WHERE note_id = ? AND substr(content, 1, 1) = ?", (note_id, SEGMENTED)
        ):
            held.update(segment_ids(bytes(blob)))
        rows = [
            (r[0], r[1], r[2], r[3])
            for r in conn.execute("SELECT id, pack_id, start, size FROM text_segments WHERE note_id = ?", (note_id,))
        ]
        unheld = [row for row in rows if row[0] not in held]
        for i in range(0, len(unheld), _PART):
            some = [row[0] for row in unheld[i : i + _PART]]
            dropped += conn.execute(f"DELETE FROM text_segments WHERE id IN ({_marks(some)})", some).rowcount
        touched = {row[1] for row in unheld}
        for pack_id in sorted(touched):
            left = sorted((row for row in rows if row[1] == pack_id and row[0] in held), key=lambda row: row[2])
            if not left:
                conn.execute("DELETE FROM text_packs WHERE id = ?", (pack_id,))
            else:
                _repack(conn, note_id, pack_id, left)
    return dropped


def _repack(conn: sqlite3.Connection, note_id: int, pack_id: int, left: list[Segment]) -> None:
    """The pack holds only the segments ``left`` (by where they start), when each reads back as
    its key; else it stays as it is (what can still be read of it is not touched)."""
    packs = _packs(conn, note_id, {pack_id})
    parts = [_cut(packs, segment) for segment in left]
    keys = {segment_id: bytes(key) for segment_id, key in _rows(conn, "SELECT id, key FROM text_segments", left)}
    if any(part is None or segment_key(part) != bytes(keys[segment[0]]) for part, segment in zip(parts, left)):
        log.error("note %s: a pack of its past texts does not read back; left as it is", note_id)
        return
    start = 0
    for part, segment in zip(parts, left):
        conn.execute("UPDATE text_segments SET start = ? WHERE id = ?", (start, segment[0]))
        start += len(part or b"")
    conn.execute("UPDATE text_packs SET data = ? WHERE id = ?", (compress(b"".join(p or b"" for p in parts)), pack_id))


def _segments(
    conn: sqlite3.Connection, note_id: int, column: str, values: Sequence[object], schema: str = "main"
) -> dict[Any, Segment]:
    """The note's segments whose ``column`` (id or key) is one of ``values``, by it."""
    out: dict[Any, Segment] = {}
    for i in range(0, len(values), _PART):
        some = values[i : i + _PART]
        rows = conn.execute(
            f"SELECT {column}, id, pack_id, start, size FROM {schema}.text_segments WHERE note_id = ?"
            f" AND {column} IN ({_marks(some)})",
            (note_id, *some),
        )
        out.update((bytes(r[0]) if column == "key" else r[0], (r[1], r[2], r[3], r[4])) for r in rows)
    return out


def _packs(conn: sqlite3.Connection, note_id: int, pack_ids: Iterable[int], schema: str = "main") -> dict[int, bytes]:
    """The note's packs among ``pack_ids``, their bytes inflated (one that does not inflate left out)."""
    wanted = sorted(pack_ids)
    out: dict[int, bytes] = {}
    for i in range(0, len(wanted), _PART):
        some = wanted[i : i + _PART]
        rows = conn.execute(
            f"SELECT id, data FROM {schema}.text_packs WHERE note_id = ? AND id IN ({_marks(some)})", (note_id, *some)
        )
        for pack_id, data in rows:
            try:
                out[pack_id] = zlib.decompress(bytes(data))
            except zlib.error:
                continue
    return out


def _cut(packs: dict[int, bytes], segment: Segment) -> bytes | None:
    """A segment's bytes out of its pack's; None when the pack is missing or too short."""
    data = packs.get(segment[1])
    if data is None or segment[2] + segment[3] > len(data):
        return None
    return data[segment[2] : segment[2] + segment[3]]


def _rows(conn: sqlite3.Connection, select: str, segments: Sequence[Segment]) -> list[tuple[Any, ...]]:
    """``select`` (of text_segments) for these segments' ids, a few hundred at a time."""
    out: list[tuple[Any, ...]] = []
    for i in range(0, len(segments), _PART):
        some = [segment[0] for segment in segments[i : i + _PART]]
        out += conn.execute(f"{select} WHERE id IN ({_marks(some)})", some).fetchall()
    return out


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))
