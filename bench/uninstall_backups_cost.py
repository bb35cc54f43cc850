"""What reading brain's backups costs `brain mcp uninstall --user` on a large ~/.claude.json (a figure, not a test).

Uninstall compares the file with up to ``BACKUPS_READ`` of brain's backups of it, newest first
(``ledger.install.settle``), to give back the bytes one holds or tell which empty key install
made. Claude Code keeps every project's history in ~/.claude.json, which grows to megabytes.
This writes such a file (``--mb``), installs brain's server into it ``--installs`` times (each
install after the first an update, so each leaves a backup), changes the file the way Claude
Code does (no backup then equals it: every backup is read), and prints the median time of an
uninstall beside that of an install, and of an uninstall with no backup to read, over ``--runs``.

    python bench/uninstall_backups_cost.py [--mb 10] [--installs 6] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=10)
    parser.add_argument("--installs", type=int, default=6)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ["BRAIN_HOME"] = tempfile.mkdtemp(prefix="brain-bench-home-")
    from brain.ledger.install import BACKUPS_READ, backups_of
    from brain.mcp import install as setup

    projects = int(args.mb * 1e6 / 1_950)  # each project's entry of this shape, about 1.95 KB
    history = [{"display": f"fix the build, step {j}", "pastedContents": {}} for j in range(20)]
    data = {
        "numStartups": 1,
        "projects": {
            f"/home/me/p{i}": {"history": history, "allowedTools": [], "lastCost": 0.5} for i in range(projects)
        },
    }
    size = 0.0
    timings: dict[str, list[float]] = {"install": [], "uninstall, backups read": [], "uninstall, no backup": []}
    for _ in range(args.runs):
        folder = Path(tempfile.mkdtemp(prefix="brain-bench-"))
        path = folder / ".claude.json"
        path.write_text(json.dumps(data, indent=2))
        for n in range(args.installs):
            entry = {"type": "stdio", "command": "/opt/brain/bin/brain", "args": ["mcp", "--vault", f"/v{n}"]}
            start = time.perf_counter()
            setup.install(path, entry)
            timings["install"].append(time.perf_counter() - start)
        changed = json.loads(path.read_text())
        changed["numStartups"] = 2  # Claude Code's write since: no backup equals the file now
        path.write_text(json.dumps(changed, indent=2))
        read = len(backups_of(path)[:BACKUPS_READ])
        start = time.perf_counter()
        setup.uninstall(path)
        timings["uninstall, backups read"].append(time.perf_counter() - start)
        for backup in backups_of(path):
            backup.unlink()
        setup.install(path, entry)
        for backup in backups_of(path):
            backup.unlink()
        start = time.perf_counter()
        setup.uninstall(path)
        timings["uninstall, no backup"].append(time.perf_counter() - start)
        size = path.stat().st_size / 1e6
        shutil.rmtree(folder)
    shutil.rmtree(os.environ["BRAIN_HOME"])
    print(f"~/.claude.json of {size:.1f} MB, {read} backups read (BACKUPS_READ {BACKUPS_READ}), {args.runs} runs")
    for name, values in timings.items():
        print(f"  {name:<24} median {statistics.median(values):.2f} s, max {max(values):.2f} s")


if __name__ == "__main__":
    main()
