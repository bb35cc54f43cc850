"""The scan snapshot's bytes: every note's path, id, size and mtime in one blob (schema m008,
m011), and the notes as they are from it and the log of those changed since.

``IndexStore.note_stats_and_snapshot`` reads the blob and the log in one read transaction
(``Snapshot``); ``notes`` makes of them the path → (note id, size, mtime_ns) the walk compares
the vault with. Here, not in ``store.py``, because the walk's helper process decodes the same
bytes (``walk_helper.py``): standard library only, so neither a no-op `brain index` nor the
helper imports numpy or SQLite for it.

The blob is grouped by folder, and a folder's notes are decoded only when something asks for
one of them (``FolderStats``): the walk and its helper process each decode the folders they
walk, not all 100,000 notes twice before walking (0.05-0.09 s each, most of it making the
tuples and the dict).
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import ItemsView, Iterator, Mapping
from itertools import pairwise
from typing import NamedTuple

Row = tuple[int, int, int]  # (note id, size, mtime_ns)
Stats = dict[str, Row]  # path → row

# BRAINSS1, until stop 37, listed every note in one run, not by folder: such a blob reads as
# none, so the rows are read and the next writer stores this format in its place.
_MAGIC = b"BRAINSS2"
_HEAD = struct.Struct("<8sqqq")  # magic, notes, folders, bytes of the folders' names


class Snapshot(NamedTuple):
    """What the index said of its notes at one moment, as read: plain values, so it goes to
    the helper process as it is."""

    data: bytes  # the blob (``encode``)
    logged: list[tuple[int, str | None]]  # scan_snapshot_log: (note id, the path the blob has, or None)
    current: list[tuple[str, int, int, int]]  # the logged notes' rows now: (path, id, size, mtime_ns)


def folder_of(path: str) -> str:
    """The folder a note's path is in, as the walk names it: "" or "a/b/"."""
    return path[: path.rfind("/") + 1]


def encode(stats: Mapping[str, Row]) -> bytes:
    """The blob: the head (magic, notes, folders, bytes of their names); each folder's first
    note and the offset of its paths (int64 little-endian, one more than there are folders);
    the ids, sizes and mtimes, folder by folder; the folders' names joined by NUL (which no
    path holds); each folder's paths joined by NUL, one folder after another."""
    groups: dict[str, list[str]] = {}
    for path in stats:
        groups.setdefault(folder_of(path), []).append(path)
    firsts, offsets = array("q", [0]), array("q", [0])
    segments: list[bytes] = []
    for paths in groups.values():
        segments.append("\0".join(paths).encode("utf-8"))
        firsts.append(firsts[-1] + len(paths))
        offsets.append(offsets[-1] + len(segments[-1]))
    order = [path for paths in groups.values() for path in paths]
    columns = [array("q", (stats[path][i] for path in order)) for i in range(3)]
    names = "\0".join(groups).encode("utf-8")
    arrays = [firsts, offsets, *columns]
    if sys.byteorder == "big":
        for column in arrays:
            column.byteswap()
    head = _HEAD.pack(_MAGIC, len(order), len(groups), len(names))
    return head + b"".join(a.tobytes() for a in arrays) + names + b"".join(segments)


class _Blob:
    """A blob's layout, checked; its folders decoded one at a time."""

    def __init__(self, data: bytes, count: int, firsts: list[int], offsets: list[int], folders: dict[str, int]):
        self.data = data
        self.count = count
        self.firsts = firsts
        self.offsets = offsets
        self.folders = folders  # folder → its place
        self.columns_at = _HEAD.size + 16 * (len(folders) + 1)
        self.paths_at = len(data) - offsets[-1]

    @classmethod
    def read(cls, data: bytes) -> _Blob | None:
        """The blob's layout, or None when it is not a blob this version wrote (or is damaged)."""
        if len(data) < _HEAD.size:
            return None
        magic, count, folders, names_size = _HEAD.unpack_from(data)
        if magic != _MAGIC or min(count, folders, names_size) < 0:
            return None
        names_at = _HEAD.size + 16 * (folders + 1) + 24 * count
        if len(data) < names_at + names_size:
            return None
        arrays = []
        for i in range(2):
            column = array("q")
            column.frombytes(data[_HEAD.size + 8 * (folders + 1) * i : _HEAD.size + 8 * (folders + 1) * (i + 1)])
            if sys.byteorder == "big":
                column.byteswap()
            arrays.append(column.tolist())
        firsts, offsets = arrays
        paths_size = len(data) - names_at - names_size
        if firsts[0] != 0 or firsts[-1] != count or offsets[0] != 0 or offsets[-1] != paths_size:
            return None
        if any(b <= a for a, b in pairwise(firsts)) or any(b < a for a, b in pairwise(offsets)):
            return None
        try:
            names = data[names_at : names_at + names_size].decode("utf-8").split("\0") if folders else []
        except UnicodeDecodeError:
            return None
        if len(names) != folders:
            return None
        places = {name: i for i, name in enumerate(names)}
        if len(places) != folders:
            return None
        return cls(data, count, firsts, offsets, places)

    def size(self, folder: str) -> int:
        place = self.folders.get(folder)
        return 0 if place is None else self.firsts[place + 1] - self.firsts[place]

    def folder(self, folder: str) -> Stats | None:
        """The notes of one folder ({} when the blob has none there), or None when its bytes
        are damaged."""
        place = self.folders.get(folder)
        if place is None:
            return {}
        first, end = self.firsts[place], self.firsts[place + 1]
        columns = []
        for i in range(3):
            column = array("q")
            at = self.columns_at + 8 * (self.count * i + first)
            column.frombytes(self.data[at : at + 8 * (end - first)])
            if sys.byteorder == "big":
                column.byteswap()
            columns.append(column.tolist())
        at = self.paths_at
        try:
            paths = self.data[at + self.offsets[place] : at + self.offsets[place + 1]].decode("utf-8").split("\0")
        except UnicodeDecodeError:
            return None
        if len(paths) != end - first or folder_of(paths[0]) != folder or folder_of(paths[-1]) != folder:
            return None
        return dict(zip(paths, zip(*columns)))


