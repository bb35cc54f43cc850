"""Chunk searches that read past the chunks of notes whose file is gone (``Recaller.gone``).

A lane that asks for a fixed number of chunks (BM25's 5 × depth, the anchor lanes' 2 × depth)
and folds them into notes found nothing past one gone note whose chunks filled the search: a
note of 200 matching sections took every place, and asking "one note deeper" searched 5 chunks
more, still its. ``live_hits`` searches on until it has the chunks wanted of the other notes:
each step as much deeper as every chunk of the gone notes it met (what they can still take)
where they took most of the hits, else twice as deep at most (a gone note of thousands of
sections with a few among them), and at least as much again as they took. One search, and no
read, while nothing is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..index.store import IndexStore

Hits = list[tuple[int, float]]  # (chunk id, score), best first


@dataclass
class LiveHits:
    """The first ``wanted`` hits of the live notes, best first, and the gone notes that had a
    chunk above the last of them (what the search found of them, left out), each with how many
    of ``hits`` rank above its first chunk."""

    hits: Hits
    gone: dict[int, int] = field(default_factory=dict)

    def gone_above(self, chunk_ids: Collection[int]) -> set[int]:
        """The gone notes whose first chunk ranks above the last of ``chunk_ids`` in ``hits``
        (a lane that folded the hits into notes: the gone notes it would have taken)."""
        position = {chunk_id: i for i, (chunk_id, _) in enumerate(self.hits)}
        last = max((position[c] for c in chunk_ids if c in position), default=len(self.hits))
        return {note_id for note_id, above in self.gone.items() if above <= last}


def live_hits(
    store: IndexStore, search: Callable[[int], Sequence[tuple[int, float]]], wanted: int, gone: Collection[int]
) -> LiveHits:
    """``search(reach)``'s hits (chunk id, score), best first, without the chunks of the notes in
    ``gone``: the first ``wanted`` of the rest, searched deeper while the gone notes' chunks
    leave fewer and the search had more (it gave all ``reach`` asked). ``search(wanted)`` as it
    is while ``gone`` is empty."""
    hits = list(search(wanted))
    if not gone:
        return LiveHits(hits)
    reach = wanted
    note_of: dict[int, int] = {}
    while True:
        note_of.update(store.chunk_note_ids([c for c, _ in hits if c not in note_of]))
        live = [(c, s) for c, s in hits if note_of.get(c) not in gone]
        if len(live) >= wanted or len(hits) < reach:
            break
        met = {note_of[c] for c, _ in hits if note_of.get(c) in gone}
        taken = len(hits) - len(live)
        # Past every chunk of the gone notes met, the live chunks wanted are found (unless other
        # gone notes are met below): asked for at once when the gone notes took most of the hits
        # (one more search for a gone note of hundreds of sections filling them), else twice as
        # deep at most: a few chunks of a gone note of thousands among the hits searched a note
        # of 5,000 sections deep for the 3 chunks it took. Never less than they took again.
        past_them = wanted + sum(store.note_chunk_counts(sorted(met)).values())
        reach = max(reach + taken, past_them if 2 * taken > len(hits) else min(past_them, 2 * reach))
        hits = list(search(reach))
    live = live[:wanted]
    left_out: dict[int, int] = {}
    above = 0  # live hits above this one
    for chunk_id, _ in hits:
        if above >= wanted:
            break
        note_id = note_of.get(chunk_id)
        if note_id is not None and note_id in gone:
            left_out.setdefault(note_id, above)
        else:
            above += 1
    return LiveHits(live, left_out)
