"""What a vault crafted to hurt costs where brain matched it with a backtracking pattern, before
and after: both expressions are at hand, so each row times the old one against what brain runs.

- ``inline code``: a line of runs of 1, 2, ... n backticks, each then a letter, masked by the
  pattern ``links.mask_code`` used, ``(`+)(?:(?!\\1).)+?\\1``, and by ``mask_code`` now;
- ``brainignore``: the line ``*a*a*...*b`` (``--stars`` of them) against a file name of n a's,
  matched by pathspec's own expression and by ``ignore_rules.defused``'s.

The old times grow by ten and more with each step: a table stops timing the old way once a
step would take over ``--give-up`` seconds (a name of more than 30 a's is never tried so).

    python bench/hostile_patterns.py [--stars 16] [--give-up 20]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pathspec

from brain.ignore_rules import defused
from brain.links import mask_code

OLD_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stars", type=int, default=16, help="the `*`s of the .brainignore line")
    parser.add_argument("--give-up", type=float, default=20.0, help="stop timing the old way past this (s)")
    args = parser.parse_args()

    print(f"{'inline code: runs':>24} {'KB':>7} {'old':>9} {'now':>9}")
    old_done = False
    for runs in (250, 500, 1000, 2000, 4000):
        line = "".join("`" * n + "x" for n in range(1, runs))
        old = "-" if old_done else f"{seconds(lambda line=line: OLD_INLINE_CODE.sub(blank, line)):.3f}s"
        old_done = old_done or (old != "-" and float(old[:-1]) > args.give_up / 10)  # x13 a step
        print(f"{runs:>24,} {len(line) // 1024:>7,} {old:>9} {seconds(lambda line=line: mask_code(line)):.5f}s")

    line = "*a" * (args.stars - 1) + "*b"
    regex = pathspec.GitIgnoreSpec.from_lines([line]).patterns[0].regex
    safe = re.compile(defused(regex.pattern), regex.flags)
    print(f"\n{'brainignore: a name of':>24} {'':>7} {'old':>9} {'now':>9}   ({line})")
    old_done = False
    for length in (16, 20, 22, 24, 26, 28, 30, 40, 255):
        name = "a" * length + ".md"
        # the old time about doubles with each a: 40 would take hours
        old = "-" if old_done or length > 30 else f"{seconds(lambda name=name: regex.match(name)):.3f}s"
        old_done = old_done or (old != "-" and float(old[:-1]) > args.give_up / 4)
        print(f"{length:>24} {'':>7} {old:>9} {seconds(lambda name=name: safe.match(name)):.5f}s")


if __name__ == "__main__":
    main()