class FolderStats(Mapping[str, Row]):
    """path → (note id, size, mtime_ns) of every note, from a blob and its log, each folder
    decoded (and corrected by the log) the first time one of its notes is asked for.

    ``damaged``: some folder's bytes turned out not to be what was written; its notes then
    read as unknown (so each is taken for changed, never for unchanged), and the caller reads
    the rows instead (``changes.plan``, ``IndexStore.note_stats``)."""

    def __init__(self, blob: _Blob, logged: list[tuple[int, str | None]], current: list[tuple[str, int, int, int]]):
        self._blob = blob
        self._decoded: dict[str, Stats] = {}
        self._dropped: dict[str, dict[str, set[int]]] = {}  # folder → path → ids the log says moved on
        for note_id, path in logged:
            if path is not None:  # the first change to a row after the snapshot logs the path the blob has
                self._dropped.setdefault(folder_of(path), {}).setdefault(path, set()).add(note_id)
        self._added: dict[str, Stats] = {}  # folder → the logged notes' rows now
        for path, note_id, size, mtime_ns in current:
            self._added.setdefault(folder_of(path), {})[path] = (note_id, size, mtime_ns)
        self.damaged = False
        count = blob.count
        for folder in self._dropped.keys() | self._added.keys():  # a few: the log is short
            count += len(self.folder(folder)) - blob.size(folder)
        self._count = count

    def folder(self, folder: str) -> Stats:
        """The notes of one folder ("" or "a/b/"), as they are."""
        stats = self._decoded.get(folder)
        if stats is not None:
            return stats
        stats = self._blob.folder(folder)
        if stats is None:
            self.damaged = True
            stats = {}
        for path, ids in self._dropped.get(folder, {}).items():
            row = stats.get(path)
            if row is not None and row[0] in ids:
                del stats[path]
        stats.update(self._added.get(folder, {}))
        self._decoded[folder] = stats
        return stats

    def get(self, path: str, default: Row | None = None) -> Row | None:  # type: ignore[override]
        return self.folder(folder_of(path)).get(path, default)

    def __getitem__(self, path: str) -> Row:
        return self.folder(folder_of(path))[path]

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        for folder in self._folders():
            yield from self.folder(folder)

    def as_dict(self) -> Stats:
        """Every note: each folder decoded."""
        stats: Stats = {}
        for folder in self._folders():
            stats.update(self.folder(folder))
        return stats

    def items(self) -> ItemsView[str, Row]:
        """Every note, from its folder's dict (``Mapping``'s would look each path up again)."""
        return self.as_dict().items()

    def _folders(self) -> list[str]:
        return list(self._blob.folders) + [f for f in self._added if f not in self._blob.folders]


def notes(snapshot: Snapshot) -> FolderStats | None:
    """The notes as they are: the blob's, less the logged ones as they were, plus their rows
    now; None when the blob is not one this version wrote."""
    blob = _Blob.read(snapshot.data)
    return None if blob is None else FolderStats(blob, snapshot.logged, snapshot.current)


def decode(data: bytes) -> Stats | None:
    """Every note in ``data``, or None when it is not a blob this version wrote (or is damaged)."""
    stats = notes(Snapshot(data, [], []))
    if stats is None:
        return None
    every = stats.as_dict()
    return None if stats.damaged else every
