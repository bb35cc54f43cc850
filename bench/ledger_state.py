"""What the ledger figures cost `brain status` and MCP ``status``: ``ledger_state`` over a ledger of N turns.

Fills a brain database with ``--turns`` turns (``--keep PATH`` keeps it, and a later run with the
same path reuses it), then times, interleaved run by run: ``ledger_state`` in this process, and
``brain status`` as a whole process on an empty vault with that ledger and with none (its ledger
figures are the difference). No index, no model: the ledger alone is measured.

    python bench/ledger_state.py [--turns 1000000] [--runs 8] [--keep PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from brain.db import open_db  # noqa: E402
from brain.ledger.state import ledger_state  # noqa: E402


def fill(db: Path, turns: int) -> None:
    conn = open_db(db)
    try:
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO turns (turn_key, session_id, started_at, created_at, updated_at, ask, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    f"k{i}",
                    f"s{i // 100}",
                    time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_700_000_000 + i * 60)),
                    time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_700_000_000 + i * 60 + 30)),
                    time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_700_000_000 + i * 60 + 30)),
                    "how does the parser retry the kafka backoff " * 4,
                    "changed the retry loop " * 20,
                )
                for i in range(turns)
            ),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--keep", type=Path, help="the database to fill, or reuse when it is there")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="brain-ledger-state-"))
    try:
        run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the ledger too, unless --keep put it elsewhere


def run(args: argparse.Namespace, tmp: Path) -> None:
    db = args.keep or tmp / "brain.db"
    if not db.exists():
        started = time.perf_counter()
        fill(db, args.turns)
        print(f"filled {args.turns:,} turns in {time.perf_counter() - started:.1f} s")
    vault = tmp / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n", encoding="utf-8")
    env = dict(os.environ, BRAIN_HOME=str(tmp / "home"), PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "brain", "status", "--vault", str(vault)]
    times: dict[str, list[float]] = {"ledger_state() in process": [], "brain status, no ledger": [], "brain status": []}
    for _ in range(args.runs):
        started = time.perf_counter()
        state = ledger_state(db)
        times["ledger_state() in process"].append(time.perf_counter() - started)
        for name, ledger in (("brain status, no ledger", tmp / "none.db"), ("brain status", db)):
            started = time.perf_counter()
            subprocess.run(argv, env={**env, "BRAIN_DB": str(ledger)}, check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    print(f"{state['ledger_turns']:,} turns, {db.stat().st_size / 1e6:,.0f} MB; load {os.getloadavg()[0]:.1f}")
    for name, values in times.items():
        print(f"  {name:28} p50 {statistics.median(values) * 1000:8.1f} ms   max {max(values) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
