"""What looking for a dropped table costs `brain status` and each index pass (a figure, not a test).

Each run is a fresh process (what a `brain status` pays): it opens the index database given,
read-only, and prints the time of its first ``missing_tables`` (the tables of a current index
read from ``schema.LATEST_TABLES``) and of ``Migrations.tables_made`` (every migration run in
memory, what it read before; m015 imports numpy), median and max of the runs.

With ``--vault`` (the vault of that index, BRAIN_HOME set as when it was built), each run also
times what an index pass pays for it (``missing_tables_message`` on the store the pass opened,
before it changes anything) beside the whole pass, one with nothing to index (`brain index`).

    python bench/missing_tables_cost.py PATH/TO/index.db [--vault VAULT] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = """
import sqlite3, sys, time
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.health import missing_tables
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
a = time.perf_counter(); missing = missing_tables(conn); b = time.perf_counter()
INDEX_MIGRATIONS.tables_made(); c = time.perf_counter()
print(b - a, c - b, len(missing))
"""

PASS = """
import sys, time
from pathlib import Path
from brain import config
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
root = Path(sys.argv[1]).resolve()
store = IndexStore.open(config.index_dir(root))
a = time.perf_counter(); store.missing_tables_message(root); b = time.perf_counter()
store.close()
index_vault(root, progress=False); c = time.perf_counter()
print(b - a, c - b)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("--vault", help="the vault of that index: time the check inside an index pass too")
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
    if args.vault:
        check, whole = [], []
        for _ in range(args.runs):
            out = subprocess.run([sys.executable, "-c", PASS, args.vault], capture_output=True, text=True, check=True)
            took, passed = out.stdout.split()
            check.append(float(took) * 1000)
            whole.append(float(passed) * 1000)
        print(
            f"  an index pass's check (store open):     median {statistics.median(check):.2f} ms,"
            f" max {max(check):.2f} ms; the pass, nothing to index: median {statistics.median(whole):.0f} ms"
        )


if __name__ == "__main__":
    main()
