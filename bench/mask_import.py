"""What importing the ledger's masker costs a fresh process, this checkout's against another's, interleaved:
both hooks import it on every call. Each round runs one fresh interpreter per checkout (old, this, old, this …)
that loads the masker alone (brain/ledger/redact.py, or the package brain/ledger/redact/ it was split into, as
bench/mask_compare.py does), then masks a plain turn (no secret) and a turn with a password in it; it prints
the CPU milliseconds (``time.process_time``) of each step, their medians, and the ratio of the medians.
Bytecode is written and read (a first run per checkout, not timed, writes it), as an installed brain's is.

    git archive main | tar -x -C /tmp/main-tree
    python bench/mask_import.py --old /tmp/main-tree [--rounds 15] [--max-ratio 0.5]

``--max-ratio R`` exits 1 unless this checkout's import takes at most R times the CPU of ``--old``'s (medians).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from mask_compare import masker

HERE = Path(__file__).resolve().parents[1]
PLAIN = "Let us refactor the index store before the release; see notes/plan.md and run pytest -q tests/test_x.py"
SECRET = "the staging db password is hunter22x, user bob; deploy with DB_PASSWORD=Tr0ub4dor&3 make deploy"
CHILD = """
import importlib.util, os, sys, time
started = time.process_time()
package = [os.path.dirname(sys.argv[1])] if sys.argv[1].endswith("__init__.py") else None
spec = importlib.util.spec_from_file_location("redact", sys.argv[1], submodule_search_locations=package)
module = importlib.util.module_from_spec(spec)
sys.modules["redact"] = module  # a package's modules import each other relative to it
spec.loader.exec_module(module)
imported = time.process_time()
module.redact(sys.argv[2])
plain = time.process_time()
module.redact(sys.argv[3])
secret = time.process_time()
print((imported - started) * 1e3, (plain - imported) * 1e3, (secret - plain) * 1e3)
"""
STEPS = ("import", "+ a plain turn", "+ a turn with secrets")


def one_run(tree: Path, env: dict[str, str]) -> list[float]:
    """The CPU milliseconds of each of STEPS in a fresh interpreter loading ``tree``'s masker."""
    command = [sys.executable, "-c", CHILD, str(masker(tree)), PLAIN, SECRET]
    out = subprocess.run(command, env=env, cwd="/", capture_output=True, text=True, check=True).stdout
    return [float(figure) for figure in out.split()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the other checkout (its brain/ledger/redact.py)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--max-ratio", type=float, help="exit 1 unless this import's CPU is at most this times --old's")
    args = parser.parse_args()
    if masker(args.old) is None:
        parser.exit(2, f"mask_import.py: --old {args.old}: no brain/ledger/redact.py nor redact/ there\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    trees = {"old": args.old.resolve(), "this": HERE}
    runs: dict[str, list[list[float]]] = {name: [] for name in trees}
    for tree in trees.values():
        one_run(tree, env)  # writes the bytecode
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(one_run(tree, env))
    medians = {name: [statistics.median(run[i] for run in runs[name]) for i in range(len(STEPS))] for name in trees}
    print(f"CPU ms, median of {args.rounds} fresh processes each, interleaved")
    print(f"{'step':<24}{'old':>8}{'this':>8}{'ratio':>8}")
    for i, step in enumerate(STEPS):
        old, new = medians["old"][i], medians["this"][i]
        print(f"{step:<24}{old:>8.2f}{new:>8.2f}{new / old:>8.2f}")
    old_total, new_total = sum(medians["old"]), sum(medians["this"])
    print(f"{'all three':<24}{old_total:>8.2f}{new_total:>8.2f}{new_total / old_total:>8.2f}")
    ratio = medians["this"][0] / medians["old"][0]
    return 1 if args.max_ratio is not None and ratio > args.max_ratio else 0


if __name__ == "__main__":
    sys.exit(main())
