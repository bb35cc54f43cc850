"""What breaking ties by path costs a query: PageRank's top at 100,000 notes, and the lanes' cut.

``LinkGraph.top_of`` took the ``depth`` best by ``argpartition`` and ordered them by a stable
``argsort``: equal scores in numpy's partition order. It now keeps every note that ties the
last of them and orders equal scores by note id (``lexsort``), for ``ties.top_notes`` to settle
by path. This times ``LinkGraph.rank`` (push and power) on a random graph of ``--notes`` notes,
the old top and the new interleaved query by query, then ``top_of`` alone over one score a
note (the power iteration's), and ``ties.top_notes`` against the plain
``sorted`` it replaced over a dense lane's 240 notes (no ties: no path is read). Ratios, new
over old; the target is at most 1.05 for a PageRank query (noise on a shared machine aside).

    PYTHONPATH=. python bench/tie_cost.py [--notes 100000] [--queries 40]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from functools import partial

import numpy as np

from brain.recall import ppr, ties


def _old_top_of(self, index, scores, depth):
    if depth <= 0 or not len(scores):
        return []
    depth = min(depth, int((scores > 0).sum()))
    if depth == 0:
        return []
    picked = np.argpartition(-scores, depth - 1)[:depth]
    picked = picked[np.argsort(-scores[picked], kind="stable")]
    return [(int(self.note_ids[index[i]]), float(scores[i])) for i in picked]


def _graph(notes: int, links_per_note: int, rng: np.random.Generator) -> ppr.LinkGraph:
    ids = np.arange(1, notes + 1, dtype=np.int64)
    src = rng.integers(1, notes + 1, notes * links_per_note)
    dst = rng.integers(1, notes + 1, notes * links_per_note)
    edges = np.stack([src, dst, np.zeros_like(src)], axis=1)
    return ppr.LinkGraph.of_links(ids.tolist(), edges)


def _time(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    graph = _graph(args.notes, 5, rng)
    new_top_of = ppr.LinkGraph.top_of
    pick = random.Random(7)
    for method in ("push", "power"):
        old_ms, new_ms = [], []
        for _ in range(args.queries):
            seeds = {pick.randrange(1, args.notes + 1): 1.0 / (r + 1) for r in range(15)}
            for top_of, times in pick.sample([(_old_top_of, old_ms), (new_top_of, new_ms)], 2):  # interleaved
                ppr.LinkGraph.top_of = top_of  # type: ignore[method-assign]
                times.append(_time(partial(graph.rank, seeds, 60, method=method, degree_norm=0.5)))
        ppr.LinkGraph.top_of = new_top_of  # type: ignore[method-assign]
        old, new = statistics.median(old_ms), statistics.median(new_ms)
        print(f"rank ({method}, {args.notes:,} notes): old {old:.2f} ms, new {new:.2f} ms, ratio {new / old:.3f}")
    every = rng.random(args.notes)  # the power iteration's scores: one per note
    index = np.arange(args.notes)
    old_ms, new_ms = [], []
    for _ in range(args.queries * 5):
        for top_of, times in pick.sample([(_old_top_of, old_ms), (new_top_of, new_ms)], 2):
            times.append(_time(partial(top_of, graph, index, every, 60)))
    old, new = statistics.median(old_ms), statistics.median(new_ms)
    print(f"top_of alone ({args.notes:,} scores): old {old:.2f} ms, new {new:.2f} ms, ratio {new / old:.3f}")
    scores = {n: float(s) for n, s in enumerate(rng.random(240))}
    plain = [_time(lambda: sorted(scores, key=lambda n: -scores[n])[:60]) for _ in range(2000)]
    settled = [_time(lambda: ties.top_notes(None, scores, lambda n: -scores[n], 60)) for _ in range(2000)]  # type: ignore[arg-type]
    old, new = statistics.median(plain), statistics.median(settled)
    print(f"a lane's cut (240 notes, no ties): old {old * 1000:.1f} µs, new {new * 1000:.1f} µs, ratio {new / old:.2f}")


if __name__ == "__main__":
    main()
