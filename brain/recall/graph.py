"""The wikilink graph's first hop: neighbours of the top hits, and how each was reached (``via``).

The one-hop expansion (modes ``graph``/``gated``) adds the neighbours of the top ``seeds``
notes, following outgoing links and backlinks, at most ``max_new`` notes not already in the
pool, each scored by its best chunk for the query. PageRank (``ppr.py``) reuses
``first_via`` to say which hit reached a note only it proposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .dense import best_chunks, candidates_for, long_note_cost
from .ties import top_notes
from .types import DEFAULT_MAX_NEW, DEFAULT_SEEDS, LONG_NOTE_CHUNKS, Candidate, Via

if TYPE_CHECKING:
    import numpy as np

    from ..index.store import IndexStore


def first_via(store: IndexStore, seeds: Sequence[tuple[int, str, str]], skip: set[int]) -> dict[int, Via]:
    """For every neighbour of ``seeds`` not in ``skip``: the best-ranked seed that reaches it.

    ``seeds`` are (note id, path, title) in rank order, best first; outgoing links of a seed
    come before its backlinks.
    """
    rank = {note_id: i for i, (note_id, _, _) in enumerate(seeds)}
    named = {note_id: (path, title) for note_id, path, title in seeds}
    found: dict[int, Via] = {}
    edges = sorted(store.neighbour_edges(list(rank)), key=lambda edge: rank[edge[0]])  # stable: keeps link order
    for seed_id, other_id, direction, kind in edges:
        if other_id in skip or other_id in found:
            continue
        path, title = named[seed_id]
        found[other_id] = Via(path, title, direction, kind)
    return found


def expand(
    store: IndexStore,
    pool: Sequence[Candidate],
    query_vector: np.ndarray,
    *,
    seeds: int = DEFAULT_SEEDS,
    max_new: int = DEFAULT_MAX_NEW,
    long_note_discount: float = 0.0,
    long_note_chunks: int = LONG_NOTE_CHUNKS,
) -> list[Candidate]:
    """New candidates one hop from the top ``seeds`` of ``pool``, best first, each with ``via``:
    scored by their best chunk for the query less the long-note discount, as the dense lane
    scores them (``dense.long_note_cost``; ``dense_score`` stays the chunk's cosine), since the
    two are ranked together."""
    reached = first_via(store, [(c.note_id, c.path, c.title) for c in pool[:seeds]], {c.note_id for c in pool})
    if not reached:
        return []
    # Score every neighbour by its best chunk for this query, from the stored vectors.
    best = best_chunks(store, list(reached), query_vector)
    score = {n: s for n, (_, s) in best.items()}
    if long_note_discount > 0:
        sizes = store.note_chunk_counts(list(best))
        for n in score:
            score[n] -= long_note_cost(sizes.get(n, 1), long_note_discount, long_note_chunks)
    ranked = top_notes(store, score, lambda n: -score[n], max_new)
    found = candidates_for(store, [(n, *best[n]) for n in ranked], "graph")
    for candidate in found:
        candidate.via = reached[candidate.note_id]
        candidate.score = score[candidate.note_id]
    return found
