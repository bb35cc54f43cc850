"""CPU of the Stop hook's look back for turns no Stop recorded (a figure, not a test).

Replays each real transcript in ../shared/fixtures/claude-code/ as a session: the file grows
turn by turn (cut at each prompt) and ``record_stop`` runs after each turn, in this process,
into a fresh database. Three ways, interleaved round by round: the look back off (the hook
before it), on with every Stop recorded (the common Stop: one query, the few lines between the
last row and the prompt), and on with every other Stop lost (each Stop that follows a lost one
records it). Prints CPU seconds per Stop and the ratios.

    python bench/hook_backfill_cost.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from brain.ledger import hook
from brain.ledger.transcript import prompt_text

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "claude-code"


def _prompt_starts(data: bytes) -> list[int]:
    starts, pos = [], 0
    for line in data.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and prompt_text(record) is not None:
            starts.append(pos)
        pos += len(line) + 1
    return starts


def replay(source: Path, work: Path, mode: str) -> tuple[float, int, int]:
    """CPU seconds of the Stops run, how many ran, and the rows recorded."""
    data = source.read_bytes()
    cuts = [*_prompt_starts(data)[1:], len(data)]
    path, db = work / source.name, work / f"{mode}.db"
    db.unlink(missing_ok=True)
    real = hook.backfill
    if mode == "off":
        hook.backfill = lambda *a, **k: 0  # type: ignore[assignment]
    cpu, stops = 0.0, 0
    try:
        for i, cut in enumerate(cuts):
            path.write_bytes(data[:cut])
            if mode == "lost" and i % 2 == 1 and i != len(cuts) - 1:
                continue  # this turn's Stop never ran
            # no session id: the transcript's own (a look back stops at another session's lines)
            payload = {"transcript_path": str(path), "cwd": str(work), "hook_event_name": "Stop"}
            t0 = time.process_time()
            hook.record_stop(payload, db_path=db)
            cpu += time.process_time() - t0
            stops += 1
    finally:
        hook.backfill = real
    (rows,) = sqlite3.connect(db).execute("SELECT count(*) FROM turns").fetchone()
    return cpu, stops, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    totals = {m: [0.0, 0, 0] for m in ("off", "on", "lost")}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for _ in range(args.rounds):
            for source in sorted(FIXTURES.glob("*.jsonl")):
                for mode in totals:
                    cpu, stops, rows = replay(source, work, mode)
                    totals[mode][0] += cpu
                    totals[mode][1] += stops
                    totals[mode][2] += rows
    per = {m: t[0] / t[1] * 1000 for m, t in totals.items()}
    for mode, (_, stops, rows) in totals.items():
        print(f"{mode:5s} {stops:5d} Stops  {rows:5d} rows  {per[mode]:.2f} ms CPU per Stop")
    print(f"on/off (every Stop recorded): {per['on'] / per['off']:.3f}")
    print(f"lost/off (each Stop after a lost one records it too): {per['lost'] / per['off']:.3f}")


if __name__ == "__main__":
    main()
