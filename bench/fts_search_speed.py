"""This checkout's BM25 search (``IndexStore.fts_search``) beside an older tree's, on one index.

Each round runs one process of each tree (interleaved, the order swapped every round, so both
see the same load), from the tree's own folder with PYTHONPATH on it. Each process opens the
vault's index as ``--open`` says (a store, or a server's snapshot with its readers pinned),
makes the lexical lane's expressions for the queries (the vault's titles: half bare, half in
a question, as bench/speed.py asks), searches each once to warm up, then times every search
``--repeat`` times. Prints, per tree, the median over rounds of the wall and the CPU (all
threads) per search, new/old, and whether both trees gave the same hits (they must).

    git -C . archive main | tar -x -C /tmp/old-brain
    BRAIN_HOME=/tmp/srd-home python -m brain index --vault ../shared/bench/vaults/13th-age-srd
    BRAIN_HOME=/tmp/srd-home python bench/fts_search_speed.py --baseline /tmp/old-brain [--rounds 9]
    ... --split-matches 1 --threads 3   # every search in parts, on the readers

The index must be there (this script only reads it), built by either tree: the two read the
same database.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRD = HERE.parent.parent / "shared" / "bench" / "vaults" / "13th-age-srd"

CHILD = r"""
import hashlib, json, random, sys, time
from pathlib import Path
from brain import config
from brain.index.store import IndexStore
from brain.recall import lexical
from brain.recall.types import DEFAULT_BM25_WEIGHTS, DEFAULT_DEPTH

vault, queries, repeat, how = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
directory = config.index_dir(vault.resolve())
store = IndexStore.open_snapshot(directory, split_searches=True) if how == "snapshot" else IndexStore.open(directory, create=False)
try:
    titles = sorted(r[0] for r in store.conn.execute("SELECT title FROM notes"))
    picked = random.Random("brain-speed-ask").sample(titles, min(queries, len(titles)))
    texts = [t if i % 2 else f"how does {t.lower()} work in combat?" for i, t in enumerate(picked)]
    expressions = [e for e in (lexical.match_expression(store, t) for t in texts) if e is not None]
    limit = lexical.search_depth(DEFAULT_DEPTH)
    digest = hashlib.sha256()
    for expression in expressions:  # warm: pages, term counts, readers
        digest.update(repr(store.fts_search(expression, DEFAULT_BM25_WEIGHTS, limit)).encode())
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        for expression in expressions:
            store.fts_search(expression, DEFAULT_BM25_WEIGHTS, limit)
    searches = repeat * len(expressions)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"searches": searches, "wall_ms": wall * 1000 / searches, "cpu_ms": cpu * 1000 / searches,
                      "hits": digest.hexdigest(), "chunks": store.chunk_count()}))
finally:
    store.close()
"""


def run(tree: Path, args: argparse.Namespace) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    if args.threads is not None:
        env["BRAIN_LEXICAL_THREADS"] = str(args.threads)
    if args.split_matches is not None:
        env["BRAIN_LEXICAL_SPLIT_MATCHES"] = str(args.split_matches)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(args.vault), str(args.queries), str(args.repeat), args.open],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        sys.exit(f"{tree}: exited with {proc.returncode}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the older tree (git archive ... | tar -x)")
    parser.add_argument("--vault", type=Path, default=SRD, help="an indexed vault (BRAIN_HOME: where its index is)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5, help="times each search is timed in a process")
    parser.add_argument("--open", choices=("store", "snapshot"), default="store")
    parser.add_argument("--threads", type=int, help="BRAIN_LEXICAL_THREADS for both trees")
    parser.add_argument(
        "--split-matches", type=int, help="BRAIN_LEXICAL_SPLIT_MATCHES for both (1: split every search)"
    )
    args = parser.parse_args()
    trees = {"old": args.baseline.resolve(), "new": HERE.parent}
    load = [round(x, 1) for x in os.getloadavg()]
    results: dict[str, list[dict]] = {"old": [], "new": []}
    for round_ in range(args.rounds):
        for name in ("old", "new") if round_ % 2 == 0 else ("new", "old"):
            results[name].append(run(trees[name], args))
    first = results["old"][0]
    print(
        f"{args.vault.name}: {first['chunks']:,} chunks, {first['searches']:,} searches a process "
        f"({args.open}, threads {args.threads or 'default'}, split from {args.split_matches or 'default'}), "
        f"{args.rounds} rounds; load {load} -> {[round(x, 1) for x in os.getloadavg()]}"
    )
    medians = {
        name: {key: statistics.median(r[key] for r in rows) for key in ("wall_ms", "cpu_ms")}
        for name, rows in results.items()
    }
    for key in ("wall_ms", "cpu_ms"):
        old, new = medians["old"][key], medians["new"][key]
        print(f"  {key[:-3]:>4} per search: old {old:.3f} ms, new {new:.3f} ms, new/old {new / old:.3f}")
    same = {r["hits"] for rows in results.values() for r in rows}
    print(f"  hits: {'the same in every process' if len(same) == 1 else f'DIFFER ({len(same)} answers)'}")


if __name__ == "__main__":
    main()
