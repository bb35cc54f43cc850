"""What looking for a dropped table costs `brain status` (a figure, not a test).

Each run is a fresh process (what a `brain status` pays): it opens the index database given,
read-only, and prints the time of its first ``missing_tables`` (the tables of a current index
read from ``schema.LATEST_TABLES``) and of ``Migrations.tables_made`` (every migration run in
memory, what it read before; m015 imports numpy), median and max of the runs.

    python bench/missing_tables_cost.py PATH/TO/index.db [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = """
import sqlite3, sys, time
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import missing_tables
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
a = time.perf_counter(); missing = missing_tables(conn); b = time.perf_counter()
INDEX_MIGRATIONS.tables_made(); c = time.perf_counter()
print(b - a, c - b, len(missing))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    first, replay = [], []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", CHILD, args.database], capture_output=True, text=True, check=True)
        lookup, made, missing = out.stdout.split()
        first.append(float(lookup) * 1000)
        replay.append(float(made) * 1000)
    print(f"{args.database}: {missing} tables missing; {args.runs} fresh processes")
    print(f"  missing_tables, first call:           median {statistics.median(first):.2f} ms, max {max(first):.2f} ms")
    print(
        f"  the migrations run in memory (before): median {statistics.median(replay):.1f} ms, max {max(replay):.1f} ms"
    )


if __name__ == "__main__":
    main()
