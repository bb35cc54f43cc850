"""What the decoding rules cost a vault's notes: the time to read every ``.md`` note's bytes as
the index does (``looks_binary``, then ``parse_note``: decoding, frontmatter, links), best of
``--repeat`` passes over bytes already in memory (no disk in the figure), and how many notes
reached the legacy code-page rules (``notes._legacy``: only bytes that are not UTF-8 do).

With ``--against DIR`` (a checkout of another brain, e.g. ``git archive main | tar -x -C DIR``)
the same is run with that tree's ``brain`` in a child process, and the ratio printed.

    python bench/decoding_cost.py VAULT [VAULT ...] [--repeat 5] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def measure(vaults: list[Path], repeat: int) -> dict[str, float]:
    import brain.notes
    from brain.notes import looks_binary, parse_note

    notes = [(p.relative_to(v).as_posix(), p.read_bytes()) for v in vaults for p in sorted(v.rglob("*.md"))]
    legacy = brain.notes._legacy
    calls = 0

    def counted(data: bytes, start: int) -> tuple[str, str] | None:
        nonlocal calls
        calls += 1
        return legacy(data, start)

    brain.notes._legacy = counted  # decode looks it up at each call
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for path, data in notes:
            if not looks_binary(data):
                parse_note(path, data, 0.0)
        best = min(best, time.perf_counter() - start)
    return {"notes": len(notes), "seconds": best, "legacy": calls / repeat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="with --against: alternate the trees this often")
    parser.add_argument("--against", type=Path)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # the child's output
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.vaults, args.repeat)))
        return
    command = [sys.executable, __file__, *map(str, args.vaults), "--repeat", str(args.repeat), "--json"]
    here = Path(__file__).resolve().parent.parent
    trees = {"this tree": here, **({str(args.against): args.against.resolve()} if args.against else {})}
    best: dict[str, dict[str, float]] = {}
    # alternated, each tree in a process of its own: a shared machine's load falls on both
    for _ in range(args.rounds if args.against else 1):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            row = json.loads(subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout)
            if name not in best or row["seconds"] < best[name]["seconds"]:
                best[name] = row
    for name, row in best.items():
        print(
            f"{name}: {row['notes']:,} notes read in {row['seconds']:.3f} s (best of {args.repeat} passes, "
            f"{args.rounds if args.against else 1} runs), {row['legacy']:.0f} reached the legacy rules"
        )
    if args.against:
        print(
            f"ratio (this tree / {args.against}): {best['this tree']['seconds'] / best[str(args.against)]['seconds']:.3f}"
        )


if __name__ == "__main__":
    main()
