"""Work an index pass leaves to a process of its own, in the background: building the BM25
postings (``postings_child``) and merging FTS5's segments (``fts_merge_child``).

A save someone waits for should not pay for either (at 100,000 notes, ~50 s and up to ~9 s).
Each kind of work is named, and its process holds ``<name>.lock`` in the index folder (flock)
while it works: one at a time, and a pass that finds it held starts none. The process runs in
its own session at a lower priority, outlives the pass that started it (`brain index` exits;
nothing of its parent's is left open in it), and writes why it failed, if it does, to
``<name>.failed``, which the next pass reports (its parent may be gone).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..child_process import python_module_command
from ..errors import NewerDatabaseError

if TYPE_CHECKING:  # subprocess is imported where a process is started: `brain status` starts none
    import subprocess

log = logging.getLogger(__name__)

NICENESS = 10  # the saves and queries someone waits for come first


@dataclass(frozen=True)
class Work:
    """A kind of background work."""

    name: str  # its files in the index folder: <name>.lock, <name>.failed
    module: str  # its process: python -m <module> <index folder>
    doing: str  # for the log: "building the BM25 postings"
    failed_means: str  # what a failure leaves, for the warning


# The kinds there are, here rather than in their modules: `brain status` asks which are under
# way without importing the postings' and the merger's modules.
POSTINGS = Work(
    "postings",
    "brain.index.postings_child",
    "building the lexical postings",
    "BM25 searches FTS5 until a later index pass builds them",
)
FTS_MERGE = Work(
    "fts-merge", "brain.index.fts_merge_child", "merging FTS5's segments", "FTS5 merges inside saves until a later pass"
)
KINDS = (POSTINGS, FTS_MERGE)


# Processes this one started, not yet waited for (``wait_for_all``).
_started: list[subprocess.Popen[bytes]] = []


def lock_file(directory: Path, name: str) -> Path:
    return directory / f"{name}.lock"


def failure_file(directory: Path, name: str) -> Path:
    return directory / f"{name}.failed"


@contextmanager
def held(directory: Path, name: str, *, wait: bool) -> Iterator[bool]:
    """The right to do ``name``'s work on this folder: True while held; False (at once) when
    another process holds it and ``wait`` is off. Where there is no flock (Windows): always
    True, and the work itself must bear a second worker (the postings are installed only over
    the state they read)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock
        yield True
        return
    with open(os.open(lock_file(directory, name), os.O_RDWR | os.O_CREAT, 0o600), "r+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True


def busy(directory: Path, name: str) -> bool:
    """Whether a process is doing ``name``'s work on this folder now: read from /proc/locks
    (Linux), else by taking its lock for a moment, which turns away a worker starting in that
    moment (it finds the lock held, and leaves the work to the next pass)."""
    path = lock_file(directory, name)
    if not path.exists():
        return False
    try:  # through a symlink, as the worker's lock (``held``) goes; nothing is read from it
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        fd = -1
    if fd >= 0:
        from ..file_state import exclusive_flocks  # not for a folder with no work under way

        try:
            holders = exclusive_flocks(fd)
        finally:
            os.close(fd)
        if holders is not None:
            return bool(holders)
    with held(directory, name, wait=False) as free:
        return not free


def start(work: Work, directory: Path) -> subprocess.Popen[bytes] | None:
    """``work``'s process started in the background on this folder, or None when one is
    already at it there. What failed before is reported first."""
    import subprocess

    report_failure(work, directory)
    if busy(directory, work.name):
        log.info("%s: already under way in another process", work.doing)
        return None
    process = subprocess.Popen(
        [*python_module_command(work.module), str(directory)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # a pipe of ours held open would keep whoever reads it waiting
        stderr=subprocess.DEVNULL,  # the child writes what fails to <name>.failed
        start_new_session=True,
    )
    _started[:] = [p for p in _started if p.poll() is None]
    _started.append(process)
    return process


def wait_for_all(timeout: float | None = None) -> None:
    """Wait for the processes this one started (a test, a bench, before it measures what they
    change); each killed past ``timeout`` seconds."""
    import subprocess

    while _started:
        process = _started.pop()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def report_failure(work: Work, directory: Path) -> None:
    """What ``work``'s process wrote when it failed, said here as a warning, once."""
    path = failure_file(directory, work.name)
    try:
        data = path.read_bytes()
    except OSError:
        return
    if busy(directory, work.name):  # one at work: not its last word yet
        return
    path.unlink(missing_ok=True)
    lines = data.decode("utf-8", "replace").strip().splitlines()
    if lines:
        log.warning("%s failed in the background (%s): %s", work.doing, lines[-1], work.failed_means)


def main(work: Work, body: Callable[[Path], object], argv: list[str]) -> int:
    """A background process: ``body(index folder)`` under ``work``'s lock (nothing, when another
    process holds it), at a lower priority, what fails written for the next pass."""
    directory = Path(argv[1])
    with held(directory, work.name, wait=False) as mine:
        if not mine:
            return 0
        if hasattr(os, "nice"):
            os.nice(NICENESS)
        try:
            body(directory)
        except NewerDatabaseError:
            # a newer brain upgraded the index: its own passes do this work; no failure of
            # this work for its next pass to warn of
            return 0
        except BaseException:
            import traceback

            _record_failure(directory, work.name, traceback.format_exc())
            raise
    return 0


def _record_failure(directory: Path, name: str, text: str) -> None:
    try:
        fd = os.open(failure_file(directory, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:  # the folder gone or full: nothing more to say it with
        print(text, file=sys.stderr)
