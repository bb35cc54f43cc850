"""The lexical postings (brain/index/postings.py) against FTS5's bm25() on a bench/scale.py index.

Prints, for the bench's queries: the BM25 search (``IndexStore.fts_search``) with the postings
and with FTS5 alone, interleaved query by query so that both see the same load, wall and CPU
p50/p95, and how many answers differ (must be 0); then `hybrid+ppr` as a whole and its lexical
stage, both ways, and whether the results are the same. ``--build`` first builds the postings
(it writes postings.bin into the index folder: use a copy of an index you must not change) and
prints its wall and CPU seconds, peak RSS and file size. ``--cold`` empties the kernel's page
cache before every search (root only: /proc/sys/vm/drop_caches) and opens the index again, so
each search is a new process's first: it reads the postings and the database from disk, as
after a reboot or under memory pressure (then only the search is timed, not `hybrid+ppr`).

    python bench/lexical_postings.py --dir /tmp/brain-scale --notes 100000 [--build] [--cold]
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import scale  # noqa: E402

from brain import config  # noqa: E402
from brain.index import postings, postings_due  # noqa: E402
from brain.index.store import IndexStore  # noqa: E402
from brain.recall import lexical  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _line(name: str, wall: list[float], cpu: list[float]) -> str:
    return (
        f"{name:<22} wall p50 {statistics.median(wall):7.2f} p95 {_pct(wall, 0.95):7.2f} ms"
        f" | CPU p50 {statistics.median(cpu):7.2f} p95 {_pct(cpu, 0.95):7.2f} ms"
    )


def _drop_page_cache() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("1")


def _turns(n: int) -> tuple[bool, bool]:
    """Which way goes first for the n-th query, in turn: the first reads from disk what both
    need and the second finds it cached (rows of the hits, their vectors)."""
    return (True, False) if n % 2 == 0 else (False, True)


def _use(on: bool) -> None:
    os.environ["BRAIN_LEXICAL_POSTINGS"] = "1" if on else "off"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="a bench/scale.py work folder")
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--build", action="store_true", help="build postings.bin first (writes the index folder)")
    parser.add_argument("--cold", action="store_true", help="empty the page cache before each search (root)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ["BRAIN_HOME"] = str(args.dir / "home")
    vault = args.dir / "vault"
    directory = config.index_dir(vault)
    print(f"index {directory}, load {os.getloadavg()[0]:.1f} (2 CPUs shared: compare ratios, CPU time)")
    if args.build:
        store = IndexStore.open(directory)
        wall, cpu = time.perf_counter(), time.process_time()
        postings.build(store)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        store.close()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        size = (directory / postings_due.FILE).stat().st_size / 1e6
        print(f"build: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {rss:.0f} MB, {postings_due.FILE} {size:.1f} MB")

    store = IndexStore.open_snapshot(directory, split_searches=True)
    texts = scale._queries(args.queries)
    expressions = [e for e in (lexical.match_expression(store, t) for t in texts) if e]
    times: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
    differ = 0
    for expression in expressions[:3]:
        for on in (True, False):
            _use(on)
            store.fts_search(expression, lexical.WEIGHTS, 300)
    if args.cold:
        try:
            _drop_page_cache()
        except OSError as exc:
            sys.exit(f"--cold needs root, to write /proc/sys/vm/drop_caches ({exc})")
    for n, expression in enumerate(expressions):
        answers = {}
        for on in _turns(n):
            _use(on)
            if args.cold:  # a new process's first search: nothing of the index in memory
                store.close()
                postings._bases.clear()
                gc.collect()
                _drop_page_cache()
                store = IndexStore.open_snapshot(directory, split_searches=True)
            wall, cpu = time.perf_counter(), time.process_time()
            answers[on] = store.fts_search(expression, lexical.WEIGHTS, 300)
            times[on][0].append((time.perf_counter() - wall) * 1000)
            times[on][1].append((time.process_time() - cpu) * 1000)
        differ += answers[True] != answers[False]
    store.close()
    print(
        f"BM25 search, {len(expressions)} queries, limit 300{', each from a cold page cache' if args.cold else ''}:"
        f" {differ} answers differ"
    )
    print(_line("  postings", *times[True]))
    print(_line("  FTS5", *times[False]))
    if args.cold:
        return

    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    _use(True)
    recaller = open_recaller(vault, embedder=scale.BenchFakeEmbedder(), update=False, rerank_model=None)
    settings = RecallSettings(k=12)
    stage: dict[bool, list[float]] = {True: [], False: []}
    whole: dict[bool, tuple[list[float], list[float]]] = {True: ([], []), False: ([], [])}
    results: dict[bool, list[object]] = {True: [], False: []}
    for on in (True, False):
        _use(on)
        recaller.ask(texts[0], "hybrid+ppr", settings)
    for n, text in enumerate(texts):
        for on in _turns(n):
            _use(on)
            wall, cpu = time.perf_counter(), time.process_time()
            result = recaller.ask(text, "hybrid+ppr", settings)
            whole[on][0].append((time.perf_counter() - wall) * 1000)
            whole[on][1].append((time.process_time() - cpu) * 1000)
            stage[on].append(result.timings_ms["lexical"])
            results[on].append([(c.note_id, c.score) for c in result.results])
    recaller.close()
    print(f"hybrid+ppr, {len(texts)} queries: results the same both ways: {results[True] == results[False]}")
    for on, name in ((True, "postings"), (False, "FTS5")):
        lexical_ms = stage[on]
        print(
            _line(f"  {name}", *whole[on]) + f" | lexical stage p50 {statistics.median(lexical_ms):.2f}"
            f" p95 {_pct(lexical_ms, 0.95):.2f} ms"
        )
    print(f"load after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
