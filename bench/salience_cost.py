"""What query-side salience for BM25 (``RecallSettings.query_salience``) costs an ask.

Each query word costs one more embedding (the query without it), and the BM25 lane's hits, twice
as many, are scored again in Python. This asks a labelled set's queries in the default mode with
and without it, interleaved query by query, on a warm recaller (the embedder loaded, every query
asked once first), and prints the process CPU time of each (CPU, not wall time: the machine is
shared), the words a query, and the ratio with over without.

    BRAIN_HOME=... PYTHONPATH=. python bench/salience_cost.py [--set 13th-age] [--strength 0.5]

Run with the BRAIN_HOME whose index the quality runs use (bench/quality_ablation.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality_ablation import SETS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", default="13th-age", choices=sorted(SETS))
    parser.add_argument("--strength", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    from brain.evaluation.queries import load_queries
    from brain.recall import lexical
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    queries_file, vault = SETS[args.set]
    queries = [q.query for q in load_queries(queries_file, vault)]
    plain, salient = RecallSettings(), RecallSettings(query_salience=args.strength)
    with open_recaller(vault, update=False, rerank_model=None) as recaller:
        recaller.warm_up()
        for q in queries:  # warm: every lane's tables read once
            recaller.ask(q, settings=plain)
        cpu: dict[str, list[float]] = {"without": [], "with": []}
        for _ in range(args.rounds):
            for q in queries:
                for name, settings in (("without", plain), ("with", salient)):
                    started = time.process_time()
                    recaller.ask(q, settings=settings)
                    cpu[name].append((time.process_time() - started) * 1000)
        words = [len(lexical.fts_terms(q)) for q in queries]
    print(f"{args.set}: {len(queries)} queries x {args.rounds} rounds, {statistics.mean(words):.1f} words a query")
    for name, times in cpu.items():
        ordered = sorted(times)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(f"  {name:8} salience: CPU ms a query p50 {statistics.median(times):6.1f}  p95 {p95:6.1f}")
    print(f"  ratio with / without (p50): {statistics.median(cpu['with']) / statistics.median(cpu['without']):.2f}")


if __name__ == "__main__":
    main()
