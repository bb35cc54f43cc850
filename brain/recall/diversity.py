"""Near-duplicate notes spread out of the fused top (maximal marginal relevance, Carbonell &
Goldstein 1998), a switchable stage after fusion.

A query that names a kind in passing ("fire", "magic items", "minion") draws a family of notes
that all say the same thing to it (five fire elementals, eight magic-item pages): each family
member scores about the same, and together they push the one note the query describes out of
the first ten. Here each note of the fused top ``window``, taken in order, loses
``weight × (similarity − floor) / (1 − floor)`` of the top score, where similarity is its
closest chunk's cosine with the closest chunk of a note already placed above it: the second
fire elemental pays for the first, a note unlike anything above pays nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# The fused notes spread (the reranker's pool): below them the order is left as fused.
WINDOW = 30


def spread(
    order: Sequence[int],
    scores: dict[int, float],
    vectors: dict[int, np.ndarray],
    weight: float,
    floor: float,
    kept: int = 0,
    window: int = WINDOW,
) -> list[int]:
    """``order``'s first ``window`` notes reordered greedily by score less the redundancy cost;
    its first ``kept`` notes (put first by a rule) stay where they are. A note with no vector
    pays nothing. The rest of ``order`` follows as it was."""
    import numpy as np

    head, tail = list(order[:window]), list(order[window:])
    if weight <= 0 or len(head) < 2 or not scores:
        return list(order)
    top = max(scores.get(n, 0.0) for n in head) or 1.0
    placed = head[:kept]
    left = head[kept:]
    unit = {n: v / (float(np.linalg.norm(v)) or 1.0) for n, v in vectors.items()}
    # the closest similarity of each note left to the notes placed so far
    nearest = {n: max((_cos(unit, n, p) for p in placed), default=-1.0) for n in left}
    while left:

        def worth(n: int) -> float:
            excess = max(0.0, nearest[n] - floor) / max(1e-9, 1.0 - floor)
            return scores.get(n, 0.0) / top - weight * excess

        best = max(left, key=lambda n: (worth(n), -left.index(n)))
        left.remove(best)
        placed.append(best)
        for n in left:
            nearest[n] = max(nearest[n], _cos(unit, n, best))
    return placed + tail


def _cos(unit: dict[int, np.ndarray], a: int, b: int) -> float:
    if a not in unit or b not in unit:
        return -1.0
    return float(unit[a] @ unit[b])
