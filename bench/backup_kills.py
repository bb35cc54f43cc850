"""`brain backup` killed (kill -9) at random moments, then taken whole, while three writers run.

A copy of the vault given is indexed into a brain home of its own under ``--dir`` (the embedder
BRAIN_EMBED_MODEL names). Then:

1. ``--kills`` backups, each in a process of its own (steps of ``--step-pages`` pages, so that a
   kill lands in the copy as often as before or after it), each killed with SIGKILL at a moment
   drawn uniformly from the time a whole one takes, nothing else running. After each: no DEST,
   at most the killed backup's hidden folder beside it, and every file of the live home as it
   was (its bytes; the ``-shm`` files, SQLite's shared memory, left aside).
2. The same kills while three writers run: an indexing pass over and over (a note rewritten each
   round, as `brain serve`'s watcher indexes), a `brain ask` storm (asks that bring the index up
   to the vault first), and the Stop hook recording turns (`brain hook stop`, a process each).
3. A backup to the same place as the killed ones, under the same writers: it removes their
   folders, and its copy passes ``PRAGMA integrity_check``, FTS5's integrity-check on both BM25
   indexes and brain's own check, holds every turn recorded before it began, and serves
   `brain ask` and `brain turns` as a brain home.

    BRAIN_EMBED_MODEL=... python bench/backup_kills.py --vault toy_vault --dir /tmp/bk --kills 30

It prints one line per kill and what the checks found; it exits 1 when one failed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

BACKUP = """
import sys
from brain.backup import backup
backup(sys.argv[1], step_pages=int(sys.argv[2]))
"""

INDEXER = """
import sys, time
from pathlib import Path
from brain.index.indexer import index_vault
vault, stop = Path(sys.argv[1]), Path(sys.argv[2])
n = 0
while not stop.exists():
    n += 1
    (vault / "Churn.md").write_text(f"# Churn\\n\\nround {n}: " + "words that change " * (n % 7 + 1) + "\\n")
    index_vault(vault, progress=False)
    Path(sys.argv[3]).write_text(str(n))
print(n)
"""

# With --serve: `brain serve` runs on the vault and its watcher indexes a note rewritten every 0.3 s.
CHURNER = """
import sys, time
from pathlib import Path
vault, stop = Path(sys.argv[1]), Path(sys.argv[2])
n = 0
while not stop.exists():
    n += 1
    (vault / "Churn.md").write_text(f"# Churn\\n\\nround {n}: " + "words that change " * (n % 7 + 1) + "\\n")
    Path(sys.argv[3]).write_text(str(n))
    time.sleep(0.3)
print(n)
"""

ASKER = """
import sys, io, contextlib
from pathlib import Path
from brain.cli import cli
vault, stop = sys.argv[1], Path(sys.argv[2])
n = 0
while not stop.exists():
    n += 1
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.main(["ask", "--vault", vault, "-k", "3", f"write ahead log round {n}"], standalone_mode=False)
        except SystemExit:
            pass
    Path(sys.argv[3]).write_text(str(n))
