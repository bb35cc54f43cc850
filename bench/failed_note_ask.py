"""What notes that fail cost each `brain ask`: a parse that raises (a bug of brain's:
``parse-error``), or a read that fails (EIO: ``read-error``).

A copy of ``--vault`` (the toy vault by default) in a temporary folder, indexed in a temporary
``BRAIN_HOME`` by a brain whose ``parse_note`` raises (``--fault parse``), or whose ``os.open``
fails with EIO (``--fault read``), for ``--count`` notes (the first by path, or ``--note``): each
is skipped as ``parse-error`` or ``read-error``. Then ``--repeat`` runs of
``brain ask --no-server --no-rerank --json`` by that same brain, each a process of its own, and
the script prints their wall time (median and min) and how many ran an index pass (the index's
``indexed_at`` moved); then, in one process of that brain, the time of ``open_recaller`` alone
(what `brain ask` does before its question: the check for changed notes, and the index pass it
runs when it counts one; the model is not loaded), median and min of ``--repeat``; and `brain
status`'s pending count.
The brain is whichever ``brain`` package ``PYTHONPATH`` leads to: run it against two trees to
compare them.

    BRAIN_EMBED_MODEL=/path/to/model HF_HUB_OFFLINE=1 PYTHONPATH=. python bench/failed_note_ask.py
    ... python bench/failed_note_ask.py --vault ../shared/bench/vaults/13th-age-srd --fault read --count 50
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOY_VAULT = Path(__file__).resolve().parents[1] / "toy_vault"

# `brain` whose parse_note raises (BENCH_FAULT=parse), or whose os.open fails with EIO
# (BENCH_FAULT=read), for the notes of BENCH_NOTES (one vault-relative path a line); argv the
# CLI's, or, for `open VAULT N`, open_recaller timed N times
BROKEN_BRAIN = (
    "import errno, os, sys\n"
    "from brain.index import parsing\n"
    "broken = set(os.environ['BENCH_NOTES'].splitlines())\n"
    "if os.environ['BENCH_FAULT'] == 'parse':\n"
    "    real = parsing.parse_note\n"
    "    def parse_note(path, *a, **k):\n"
    "        if path in broken: raise ValueError('a bug met in ' + path)\n"
    "        return real(path, *a, **k)\n"
    "    parsing.parse_note = parse_note\n"
    "else:\n"
    "    vault, real_open = os.environ['BENCH_VAULT'], os.open\n"
    "    failing = {os.path.join(vault, path) for path in broken}\n"
    "    def open_or_fail(path, *a, **k):\n"
    "        if os.fspath(path) in failing: raise OSError(errno.EIO, 'Input/output error', path)\n"
    "        return real_open(path, *a, **k)\n"
    "    os.open = open_or_fail\n"
    "if sys.argv[1] != 'open':\n"
    "    from brain.__main__ import main\n"
    "    main()\n"
    "    sys.exit()\n"
    "import statistics, time\n"
    "from brain.recall.opening import open_recaller\n"
    "times = []\n"
    "for _ in range(int(sys.argv[3])):\n"
    "    started = time.perf_counter()\n"
    "    open_recaller(sys.argv[2], rerank_model=False).close()\n"
    "    times.append(time.perf_counter() - started)\n"
    "print(statistics.median(times), min(times))\n"
)


def brain(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(  # run in BRAIN_HOME: `python -c` imports from its folder before PYTHONPATH
        [sys.executable, "-c", BROKEN_BRAIN, *args],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        cwd=os.environ["BRAIN_HOME"],
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"brain {' '.join(args)} failed: {done.stderr.strip()}")
    return took, done


def indexed_at(database: Path) -> str:
    """When the last index run completed (meta ``indexed_at``), read without writing."""
    with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as conn:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'indexed_at'").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, default=TOY_VAULT)
    parser.add_argument("--fault", choices=("parse", "read"), default="parse")
    parser.add_argument("--count", type=int, default=1, help="how many notes fail (the first by path)")
    parser.add_argument("--note", help="the note that fails (vault-relative), with --count 1")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--query", default="what happened at the meeting")
    parser.add_argument(
        "--work",
        type=Path,
        help="a folder kept for the next run: its copy of the vault and its index are used again (the"
        " first build of a large vault is the slow part); a temporary one if not given",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="failed-note-ask-")))
        vault = Path(work) / "vault"
        if not vault.exists():
            shutil.copytree(args.vault, vault, symlinks=True)
        notes = [p.relative_to(vault) for p in vault.rglob("*.md")]
        visible = sorted(str(p) for p in notes if not any(part.startswith(".") for part in p.parts))
        broken = [args.note] if args.note else visible[: args.count]
        os.environ.update(
            BRAIN_HOME=str(Path(work) / "home"),
            BRAIN_PARSE_WORKERS="0",
            BENCH_FAULT=args.fault,
            BENCH_NOTES="\n".join(broken),
            BENCH_VAULT=str(vault),
        )
        os.makedirs(os.environ["BRAIN_HOME"], exist_ok=True)
        took, done = brain("index", "--vault", str(vault), "--quiet")
        package = subprocess.run(
            [sys.executable, "-c", "import brain; print(brain.__file__)"],
            capture_output=True,
            text=True,
            cwd=os.environ["BRAIN_HOME"],
        )
        reason = f"{args.fault}-error"
        print(f"brain: {Path(package.stdout.strip()).parent}")
        named = broken[0] + (f" and {len(broken) - 1} more" if len(broken) > 1 else "")
        print(f"vault: {args.vault.name} ({len(notes)} files .md), failing ({reason}): {named}")
        print(f"index: {took:.2f} s" + (" (into the index --work kept)" if args.work else ""))
        _, done = brain("status", "--vault", str(vault), "--json")
        database = Path(json.loads(done.stdout)["index_dir"]) / "index.db"
        times, passes = [], 0
        for _ in range(args.repeat):
            before = indexed_at(database)
            took, done = brain("ask", "--vault", str(vault), "--no-server", "--no-rerank", "--json", args.query)
            times.append(took)
            passes += indexed_at(database) != before
        _, done = brain("status", "--vault", str(vault), "--json")
        status = json.loads(done.stdout)
        print(f"brain ask --no-server over {args.repeat}: {passes} ran an index pass")
        print(f"  wall: median {statistics.median(times):.3f} s, min {min(times):.3f} s")
        _, done = brain("open", str(vault), str(args.repeat))
        median, least = (float(value) for value in done.stdout.split())
        print(f"open_recaller (check and update) in one process: median {median:.3f} s, min {least:.3f} s")
        print(f"brain status: pending {sum(status['pending'].values())}, skipped as {reason}:", end=" ")
        print(sum(1 for s in status["skipped"] if s["reason"] == reason))


if __name__ == "__main__":
    main()
