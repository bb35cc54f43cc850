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
    many queries of one state. The store holds this for as long as the database is unchanged
    (``_unchanged_cache``), so no entry outlives the state it was read from; it holds only what
    was asked, so it costs no read up front.

    What it earns is a question asked again soon after (a user asking it again, an agent
    searching again, ``bench/ask_profile.py``'s repeats): it reads nothing, 0.65 of the CPU time
    of the ask with this off at 20,000 notes (bench/scale.py's vault), 0.67 on the 13th-age SRD
    (the chunk rows shown and the notes' chunk vectors as stored walk each chunk's row, text and
    all). A fresh question gains little (0.95 at 20,000 notes), nor do the lanes of one question
    sharing their reads (a one-shot ``brain ask``: 1.00); on a vault small enough that its
    questions soon cover it (the SRD: 1,003 notes, 2,600 chunks) most fresh reads are held
    too. So each map holds about the last few questions' reads and starts again empty past its
    limit, holding the call that passed it: ``ROWS_LIMIT`` chunk rows (1.5-1.9 KB each on the
    two real vaults), ``CODES_LIMIT`` chunks' vectors (~600 bytes each), ``NOTES_LIMIT``
    notes' paths, titles and chunk counts, ``LIMIT`` chunks' notes and notes' out-degrees (a
    question at 20,000 notes reads ~400 rows, ~1,100 vectors and ~540 chunks' notes): ~7 MB
    at most, whatever the vault's size (tests/test_query_reads.py). The caps before (8,000
    rows, 25,000 vectors, 20,000 and 200,000 entries: ~57 MB) added a fifth to the peak RSS of
    a process that asked fresh questions at 20,000 notes (100 questions: 189 → 227 MB; these
    caps: 195) and saved the same CPU on a question asked again at once, more only on one asked
    again after a hundred others (0.85-0.89, these caps 0.98; ``bench/query_reads_cost.py``).
    """

    LIMIT = 4_000
    CODES_LIMIT = 5_000
    ROWS_LIMIT = 2_000
    NOTES_LIMIT = 2_000

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
