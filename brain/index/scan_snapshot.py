"""The scan snapshot's bytes: every note's path, id, size and mtime in one blob (schema m008,
m011), and the notes as they are from it and the log of those changed since.

``IndexStore.note_stats`` reads the blob and the log in one read transaction (``Snapshot``);
``notes`` makes of them the path → (note id, size, mtime_ns) the walk compares the vault
with. Here, not in ``store.py``, because the walk's helper process decodes the same bytes
(``walk_helper.py``): standard library only, so neither a no-op `brain index` nor the helper
imports numpy or SQLite for it.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import NamedTuple

Stats = dict[str, tuple[int, int, int]]  # path → (note id, size, mtime_ns)

_MAGIC = b"BRAINSS1"


class Snapshot(NamedTuple):
    """What the index said of its notes at one moment, as read: plain values, so it goes to
    the helper process as it is."""

    data: bytes  # the blob (``encode``)
    logged: list[tuple[int, str | None]]  # scan_snapshot_log: (note id, the path the blob has, or None)
    current: list[tuple[str, int, int, int]]  # the logged notes' rows now: (path, id, size, mtime_ns)


def notes(snapshot: Snapshot) -> Stats | None:
    """The notes as they are: the blob's, less the logged ones as they were, plus their rows
    now; None when the blob is not one this version wrote."""
    stats = decode(snapshot.data)
    if stats is None:
        return None
    for note_id, path in snapshot.logged:
        # The first change to a row after the snapshot logs the path the snapshot has.
        if path is not None and path in stats and stats[path][0] == note_id:
            del stats[path]
    for path, note_id, size, mtime_ns in snapshot.current:
        stats[path] = (note_id, size, mtime_ns)
    return stats


def encode(stats: Stats) -> bytes:
    """The blob: magic, count, then ids, sizes and mtimes (int64 little-endian), then the
    paths joined by NUL (which no path holds)."""
    columns = [array("q", (v[i] for v in stats.values())) for i in range(3)]
    if sys.byteorder == "big":
        for column in columns:
            column.byteswap()
    paths = "\0".join(stats).encode("utf-8")
    return _MAGIC + struct.pack("<q", len(stats)) + b"".join(c.tobytes() for c in columns) + paths


def decode(data: bytes) -> Stats | None:
    """The notes in ``data``, or None when it is not a blob this version wrote (or is damaged)."""
    head = len(_MAGIC) + 8
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    (count,) = struct.unpack_from("<q", data, len(_MAGIC))
    end = head + 24 * count
    if count < 0 or len(data) < end:
        return None
    columns = []
    for i in range(3):
        column = array("q")
        column.frombytes(data[head + 8 * count * i : head + 8 * count * (i + 1)])
        if sys.byteorder == "big":
            column.byteswap()
        columns.append(column.tolist())
    try:
        paths = data[end:].decode("utf-8").split("\0") if count else []
    except UnicodeDecodeError:  # damaged bytes: read from the rows and stored again
        return None
    if len(paths) != count:
        return None
    return dict(zip(paths, zip(*columns)))
