"""A burst of changes that overflows the kernel's inotify queue under a real `brain serve`.

Starts `brain serve --detach` (``benchfake:384``, as bench/watch_hostile.py) on a copy of
toy_vault/, then makes a burst of ``--notes`` new notes in the vault's top folder and
``--folders`` new folders of one note each (made after them; among them with ``--writers``), while the server cannot read its
events: stopped (SIGSTOP, the default: a reader that falls behind, deterministically) or, with
``--writers N``, racing N processes that write as fast as they can. Past
``fs.inotify.max_queued_events`` (16384 on most systems) the kernel drops events, and says so with
an "overflow" that has no path, which watchfiles drops. It prints how long `brain status` took to
say fresh after the burst and whether the served notes were then the vault's; then it saves one
note in each of ``--probe`` of the new folders, one at a time, and says which were served within
``--wait`` seconds, and for how long `brain status` said fresh while one was not (a folder made
while the queue was full was never watched: a note saved in it waited for the rescan).

    HF_HUB_OFFLINE=1 nice python bench/watch_overflow.py [--notes 6000] [--folders 40] [--writers 0]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from multiprocessing import Process
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from watch_hostile import ROOT, Run


def _notes_on_disk(vault: Path) -> int:
    return sum(1 for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(vault).parts))


def _write(vault: Path, first: int, last: int, folders: list[int]) -> None:
    """Notes ``first``..``last`` in the top folder, and ``folders``' new folders among them (each
    made once its share of the notes is written: while the queue is likely full)."""
    every = max(1, (last - first) // max(1, len(folders)))
    for i in range(first, last):
        (vault / f"burst{i}.md").write_text(f"# burst {i}\n\nbody {i}\n")
        if folders and (i - first + 1) % every == 0:
            _folder(vault, folders.pop(0))
    for f in folders:
        _folder(vault, f)


def _folder(vault: Path, f: int) -> None:
    folder = vault / f"late{f:03}"
    folder.mkdir()
    (folder / "first.md").write_text(f"# late {f}\n")


def _burst(run: Run, notes: int, folders: int, writers: int) -> float:
    started = time.monotonic()
    if writers:  # the folders made among the notes, by the writers
        step = -(-notes // writers)
        procs = [
            Process(
                target=_write,
                args=(run.vault, k * step, min(notes, (k + 1) * step), list(range(folders))[k::writers]),
            )
            for k in range(writers)
        ]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join()
    else:  # the folders made once the queue is full
        _write(run.vault, 0, notes, [])
        for f in range(folders):
            _folder(run.vault, f)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=6000)
    parser.add_argument("--folders", type=int, default=40)
    parser.add_argument(
        "--writers", type=int, default=0, help="race N writing processes instead of stopping the server"
    )
    parser.add_argument("--probe", type=int, default=5, help="new folders to save a note in after the burst")
    parser.add_argument("--wait", type=float, default=20.0)
    args = parser.parse_args()
    try:
        queued = Path("/proc/sys/fs/inotify/max_queued_events").read_text().strip()
    except OSError:
        queued = "?"
    work = Path(tempfile.mkdtemp(prefix="brain-watch-overflow-"))
    run = Run(work)
    shutil.copytree(ROOT / "toy_vault", run.vault)
    failures = 0
    try:
        run.start()
        assert run.pid is not None
        print(f"settled after start in {run.settle():.1f} s; max_queued_events {queued}", flush=True)
        unindexed = _notes_on_disk(run.vault) - run.status()["notes"]  # toy_vault's .brainignore'd ones
        if not args.writers:
            os.kill(run.pid, signal.SIGSTOP)
        try:
            made = _burst(run, args.notes, args.folders, args.writers)
        finally:
            if not args.writers:
                os.kill(run.pid, signal.SIGCONT)
        how = f"{args.writers} writers" if args.writers else "the server stopped"
        print(f"burst: {args.notes} notes, then {args.folders} folders of one, in {made:.1f} s ({how})", flush=True)
        took = run.settle()
        status = run.status()
        server = status.get("server") or {}
        disk = _notes_on_disk(run.vault) - unindexed
        print(
            f"fresh {took:.1f} s after; served {status['notes']} notes of {disk}; "
            f"last pass: {(server.get('last_update') or {}).get('reason')}; "
            f"bursts {server['watch'].get('bursts')}",
            flush=True,
        )
        failures += status["notes"] != disk
        for f in [round(k * (args.folders - 1) / max(1, args.probe - 1)) for k in range(args.probe)]:
            before = run.status()["notes"]
            (run.vault / f"late{f:03}" / "later.md").write_text(f"# saved after the burst {f}\n")
            began = time.monotonic()
            idle = looks = 0  # of the looks while it was not served: the server's watch idle
            walked = 0  # status's own walk of the vault counted it pending
            served_after = None
            while time.monotonic() - began < args.wait:
                status = run.status()
                if status["notes"] > before:
                    served_after = time.monotonic() - began
                    break
                watch = (status.get("server") or {}).get("watch") or {}
                looks += 1
                idle += not watch.get("busy") and not watch.get("pending")
                walked += any((status.get("pending") or {}).values())
                time.sleep(0.3)
            if served_after is None:
                failures += 1
                answer = run.ask(f"saved after the burst {f}", run.vault)
                found = isinstance(answer, list) and any(path == f"late{f:03}/later.md" for path, _ in answer)
                print(f"     brain ask through the server for its words: {'found' if found else 'not found'}")
                print(
                    f"LOST late{f:03}/later.md: not served in {args.wait:.0f} s; the server's watch said idle "
                    f"(nothing pending, not busy) at {idle} of {looks} looks; status's own walk "
                    f"counted it pending at {walked}",
                    flush=True,
                )
            else:
                print(f"ok   late{f:03}/later.md served {served_after:.1f} s after the save", flush=True)
        lines = (run.home / "logs" / "serve.log").read_text().splitlines()
        for line in [line for line in lines if "burst" in line][:4]:
            print("    log:", line[:240], flush=True)
    finally:
        run.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
