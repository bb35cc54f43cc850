"""A hostile (or just busy) user against `brain serve`'s vault watcher, on a real server.

Starts `brain serve --detach` (bench/scale.py's ``benchfake:384`` embedder unless
``BRAIN_EMBED_MODEL`` says otherwise) on a copy of toy_vault/ in a work folder of its own, then
runs each scenario below against it. After each one it waits until `brain status --json`
through the server says fresh (the watcher not busy, nothing pending, nothing out of step),
which is the settle time printed; then it compares `brain ask --json` through the server with
a fresh `brain index` + `brain ask --no-server` of a copy of the vault made then, for a few
queries (the notes, in order), and the server's notes with the vault's. FAIL: the server
differs from the fresh index and from an in-process ask on its own index; DIFF: it answers as
its own index does in-process, and that index, built step by step, differs from a fresh one. The server's peak RSS
(VmHWM) is printed at the end. The server is stopped whatever happens.

    HF_HUB_OFFLINE=1 BRAIN_RERANK_MODEL=none nice python bench/watch_hostile.py [--only NAME,...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LAUNCH = (
    f"import sys; sys.path.insert(0, {str(HERE)!r}); from scale import _register; _register(); "
    "from brain.__main__ import main; sys.argv = ['brain'] + sys.argv[1:]; main()"
)
QUERIES = ["agent memory", "how do I cook pasta", "zettelkasten links", "storm note", "moved folder note 17"]


class Run:
    def __init__(self, work: Path):
        self.work = work
        self.vault = work / "vault"
        self.home = work / "home"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
        self.env.update(
            BRAIN_HOME=str(self.home),
            BRAIN_EMBED_MODEL=os.environ.get("BRAIN_EMBED_MODEL", "benchfake:384"),
            BRAIN_RERANK_MODEL="none",
            HF_HUB_OFFLINE="1",
            PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        )
        self.pid: int | None = None
        self.last_scores: list = []

    def brain(self, *args: str, home: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
        env = dict(self.env)
        if home is not None:
            env["BRAIN_HOME"] = str(home)
        return subprocess.run(
            [sys.executable, "-c", LAUNCH, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def start(self) -> None:
        done = self.brain("serve", "--vault", str(self.vault), "--detach")
        if done.returncode:
            raise SystemExit(f"brain serve --detach failed: {done.stderr.strip()}")
        self.pid = int(done.stdout.split("(pid ")[1].split(",")[0])
        print(done.stdout.strip(), flush=True)

    def stop(self) -> None:
        if self.pid is None:
            return
        self.brain("serve", "--vault", str(self.vault), "--stop", timeout=60)
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return
        os.kill(self.pid, signal.SIGKILL)

    def alive(self) -> bool:
        try:
            os.kill(self.pid or 0, 0)
        except ProcessLookupError:
            return False
        return True

    def status(self) -> dict:
        done = self.brain("status", "--vault", str(self.vault), "--json")
        if done.returncode:
            return {"error": done.stderr.strip()}
        return json.loads(done.stdout)

    def fresh(self, status: dict) -> bool:
        server = status.get("server") or {}
        watch = server.get("watch") or {}
        pending = status.get("pending") or {}
        return (
            server.get("state") == "ready"
            and not watch.get("busy")
            and not watch.get("pending")
            and not watch.get("gone")
            and not any(pending.values())
        )

    def settle(self, timeout: float = 600) -> float:
        """Seconds until status through the server says fresh (twice in a row, 1 s apart)."""
        started = time.monotonic()
        time.sleep(0.5)
        good = 0
        while time.monotonic() - started < timeout:
            if not self.alive():
                raise AssertionError("the server died")
            if self.fresh(self.status()):
                good += 1
                if good == 2:
                    return time.monotonic() - started - 1.0
                time.sleep(1.0)
                continue
            good = 0
            time.sleep(0.3)
        raise AssertionError(f"not fresh after {timeout} s: {json.dumps(self.status().get('server'))[:800]}")

    def rss_peak_mb(self) -> float:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def compare(self, name: str) -> list[str]:
        """Problems: asks through the server against a fresh index of a copy made now."""
        copy = self.work / f"copy-{name}"
        home = self.work / f"home-{name}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.vault, copy, symlinks=True)
        problems = []
        served = {q: self.ask(q, self.vault) for q in QUERIES}
        done = self.brain("index", "--vault", str(copy), "-q", home=home)
        if done.returncode:
            problems.append(f"fresh index failed: {done.stderr.strip()[-300:]}")
            return problems
        for q in QUERIES:
            fresh = self.ask(q, copy, home=home, no_server=True)
            if served[q] != fresh:
                fresh_scores = self.last_scores
                # the served index, in-process: is it the server, or the index built step by step?
                same = self.ask(q, self.vault, no_server=True) == served[q]
                problems.append(
                    ("(index: in-process on the served index answers as the server) " if same else "(server) ")
                    + f"{q!r}: served {served[q]} vs fresh {fresh}\n"
                    f"       fresh scores {fresh_scores}\n       in-process on the served index {self.last_scores}"
                )
        served_notes = self.status()["notes"]
        fresh_notes = json.loads(self.brain("status", "--vault", str(copy), "--json", home=home).stdout)["notes"]
        if served_notes != fresh_notes:
            problems.append(f"notes: served {served_notes} vs fresh {fresh_notes}")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
        return problems

    def ask(self, query: str, vault: Path, *, home: Path | None = None, no_server: bool = False) -> object:
        args = ["ask", "--vault", str(vault), "--json", "-k", "8", query]
        if no_server:
            args.append("--no-server")
        done = self.brain(*args, home=home)
        if done.returncode:
            return f"error: {done.stderr.strip()[-200:]}"
        data = json.loads(done.stdout)
        self.last_scores = [(r["path"], r["score"], r["lanes"]) for r in data["results"]]
        return [(r["path"], r.get("heading")) for r in data["results"]]


# ----- the scenarios ---------------------------------------------------------------------------


def atomic_saves(run: Run) -> None:
    """Editors' saves: temp + rename over; vim's backup-rename-write (note.md~ left); a swap file."""
    v = run.vault
    note = v / "AI" / "Agent memory.md"
    tmp = note.with_name(".Agent memory.md.tmp1234")
    tmp.write_text(note.read_text() + "\n\nAtomic save: storm petrel.\n")
    os.replace(tmp, note)
    # vim with backupcopy=no: rename the note to note.md~, write a new note.md, keep the backup
    other = v / "Cooking" / "Pasta.md" if (v / "Cooking" / "Pasta.md").exists() else next(v.glob("Cooking/*.md"))
    text = other.read_text()
    swap = other.with_name(f".{other.name}.swp")
    swap.write_bytes(b"b0VIM 9.0\0" * 100)
    os.rename(other, other.with_name(other.name + "~"))
    other.write_text(text + "\n\nVim save: storm kettle.\n")
    swap.unlink()
    # a 4913 probe file, as vim writes to test the folder is writable
    probe = other.with_name("4913")
    probe.write_text("")
    probe.unlink()


def case_rename(run: Run) -> None:
    v = run.vault
    os.rename(v / "PKM" / "Zettelkasten.md", v / "PKM" / "zettelkasten.md")


def make_moved_folder(run: Run) -> None:
    folder = run.vault / "Big"
    folder.mkdir()
    for i in range(500):
        (folder / f"Moved {i}.md").write_text(
            f"# Moved folder note {i}\n\nA note in a folder moved whole. [[Moved {i + 1}]]\n"
        )


def folder_moved(run: Run) -> None:
    """A folder of 500 notes renamed, then moved under another folder, in one go each."""
    os.rename(run.vault / "Big", run.vault / "Bigger")
    time.sleep(0.05)
    os.rename(run.vault / "Bigger", run.vault / "PKM" / "Big")


def folder_deleted_and_made_again(run: Run) -> None:
    """While a pass indexes 500 new notes, their folder is deleted and made again with others."""
    folder = run.vault / "Again"
    folder.mkdir()
    for i in range(500):
        (folder / f"First {i}.md").write_text(f"# First {i}\n\nThe first life of the folder, storm {i}.\n")
    time.sleep(0.6)  # settled: a pass starts
    shutil.rmtree(folder)
    folder.mkdir()
    for i in range(300):
        (folder / f"Second {i}.md").write_text(f"# Second {i}\n\nThe second life of the folder.\n")


def vault_renamed_away_and_back(run: Run) -> None:
    away = run.vault.with_name("vault-away")
    os.rename(run.vault, away)
    time.sleep(2.5)
    (away / "Written while away.md").write_text("# Written while away\n\nA storm while the vault was elsewhere.\n")
    os.rename(away, run.vault)


def symlink_loop(run: Run) -> None:
    os.symlink("..", run.vault / "AI" / "up")
    os.symlink(".", run.vault / "PKM" / "self")
    os.symlink("Loop b.md", run.vault / "Loop a.md")
    os.symlink("Loop a.md", run.vault / "Loop b.md")


def note_replaced_by_folder(run: Run) -> None:
    note = next(run.vault.glob("AI/*.md"))
    note.unlink()
    note.mkdir()
    (note / "Inside.md").write_text("# Inside\n\nA note inside a folder named like a note.\n")


def write_storm(run: Run) -> None:
    """2,000 small writes to one note in a few seconds (in place and atomic, mixed)."""
    note = run.vault / "Storm.md"
    rng = random.Random(5)
    for i in range(2000):
        text = f"# Storm\n\nWrite number {i}: {rng.random()}\n"
        if i % 3:
            note.write_text(text)
        else:
            tmp = run.vault / ".Storm.md.tmp"
            tmp.write_text(text)
            os.replace(tmp, note)
    note.write_text("# Storm\n\nThe last write of the storm: petrel.\n")


def many_new_notes(run: Run) -> None:
    """5,000 new notes at once, in 50 folders."""
    rng = random.Random(9)
    for i in range(5000):
        folder = run.vault / "Flood" / f"F{i // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"Flood {i}.md").write_text(
            f"# Flood {i}\n\nNote {i} of the flood, about {rng.choice(['rivers', 'storms', 'memory', 'pasta'])}. "
            f"[[Flood {rng.randrange(5000)}]]\n"
        )


def git_checkout(run: Run) -> None:
    """The vault a git repository; `git checkout` of a branch that changes hundreds of notes."""
    v = run.vault

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(v), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("-c", "user.email=a@b", "-c", "user.name=a", "add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "main")
    git("checkout", "-q", "-b", "other")
    for path in sorted(v.glob("Flood/F0*/*.md"))[:600]:
        path.write_text(path.read_text() + "\nOn the other branch.\n")
    for path in sorted(v.glob("Flood/F1*/*.md"))[:200]:
        path.unlink()
    for i in range(200):
        (v / "Branch").mkdir(exist_ok=True)
        (v / "Branch" / f"Branch {i}.md").write_text(f"# Branch {i}\n\nOnly on the other branch.\n")
    git("-c", "user.email=a@b", "-c", "user.name=a", "add", "-A")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "other")
    git("checkout", "-q", "main")


def git_checkout_back(run: Run) -> None:
    subprocess.run(["git", "-C", str(run.vault), "checkout", "-q", "other"], check=True)


def slow_write(run: Run) -> None:
    """Open, write half, sleep past the settle time, write the rest."""
    with open(run.vault / "Slow.md", "w") as f:
        f.write("# Slow\n\nThe first half of a slowly written note, ")
        f.flush()
        time.sleep(2.0)
        f.write("and the second half: albatross.\n")


def slow_write_same_size(run: Run) -> None:
    """A note rewritten in place to the same size within the same clock tick as a pass reads it."""
    note = run.vault / "Same.md"
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            note.write_text(f"# Same\n\nVersion {i % 10}.\n")
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(3.0)
    stop.set()
    t.join()
    note.write_text("# Same\n\nVersion X.\n")


def jetbrains_and_emacs_saves(run: Run) -> None:
    """JetBrains' note.md___jb_tmp___ renamed over; emacs' #note.md# autosave and .#note.md lock
    (a dangling symlink) beside a save."""
    note = run.vault / "Engineering" / "SQLite ledger.md"
    tmp = note.with_name(note.name + "___jb_tmp___")
    tmp.write_text(note.read_text() + "\n\nJetBrains save: storm gannet.\n")
    os.replace(tmp, note)
    other = next(run.vault.glob("PKM/*.md"))
    lock = other.with_name(".#" + other.name)
    os.symlink("user@host.1234:1700000000", lock)
    auto = other.with_name("#" + other.name + "#")
    auto.write_text("autosaved")
    other.write_text(other.read_text() + "\n\nEmacs save: storm puffin.\n")
    auto.unlink()
    lock.unlink()


def older_version_restored(run: Run) -> None:
    """`cp -p` of an older version of the same size over a note: its old mtime comes back."""
    note = run.vault / "Restored.md"
    note.write_text("# Restored\n\nVersion AAAA of the note.\n")
    old = run.work / "Restored-old.md"
    shutil.copy2(note, old)
    time.sleep(1.5)
    note.write_text("# Restored\n\nVersion BBBB of the note.\n")
    time.sleep(1.5)
    tmp = run.vault / ".Restored.md.rsync"
    shutil.copy2(old, tmp)
    os.replace(tmp, note)


def everything_deleted_and_restored(run: Run) -> None:
    """rm -rf of every note folder, then the same files back (a backup restored) 1 s later."""
    keep = run.work / "everything"
    shutil.rmtree(keep, ignore_errors=True)
    shutil.copytree(run.vault, keep, symlinks=True)
    for entry in list(run.vault.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    time.sleep(1.0)
    shutil.copytree(keep, run.vault, symlinks=True, dirs_exist_ok=True)


SCENARIOS: list[tuple[str, Callable[[Run], None]]] = [
    ("jetbrains_and_emacs_saves", jetbrains_and_emacs_saves),
    ("older_version_restored", older_version_restored),
    ("atomic_saves", atomic_saves),
    ("case_rename", case_rename),
    ("make_moved_folder", make_moved_folder),
    ("folder_moved", folder_moved),
    ("folder_deleted_and_made_again", folder_deleted_and_made_again),
    ("vault_renamed_away_and_back", vault_renamed_away_and_back),
    ("symlink_loop", symlink_loop),
    ("note_replaced_by_folder", note_replaced_by_folder),
    ("write_storm", write_storm),
    ("many_new_notes", many_new_notes),
    ("git_checkout", git_checkout),
    ("git_checkout_back", git_checkout_back),
    ("slow_write", slow_write),
    ("slow_write_same_size", slow_write_same_size),
    ("everything_deleted_and_restored", everything_deleted_and_restored),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated scenario names")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    work = args.work or Path(tempfile.mkdtemp(prefix="brain-watch-hostile-"))
    run = Run(work)
    shutil.copytree(ROOT / "toy_vault", run.vault)
    failures = 0
    try:
        run.start()
        print(f"settled after start in {run.settle():.1f} s", flush=True)
        for name, scenario in SCENARIOS:
            if only and name not in only:
                continue
            began = time.monotonic()
            scenario(run)
            made = time.monotonic() - began
            try:
                took = run.settle()
            except AssertionError as exc:
                print(f"FAIL {name}: {exc}", flush=True)
                failures += 1
                continue
            problems = run.compare(name)
            last = (run.status().get("server") or {}).get("last_update") or {}
            real = [p for p in problems if not p.startswith("(index")]
            verdict = "FAIL" if real else "DIFF" if problems else "ok  "
            failures += bool(real)
            print(
                f"{verdict} {name}: made in {made:.1f} s, fresh {took:.1f} s after; "
                f"last pass {last.get('took_s')} s, rss peak {run.rss_peak_mb():.0f} MB",
                flush=True,
            )
            for problem in problems:
                print(f"     {problem}", flush=True)
        log = run.home / "logs" / "serve.log"
        errors = [line for line in log.read_text().splitlines() if " ERROR " in line or "Traceback" in line]
        print(f"server alive: {run.alive()}; {len(errors)} error lines in serve.log", flush=True)
        for line in errors[:20]:
            print("    ", line[:300])
    finally:
        run.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
