"""What one note whose parse raises (a bug of brain's: ``parse-error``) costs each `brain ask`.

A copy of ``--vault`` (the toy vault by default) in a temporary folder, indexed in a temporary
``BRAIN_HOME`` by a brain whose ``parse_note`` raises for one note (its first by path, or
``--note``): the note is skipped as ``parse-error``. Then ``--repeat`` runs of
``brain ask --no-server --no-rerank --json`` by that same brain, each a process of its own, and
the script prints their wall time (median and min) and how many ran an index pass (the index's
``indexed_at`` moved); then, in one process of that brain, the time of ``open_recaller`` alone
(what `brain ask` does before its question: the check for changed notes, and the index pass it
runs when it counts one; the model is not loaded), median and min of ``--repeat``; and `brain
status`'s pending count.
The brain is whichever ``brain`` package ``PYTHONPATH`` leads to: run it against two trees to
compare them.

    BRAIN_EMBED_MODEL=/path/to/model HF_HUB_OFFLINE=1 PYTHONPATH=. python bench/parse_error_ask.py
    ... python bench/parse_error_ask.py --vault ../shared/bench/vaults/13th-age-srd --repeat 7
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

# `brain` with parse_note raising for one note (argv[1]), the rest of argv the CLI's; or, for
# `open VAULT N`, open_recaller timed N times
BROKEN_BRAIN = (
    "import sys\n"
    "from brain.index import parsing\n"
    "real, broken = parsing.parse_note, sys.argv.pop(1)\n"
    "def parse_note(path, *a, **k):\n"
    "    if path == broken: raise ValueError('a bug met in ' + path)\n"
    "    return real(path, *a, **k)\n"
    "parsing.parse_note = parse_note\n"
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


def brain(note: str, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(  # run in BRAIN_HOME: `python -c` imports from its folder before PYTHONPATH
        [sys.executable, "-c", BROKEN_BRAIN, note, *args],
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
    parser.add_argument("--note", help="the note whose parse raises (vault-relative); the first by path if not given")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--query", default="what happened at the meeting")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="parse-error-ask-") as work:
        vault = Path(work) / "vault"
        shutil.copytree(args.vault, vault, symlinks=True)
        notes = [p.relative_to(vault) for p in vault.rglob("*.md")]
        note = args.note or str(min(p for p in notes if not any(part.startswith(".") for part in p.parts)))
        os.environ.update(BRAIN_HOME=str(Path(work) / "home"), BRAIN_PARSE_WORKERS="0")
        os.mkdir(os.environ["BRAIN_HOME"])
        took, done = brain(note, "index", "--vault", str(vault), "--quiet")
        package = subprocess.run(
            [sys.executable, "-c", "import brain; print(brain.__file__)"],
            capture_output=True,
            text=True,
            cwd=os.environ["BRAIN_HOME"],
        )
        print(f"brain: {Path(package.stdout.strip()).parent}")
        print(f"vault: {args.vault.name} ({len(notes)} files .md), the note: {note}")
        print(f"index: {took:.2f} s")
        _, done = brain(note, "status", "--vault", str(vault), "--json")
        database = Path(json.loads(done.stdout)["index_dir"]) / "index.db"
        times, passes = [], 0
        for _ in range(args.repeat):
            before = indexed_at(database)
            took, done = brain(note, "ask", "--vault", str(vault), "--no-server", "--no-rerank", "--json", args.query)
            times.append(took)
            passes += indexed_at(database) != before
        _, done = brain(note, "status", "--vault", str(vault), "--json")
        status = json.loads(done.stdout)
        print(f"brain ask --no-server over {args.repeat}: {passes} ran an index pass")
        print(f"  wall: median {statistics.median(times):.3f} s, min {min(times):.3f} s")
        _, done = brain(note, "open", str(vault), str(args.repeat))
        median, least = (float(value) for value in done.stdout.split())
        print(f"open_recaller (check and update) in one process: median {median:.3f} s, min {least:.3f} s")
        print(f"brain status: pending {sum(status['pending'].values())}, skipped as parse-error:", end=" ")
        print(sum(1 for s in status["skipped"] if s["reason"] == "parse-error"))


if __name__ == "__main__":
    main()
