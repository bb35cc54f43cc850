"""What a view of the past holds, part by part (figures, not asserted).

Opens a server's snapshot of an indexed vault with history in this process (``open_snapshot``,
as `brain serve` does), asks a question of the present (everything the present builds, built),
then opens views of the past over it (``open_past_view``) at moments of its history and asks
each a question, printing for each view what tracemalloc sees it allocate, by the line of brain
that allocated it, and the process's resident memory (FAISS and SQLite allocate outside
tracemalloc's sight), then after the views are closed; ``--rounds`` opens and closes them
again, printing what is left after each round (what the allocator keeps, and reuses or not).

Run it on a vault bench/serve_past.py built (it leaves it in ``--work``, with its moments):

    python bench/serve_past.py --model benchfake:384 --notes 20000 --work /tmp/sp20k
    python bench/past_view_parts.py --work /tmp/sp20k
"""

from __future__ import annotations

import argparse
import gc
import json
import linecache
import os
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QUERIES = ["how does the escalation die work", "kalomi sati vone rusa", "what changed in zone-01 area-012"]


def rss_mb() -> tuple[float, float]:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon"):
            fields[key] = int(value.split()[0]) / 1024
    return round(fields["VmRSS"], 1), round(fields["RssAnon"], 1)


def brain_line(trace: tracemalloc.Traceback) -> str:
    """The innermost frame in brain's own code (else the innermost), as path:line and its text."""
    frames = list(trace)[::-1]  # tracemalloc lists the oldest first
    for frame in frames:
        if "/brain/" in frame.filename and "/site-packages/" not in frame.filename:
            name = frame.filename.split("/brain/", 1)[1]
            return f"{name}:{frame.lineno}  {linecache.getline(frame.filename, frame.lineno).strip()[:70]}"
    frame = frames[0]
    return f"{frame.filename}:{frame.lineno}"


def parts(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, top: int) -> tuple[float, list[str]]:
    """MB allocated between the snapshots and still held, in all and by brain's line."""
    by_line: dict[str, int] = {}
    for stat in after.compare_to(before, "traceback"):
        if stat.size_diff:
            key = brain_line(stat.traceback)
            by_line[key] = by_line.get(key, 0) + stat.size_diff
    total = sum(by_line.values()) / 2**20
    ranked = sorted(by_line.items(), key=lambda item: -item[1])[:top]
    return total, [f"    {size / 2**20:8.2f} MB  {line}" for line, size in ranked if abs(size) >= 2**16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, required=True, help="bench/serve_past.py's --work")
    parser.add_argument("--top", type=int, default=20, help="lines of brain listed for each view")
    parser.add_argument("--views", type=int, default=2)
    parser.add_argument(
        "--frames", type=int, default=12, help="tracemalloc's; 0: resident memory alone (tracing slows it 5x)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="open, ask and close the views this many times")
    args = parser.parse_args()
    kept = json.loads((args.work / "kept.json").read_text())
    os.environ.update(kept["env"])
    sys.path[:0] = [str(ROOT), str(HERE)]
    from scale import _register

    _register()
    from brain.embed import load_embedder
    from brain.recall.opening import open_past_view, open_snapshot
    from brain.recall.past import PastIndex
    from brain.recall.types import DEFAULT_MODE, Mode, RecallSettings
    from brain.server.service import release_free_memory

    root = Path(kept["vault"]).resolve()
    embedder = load_embedder(os.environ["BRAIN_EMBED_MODEL"])
    settings, modes = RecallSettings(), [Mode.parse(DEFAULT_MODE)]
    present = open_snapshot(root, embedder, rerank_model=None)
    for query in QUERIES:
        present.compare(query, modes, settings)
    gc.collect()
    release_free_memory()
    print(f"{root.name}: the present open and asked: {rss_mb()[0]} MB resident ({rss_mb()[1]} anonymous)")
    if "scipy.sparse" not in sys.modules:  # the first view's link graph would import it, and it stays
        before_import = rss_mb()
        import scipy.sparse  # noqa: F401

        print(f"scipy.sparse imported first (a view's link graph needs it): +{rss_mb()[0] - before_import[0]:.1f} MB")
    moments = kept["moments"]
    picks = [moments[len(moments) // 2], moments[0], moments[-1]][: args.views]
    trace = args.frames > 0
    if trace:
        tracemalloc.start(args.frames)
    start = tracemalloc.take_snapshot() if trace else None
    for number in range(1, args.rounds + 1):
        views = []
        for moment in picks:
            gc.collect()
            release_free_memory()  # as brain serve does after the question that opened a view
            rss_before = rss_mb()
            before = tracemalloc.take_snapshot() if trace and number == 1 else None
            started = time.perf_counter()
            view = open_past_view(present, as_of=moment, beside=views)  # as brain serve opens one beside those kept
            opened = time.perf_counter() - started
            asked = []
            for query in QUERIES:
                started = time.perf_counter()
                view.compare(query, modes, settings)
                asked.append(time.perf_counter() - started)
            store, vectors = view.store, view.vectors
            past_chunks = len(store.past_chunk_ids()) if isinstance(store, PastIndex) else 0
            views.append(view)
            del view, store, vectors
            gc.collect()
            release_free_memory()
            rss_after = rss_mb()
            if number > 1:
                continue
            print(
                f"\na view at {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(moment))} ({past_chunks:,} past chunks,"
                f" {past_chunks * present.vectors.dim * 4 / 2**20:.1f} MB of float32 vectors): opened in {opened:.2f} s,"
                f" questions {', '.join(f'{s:.2f}' for s in asked)} s\n"
                f"  resident +{rss_after[0] - rss_before[0]:.1f} MB (anonymous +{rss_after[1] - rss_before[1]:.1f})"
            )
            if before is not None:
                total, lines = parts(before, tracemalloc.take_snapshot(), args.top)
                print(f"  tracemalloc: +{total:.1f} MB held, by where brain allocated it:\n" + "\n".join(lines))
        while views:  # no name left bound to one
            views.pop().close()
        gc.collect()
        release_free_memory()
        print(f"\nround {number}: the views closed: {rss_mb()[0]} MB resident ({rss_mb()[1]} anonymous)")
        if start is not None and number == 1:
            total, lines = parts(start, tracemalloc.take_snapshot(), args.top)
            print(f"  tracemalloc: {total:+.1f} MB still held\n" + "\n".join(lines))
    present.close()


if __name__ == "__main__":
    main()