print(n)
"""


def run_brain(args: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "brain", *args], env=env, input=stdin, capture_output=True, text=True, timeout=600
    )


def home_state(home: Path) -> dict[str, str]:
    """Each file of the home and its bytes' hash; SQLite's shared-memory files left aside."""
    state = {}
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.name.endswith("-shm"):
            state[str(path.relative_to(home))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def hidden(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.parent.iterdir() if p.name.startswith(f".{dest.name}.brain-backup-"))


def killed_backup(dest: Path, step_pages: int, delay: float, env: dict[str, str]) -> str:
    """A backup killed after ``delay`` seconds: how far it got (made DEST / its folder / nothing)."""
    child = subprocess.Popen([sys.executable, "-c", BACKUP, str(dest), str(step_pages)], env=env)
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    if child.returncode != -signal.SIGKILL:
        return "ended before the kill"
    return "hidden folder left" if hidden(dest) else "killed before its folder"


def sound(copy: Path) -> list[str]:
    from brain.index.files import INDEX_FILE
    from brain.index.health import integrity_problem
    from brain.index.store import IndexStore

    problems = []
    for path in sorted(copy.rglob("*.db")):
        db = sqlite3.connect(path, isolation_level=None)
        try:
            verdict = db.execute("PRAGMA integrity_check").fetchall()
            if verdict != [("ok",)]:
                problems.append(f"{path}: {verdict[:3]}")
            if path.name == INDEX_FILE:
                for table in IndexStore.SEARCH_INDEXES:
                    try:
                        db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
                    except sqlite3.DatabaseError as exc:
                        problems.append(f"{path}: {table}: {exc}")
        finally:
            db.close()
        if path.name == INDEX_FILE:
            problem = integrity_problem(path.parent)
            if problem:
                problems.append(f"{path}: {problem}")
    return problems


def turn_keys(ledger: Path) -> set[str]:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    try:
        return {row[0] for row in db.execute("SELECT turn_key FROM turns")}
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=ROOT / "toy_vault")
    parser.add_argument("--dir", type=Path, required=True, help="a folder for the home, the vault's copy, the backups")
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--step-pages", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", action="store_true", help="brain serve's passes as the indexing writer")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = args.dir.resolve()
    if work.exists():
        shutil.rmtree(work)
    home, vault, backups = work / "home", work / "vault", work / "backups"
    shutil.copytree(args.vault, vault, ignore=shutil.ignore_patterns(".obsidian", ".git"))
    backups.mkdir(parents=True)
    env = {**os.environ, "BRAIN_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("BRAIN_DB", None)
    built = run_brain(["index", "--vault", str(vault)], env)
    assert built.returncode == 0, built.stderr
    hook = {"session_id": "bench", "hook_event_name": "Stop", "transcript_path": str(work / "none.jsonl")}
    recorded = run_brain(["hook", "stop"], env, json.dumps(hook))
    assert recorded.returncode == 0, recorded.stderr
    failures: list[str] = []

    began = time.perf_counter()
    whole = subprocess.run([sys.executable, "-c", BACKUP, str(backups / "whole"), str(args.step_pages)], env=env)
    took = time.perf_counter() - began
    assert whole.returncode == 0
    shutil.rmtree(backups / "whole")
    print(f"a whole backup in a process of its own: {took:.2f}s; kills drawn in [0, {took:.2f}] s")

    def kills(label: str, dest: Path, check_home: bool) -> None:
        nonlocal took
        outcomes: dict[str, int] = {}
        for n in range(args.kills):
            before = home_state(home) if check_home else {}
            outcome = killed_backup(dest, args.step_pages, rng.uniform(0, took), env)
            if dest.exists():  # made whole before the kill landed (or after the rename)
                if outcome != "ended before the kill":
                    outcome = "killed after the rename"
                failures.extend(f"{label} kill {n}: {problem}" for problem in sound(dest))
                shutil.rmtree(dest)
            if len(hidden(dest)) > 1:
                failures.append(f"{label} kill {n}: {hidden(dest)}: a killed backup's folder was not removed")
            if check_home and home_state(home) != before:
                after = home_state(home)
                changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
                failures.append(f"{label} kill {n}: the live home changed: {changed}")
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        print(f"{label}: {args.kills} kills: " + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items())))

    kills("quiet", backups / "quiet", check_home=True)

    stop = work / "stop"
    counts = [work / "indexed", work / "asked"]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(vault), str(stop), str(count)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for code, count in zip((CHURNER if args.serve else INDEXER, ASKER), counts)
    ]
    server = None
    if args.serve:
        server = subprocess.Popen(
            [sys.executable, "-m", "brain", "serve", "--vault", str(vault)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    hooks = 0
    try:
        import threading

        def stop_hooks() -> None:
            nonlocal hooks
            while not stop.exists():
                hooks += 1
                run_brain(["hook", "stop"], env, json.dumps({**hook, "session_id": f"bench-{hooks}"}))

        hooker = threading.Thread(target=stop_hooks)
        hooker.start()
        while not all(count.exists() for count in counts):  # the writers at work, their models loaded
            time.sleep(0.5)
        began = time.perf_counter()
        whole = subprocess.run([sys.executable, "-c", BACKUP, str(backups / "whole"), str(args.step_pages)], env=env)
        took = time.perf_counter() - began
        assert whole.returncode == 0
        failures.extend(f"a whole backup under the writers: {problem}" for problem in sound(backups / "whole"))
        shutil.rmtree(backups / "whole")
        print(f"a whole backup under the writers: {took:.2f}s; kills drawn in [0, {took:.2f}] s")
        kills("three writers", backups / "busy", check_home=False)
        keys_before = turn_keys(home / "brain.db")
        result = run_brain(["backup", str(backups / "busy")], env)
        if result.returncode != 0:
            failures.append(f"the backup after the kills: {result.stderr.strip()}")
    finally:
        stop.touch()
        rounds = [w.communicate(timeout=600)[0].decode().strip() for w in writers]
        hooker.join()
        if server is not None:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
    passes = "notes rewritten under brain serve" if args.serve else "indexing passes"
    print(f"writers meanwhile: {rounds[0]} {passes}, {rounds[1]} asks, {hooks} Stop hooks")
    copy = backups / "busy"
    if hidden(copy):
        failures.append(f"the killed backups' folders are still there: {hidden(copy)}")
    if copy.is_dir():
        failures.extend(sound(copy))
        missing = keys_before - turn_keys(copy / "brain.db")
        if missing:
            failures.append(f"{len(missing)} turns recorded before the backup began are not in it")
        copied_env = {**env, "BRAIN_HOME": str(copy)}
        asked = run_brain(["ask", "--vault", str(vault), "--no-update", "--json", "write ahead log"], copied_env)
        turns = run_brain(["turns", "--json", "-n", "5"], copied_env)
        if asked.returncode or not json.loads(asked.stdout)["results"]:
            failures.append(f"brain ask on the copy: {asked.stderr.strip()}")
        if turns.returncode:
            failures.append(f"brain turns on the copy: {turns.stderr.strip()}")
        print(f"the backup under the writers: {len(turn_keys(copy / 'brain.db'))} turns; checks: ", end="")
    print("; ".join(failures) if failures else "all held")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
