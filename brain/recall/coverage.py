"""Coverage: over the fused top notes, a note whose passage says again what a note above it
already says counts less (maximal marginal relevance, Carbonell & Goldstein 1998).

A theme query ("notes about X") is answered by several notes, each on its own part of X; the
fused order can fill the first places with near-copies of one part. Each note is read by its
passage closest to the query; going down the fused order, a note loses ``weight`` × (its
highest cosine with a passage above it − ``floor``) of its score, and the order is taken again
by what is left, greedily. Notes put first (named, agreed, described) keep their place and
count as above every other.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def covered(
    fused: Mapping[int, float],
    passages: Mapping[int, np.ndarray],
    kept: Collection[int],
    weight: float,
    floor: float,
    depth: int,
) -> dict[int, float]:
    """``fused`` with its first ``depth`` notes rescored: each by its score less the share it
    repeats of a note chosen before it (``passages``: note id → its passage's unit vector; a note
    without one repeats nothing). Past ``depth`` the scores stay as they are."""
    order = sorted(fused, key=lambda note_id: -fused[note_id])
    head, out = order[:depth], dict(fused)
    chosen = [passages[n] for n in head if n in kept and n in passages]
    pool = [n for n in head if n not in kept]
    repeats = {n: 0.0 for n in pool}  # each note's highest cosine with a chosen passage so far
    for vector in chosen:
        for n in pool:
            if n in passages:
                repeats[n] = max(repeats[n], float(passages[n] @ vector))
    while pool:
        scores = {n: fused[n] * (1.0 - weight * max(0.0, repeats[n] - floor)) for n in pool}
        best = max(pool, key=lambda n: (scores[n], -head.index(n)))
        out[best] = scores[best]  # never above the note chosen before it: a score only falls as more are chosen
        pool.remove(best)
        if best in passages:
            for n in pool:
                if n in passages:
                    repeats[n] = max(repeats[n], float(passages[n] @ passages[best]))
    return out
