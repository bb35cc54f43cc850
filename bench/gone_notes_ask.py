"""What notes gone since the last index cost a warm `brain ask`, beside an older tree: figures
with ratios, not tests.

The vault (indexed beforehand in ``BRAIN_HOME``: `brain index --vault VAULT`) is asked the
realvault queries, warm, in one process per tree and round (``open_recaller(update=False)``,
a first query to load the model, vectors and graph, then each query timed), the two trees
interleaved round by round so that both see the same load; first with every note's file there,
then with ``--gone`` notes' files moved out of the vault (put back at the end), so that each
lane leaves them out (``Recaller.gone``). It prints the median per-query milliseconds of each
tree, wall and CPU (the process's: steadier on a shared machine), and new/old.

    git archive main | tar -x -C /tmp/old-brain
    BRAIN_HOME=/tmp/srd-home BRAIN_EMBED_MODEL=/path/to/minilm HF_HUB_OFFLINE=1 BRAIN_RERANK_MODEL=none \\
        python bench/gone_notes_ask.py --vault /tmp/srd --baseline /tmp/old-brain [--rounds 5] [--gone 20]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"

ASK = """
import json, sys, time
from brain.recall.opening import open_recaller
vault, modes, queries = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
recaller = open_recaller(vault, update=False)
recaller.ask(queries[0])  # the model, vectors and graph loaded: what follows is warm
times = {}
for mode in modes:
    recaller.ask(queries[0], mode)
    spent = times[mode] = []
    for q in queries[1:]:
        t, c = time.perf_counter(), time.process_time()
        recaller.ask(q, mode)
        spent.append(((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000))
print(json.dumps({"gone": len(recaller.gone), "times": times}))
recaller.close()
"""


def run(tree: Path, vault: Path, modes: list[str], queries: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", ASK, str(vault), json.dumps(modes), json.dumps(queries)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        raise SystemExit(f"{tree}: ask failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def measure(trees: dict[str, Path], vault: Path, modes: list[str], queries: list[str], rounds: int) -> None:
    spent: dict[str, dict[str, list[list[float]]]] = {name: {m: [] for m in modes} for name in trees}
    gone = {}
    for i in range(rounds):
        for name in list(trees)[:: 1 if i % 2 == 0 else -1]:  # each tree first in every other round
            answer = run(trees[name], vault, modes, queries)
            gone[name] = answer["gone"]
            for mode in modes:
                spent[name][mode] += answer["times"][mode]
    print(f"  notes gone: {gone}")
    for mode in modes:
        for k, what in enumerate(("wall", "CPU ")):
            old = statistics.median(t[k] for t in spent["old"][mode])
            new = statistics.median(t[k] for t in spent["new"][mode])
            print(f"  {mode:<12} {what} old {old:7.2f} ms   new {new:7.2f} ms   new/old {new / old:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True, help="an older tree (git archive … | tar -x)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--gone", type=int, default=20, help="notes whose files are moved out for the second run")
    parser.add_argument("--modes", default="hybrid+ppr,graph")
    args = parser.parse_args()
    queries = [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line.strip()]
    queries = queries[: args.queries + 1]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    trees = {"old": args.baseline.resolve(), "new": ROOT}
    print(f"load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; per query, median of {args.rounds} rounds")
    print("every note's file there:")
    measure(trees, args.vault, modes, queries, args.rounds)
    if args.gone <= 0:
        return
    notes = sorted(p for p in args.vault.rglob("*.md") if not any(part.startswith(".") for part in p.parts))
    moved = notes[:: max(1, len(notes) // args.gone)][: args.gone]
    aside = Path(tempfile.mkdtemp(prefix="gone-notes-"))
    try:
        for i, path in enumerate(moved):
            shutil.move(str(path), str(aside / f"{i}.md"))
        print(f"{len(moved)} notes' files moved out:")
        measure(trees, args.vault, modes, queries, args.rounds)
    finally:
        for i, path in enumerate(moved):
            shutil.move(str(aside / f"{i}.md"), str(path))
        shutil.rmtree(aside, ignore_errors=True)
    print(f"load at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
