"""The CPU time of chunking a long note of prose (``chunking.chunk_note``'s sections, ``links.outline``
within), a heading every N lines, under this checkout and, with ``--old DIR``, another's
(``git archive main | tar -x -C DIR``), runs interleaved, the best of each and their ratio.

    python bench/outline_speed.py [--lines 100000] [--every 10 2] [--old DIR] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import sys, time
from brain.chunking import chunk_note
lines, every = int(sys.argv[1]), int(sys.argv[2])
# a heading every N lines, ATX ("## Heading") and setext ("Heading" over "---") by turns
body = "\\n".join(
    ("## Heading %d" % i if (i // every) % 2 else "\\nHeading %d\\n---" % i)
    if i % every == 0
    else "some words of a paragraph, line %d" % i
    for i in range(lines)
)
chunk_note(body[:1000])  # the first call's imports and compiled patterns are no part of it
best = None
for _ in range(3):
    start = time.process_time()
    chunk_note(body)
    spent = time.process_time() - start
    best = spent if best is None else min(best, spent)
print(best)
"""


def _time(checkout: str, lines: int, every: int) -> float:
    # run in the checkout: "-c" puts the working folder first on sys.path, before PYTHONPATH
    env = {**os.environ, "PYTHONPATH": checkout}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(lines), str(every)],
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--every", type=int, nargs="+", default=[10, 2])
    parser.add_argument("--old", help="another brain's checkout to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    result = {}
    for every in args.every:
        new: list[float] = []
        old: list[float] = []
        for _ in range(args.rounds):  # interleaved: the machine's load falls on both alike
            new.append(_time(here, args.lines, every))
            if args.old:
                old.append(_time(args.old, args.lines, every))
        row = {"new_s": round(min(new), 3)}
        if old:
            row |= {"old_s": round(min(old), 3), "ratio": round(min(new) / min(old), 2)}
        result[f"every {every} lines"] = row
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
