"""Graph stage: one hop along wikilinks from the top dense hits.

Neighbours of the top ``seeds`` notes, following outgoing links and backlinks, at most
``max_new`` notes not already in the pool; each is scored by its best chunk for this query
and records how it got there (``via``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store import IndexStore
from .dense import best_chunks, candidates_for
from .types import Candidate, Via

if TYPE_CHECKING:
    import numpy as np

DEFAULT_SEEDS = 15
DEFAULT_MAX_NEW = 40


def neighbours(store: IndexStore, note_ids: list[int]) -> list[tuple[int, int, str, str]]:
    """(seed id, neighbour id, direction, kind) for every resolved link touching a seed."""
    if not note_ids:
        return []
    marks = ",".join("?" * len(note_ids))
    out = store.conn.execute(
        f"SELECT source_id, target_id, 'links to', kind FROM links WHERE source_id IN ({marks})"
        " AND target_id IS NOT NULL AND target_id != source_id ORDER BY id",
        note_ids,
    ).fetchall()
    back = store.conn.execute(
        f"SELECT target_id, source_id, 'linked from', kind FROM links WHERE target_id IN ({marks})"
        " AND source_id != target_id ORDER BY id",
        note_ids,
    ).fetchall()
    return [tuple(r) for r in out] + [tuple(r) for r in back]


def expand(
    store: IndexStore,
    pool: list[Candidate],
    query_vector: np.ndarray,
    *,
    seeds: int = DEFAULT_SEEDS,
    max_new: int = DEFAULT_MAX_NEW,
) -> list[Candidate]:
    """New candidates one hop from the top ``seeds`` of ``pool``, best first, each with ``via``."""
    in_pool = {c.note_id for c in pool}
    seed_list = pool[:seeds]
    seed_by_id = {c.note_id: c for c in seed_list}
    first_via: dict[int, Via] = {}
    # Seeds in rank order, so `via` names the best hit that reaches a neighbour.
    rank = {c.note_id: i for i, c in enumerate(seed_list)}
    for seed_id, other_id, direction, kind in sorted(neighbours(store, list(seed_by_id)), key=lambda e: rank[e[0]]):
        if other_id in in_pool or other_id in first_via:
            continue
        seed = seed_by_id[seed_id]
        first_via[other_id] = Via(seed.path, seed.title, direction, kind)
    if not first_via:
        return []
    # Score every neighbour by its best chunk for this query, from the stored vectors.
    best = best_chunks(store, list(first_via), query_vector)
    ranked = sorted(best.items(), key=lambda item: -item[1][1])[:max_new]
    found = candidates_for(store, [(n, c, s) for n, (c, s) in ranked], "graph")
    for candidate in found:
        candidate.via = first_via[candidate.note_id]
    return found
