"""BM25 in one statement against the same search split into rowid ranges on several threads.

Reads an index that ``bench/scale.py`` built (``--dir``: its work folder; nothing is written)
and times ``IndexStore.fts_search`` at the depth the lexical lane asks for, with
``BRAIN_LEXICAL_THREADS`` at each of ``--threads`` and every search split whatever its size.
Each query is searched with its first 1, 2, ... of its terms too, so that the figures cover a
range of match counts: this is where ``BRAIN_LEXICAL_SPLIT_MATCHES`` (the estimate below
which a search is not split) comes from. Prints, for each band of the estimate (its terms'
chunk counts added up, at most the chunks), the p50 of one statement and of each split, their
ratio, and whether every split gave exactly the one statement's hits.

    python bench/lexical_split.py --dir /tmp/brain-scale --notes 100000
    python bench/lexical_split.py --dir /tmp/brain-scale --notes 10000 --threads 1,2,4

The machine is shared: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import scale  # noqa: E402  (the bench's own queries)

BANDS = (0, 2_500, 5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 10**12)


def _band(estimate: int) -> str:
    for low, high in itertools.pairwise(BANDS):
        if low <= estimate < high:
            return f"{low:>7,}-{high:,}" if high < 10**12 else f"{low:>7,}+"
    raise AssertionError(estimate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="bench/scale.py's work folder (its index is only read)")
    parser.add_argument("--notes", type=int, default=100_000, help="only for the printout")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--threads", default="1,2,4", help="BRAIN_LEXICAL_THREADS values; 1 is one statement")
    parser.add_argument("--repeat", type=int, default=3, help="timings per search; the best is kept")
    args = parser.parse_args()
    work = Path(args.dir)
    os.environ["BRAIN_HOME"] = str(work / "home")
    os.environ["BRAIN_LEXICAL_SPLIT_MATCHES"] = "1"  # split every search: the bench decides where it pays

    from brain.config import index_dir
    from brain.index.store import IndexStore
    from brain.recall import lexical
    from brain.recall.types import DEFAULT_BM25_WEIGHTS, DEFAULT_DEPTH

    directory = index_dir(work / "vault")
    if not (directory / "index.db").exists():
        sys.exit(f"no index in {directory}: run bench/scale.py --dir {work} --phases build first")
    threads = [int(t) for t in args.threads.split(",")]
    limit = lexical.search_depth(DEFAULT_DEPTH)
    load_before = [round(x, 1) for x in os.getloadavg()]

    searches: list[tuple[str, int]] = []  # (expression, estimate)
    times: dict[int, list[float]] = {}
    hits: dict[int, list[list[tuple[int, float]]]] = {}
    chunks = 0
    for count in threads:
        os.environ["BRAIN_LEXICAL_THREADS"] = str(count)
        store = IndexStore.open(directory, create=False)
        try:
            if not searches:
                chunks = store.chunk_count()
                for query in scale._queries(args.queries):
                    expression = lexical.match_expression(store, query)
                    if expression is None:
                        continue
                    terms = [t.strip('"') for t in expression.split(" OR ")]
                    for k in range(1, len(terms) + 1):
                        counts = store.term_chunk_counts(terms[:k])
                        estimate = min(chunks, sum(counts.values()))
                        searches.append((" OR ".join(f'"{t}"' for t in terms[:k]), estimate))
            store.fts_search(searches[0][0], DEFAULT_BM25_WEIGHTS, limit)  # warm: readers, pages
            times[count], hits[count] = [], []
            for expression, _ in searches:
                best = float("inf")
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    found = store.fts_search(expression, DEFAULT_BM25_WEIGHTS, limit)
                    best = min(best, (time.perf_counter() - started) * 1000)
                times[count].append(best)
                hits[count].append(found)
        finally:
            store.close()

    load_after = [round(x, 1) for x in os.getloadavg()]
    print(
        f"lexical split: {args.notes} notes, {chunks:,} chunks, {len(searches)} searches of depth {limit}, "
        f"{os.cpu_count()} CPUs, load {load_before} -> {load_after}"
    )
    bands: dict[str, list[int]] = defaultdict(list)
    for index, (_, estimate) in enumerate(searches):
        bands[_band(estimate)].append(index)
    header = f"  {'estimate':<18}{'searches':>9}" + "".join(f"{f'{t} thread(s) p50':>18}" for t in threads)
    print(header + "   ratio to 1 thread")
    for band in sorted(bands, key=lambda b: int(b.split("-")[0].replace(",", "").rstrip("+"))):
        members = bands[band]
        p50 = {t: statistics.median(times[t][i] for i in members) for t in threads}
        base = p50.get(1)
        cells = "".join(f"{p50[t]:>15.2f} ms" for t in threads)
        ratios = "  ".join(f"{t}: {p50[t] / base:.2f}" for t in threads if base and t != 1)
        print(f"  {band:<18}{len(members):>9}{cells}   {ratios}")
    if 1 in threads:
        for t in threads:
            if t != 1:
                same = sum(1 for a, b in zip(hits[1], hits[t]) if a == b)
                print(f"  {t} threads: the one statement's hits exactly in {same} of {len(searches)} searches")


if __name__ == "__main__":
    main()
