"""What the queries of one state of the index read of the same chunks, read once
(``IndexStore.one_query``).

Each lane shows its notes by a chunk (``chunk_rows``) and scores notes by their best chunk for
the query (``note_chunk_codes``), and the lanes' notes overlap: on the 13th-age SRD a query
asked for 500 chunk rows of 270 chunks and the vectors of 180 notes, 130 of them distinct; and
a warm process's queries ask for many of the same again. No SQL here, the store's readers fill it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, Generic, TypeVar

Row = TypeVar("Row")
Value = TypeVar("Value")
VectorRow = tuple[int, int, bytes]  # (chunk id, note id, vector as stored)


class StateReads(Generic[Row]):
    """Chunk rows, each chunk's note, and each note's chunk vectors (as stored), path and
    title, number of chunks and out-degree, as first read in this state of the index.

    A warm process (``brain serve``'s snapshot, ``brain mcp``, an in-process Recaller) asks
    hundreds of queries of one state, and each asks again which notes ~500 chunks are of and
    how many notes its anchors link to: 3-7% and 4-5% of a warm ask on the 13th-age SRD.
    The store holds this for as long as the database is unchanged (``_unchanged_cache``), so
    no entry outlives the state it was read from; it holds only what was asked, so it costs no
    read up front. A map of every chunk would be 53 MB at 500,000 chunks (100,000 notes):
    one that reaches ``LIMIT`` entries starts again empty (~21 MB at most).

    The notes' chunk vectors as stored, which every lane scores its notes by, were the largest
    spot of a warm ask (16% of its CPU on the 13th-age SRD and vaultofknowledge): each read of
    a chunk's 386-byte vector walks its row, text and all. The chunk rows shown (text and all),
    each note's path and title and its number of chunks were read again by every query too
    (with the vectors, 16 of the 26 statements a warm ask ran of its own, FTS5's aside). Each
    map starts again past its limit, holding the call that passed it: ``CODES_LIMIT`` chunks'
    vectors (~600 bytes a chunk: ~15 MB; a 100,000-note vault has ~500,000 chunks),
    ``ROWS_LIMIT`` rows (1.5-1.9 KB a chunk on the two real vaults: ~15 MB), ``NOTES_LIMIT``
    notes' paths and chunk counts (~6 MB): with the maps above, ~57 MB at most, whatever the
    vault's size. After every query of the benchmark sets they hold 7 MB on the SRD (1,003
    notes) and 13 MB on vaultofknowledge (2,721).
    """

    LIMIT = 200_000
    CODES_LIMIT = 25_000
    ROWS_LIMIT = 8_000
    NOTES_LIMIT = 20_000

    def __init__(self) -> None:
        self._note_of: dict[int, int | None] = {}  # None: no such chunk
        self._degree: dict[int, int] = {}  # 0: no link to another note
        self._codes: dict[int, list[VectorRow]] = {}  # note id → its chunks' rows, as read
        self._codes_held = 0  # rows in ``_codes``
        self._rows: dict[int, Row | None] = {}  # None: no such chunk
        self._brief: dict[int, tuple[str, str] | None] = {}  # note id → (path, title); None: no such note
        self._chunk_count: dict[int, int] = {}  # 0: no chunk

    def chunk_rows(self, chunk_ids: Sequence[int], read: Callable[[list[int]], dict[int, Row]]) -> dict[int, Row]:
        """``read``'s answer for ``chunk_ids``, reading only the chunks not read before."""
        return _answer(self._rows, chunk_ids, read, None, self.ROWS_LIMIT)

    def chunk_note_ids(self, chunk_ids: Sequence[int], read: Callable[[list[int]], dict[int, int]]) -> dict[int, int]:
        """``read``'s answer for ``chunk_ids``, reading only the chunks not read before."""
        return _answer(self._note_of, chunk_ids, read, None, self.LIMIT)

    def out_degrees(self, note_ids: Sequence[int], read: Callable[[list[int]], dict[int, int]]) -> dict[int, int]:
        """``read``'s answer for ``note_ids`` (the notes with a degree above 0), reading only
        the notes not read before."""
        return _answer(self._degree, note_ids, read, 0, self.LIMIT)

    def notes_brief(
        self, note_ids: Sequence[int], read: Callable[[list[int]], dict[int, tuple[str, str]]]
    ) -> dict[int, tuple[str, str]]:
        """``read``'s answer for ``note_ids``, reading only the notes not read before."""
        return _answer(self._brief, note_ids, read, None, self.NOTES_LIMIT)

    def note_chunk_counts(self, note_ids: Sequence[int], read: Callable[[list[int]], dict[int, int]]) -> dict[int, int]:
        """``read``'s answer for ``note_ids`` (the notes with a chunk), reading only the notes not
        read before."""
        return _answer(self._chunk_count, note_ids, read, 0, self.NOTES_LIMIT)

    def note_chunk_codes(
        self, note_ids: Sequence[int], read: Callable[[list[int]], list[VectorRow]]
    ) -> list[VectorRow]:
        """``read``'s rows for ``note_ids``, note by note, each note's rows in the order read;
        only the notes not read before are read."""
        held = self._codes
        wanted = list(dict.fromkeys(note_ids))
        missing = [n for n in wanted if n not in held]
        if missing:
            rows = read(missing)
            if self._codes_held + len(rows) > self.CODES_LIMIT:
                kept = {n: held[n] for n in wanted if n in held}
                held.clear()
                held.update(kept)
                self._codes_held = sum(map(len, kept.values()))
            for note_id in missing:
                held[note_id] = []
            for row in rows:
                held[row[1]].append(row)
            self._codes_held += len(rows)
        return list(chain.from_iterable(map(held.__getitem__, wanted)))


def _answer(
    held: dict[int, Any], keys: Sequence[int], read: Callable[[list[int]], dict[int, Value]], absent: Any, limit: int
) -> dict[int, Value]:
    """``read``'s answer for ``keys``, but for those it lacks (held as ``absent``), in their
    first-seen order, reading only the keys ``held`` does not hold; past ``limit`` entries
    ``held`` starts again empty, holding this call's keys."""
    missing = [k for k in dict.fromkeys(keys) if k not in held]
    if len(held) + len(missing) > limit:
        held.clear()
        missing = list(dict.fromkeys(keys))
    if missing:
        found = read(missing)
        for key in missing:
            held[key] = found.get(key, absent)
    return {key: value for key in keys if (value := held[key]) != absent}
