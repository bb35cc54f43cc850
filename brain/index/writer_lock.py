"""The vault's writer lock: one writer per vault index (`brain index`, `brain serve`'s watcher,
a `brain ask` bringing the index up to date, a rebuild), a flock on ``<index folder>.lock``
beside the index folder; and what a reader (`brain status`) may learn of it without taking it.

Apart from the indexer so that `brain status` reads who holds it without importing the
indexer's modules (embedding, chunking, parsing, postings)."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .. import config
from ..errors import BrainError, UnusableFileError
from ..file_state import exclusive_flocks
from .store import IndexStore


class VaultLocked(BrainError):
    """The vault's writer lock, held by another process. ``holder``: its pid when the system says
    it (``flock_holder``); ``who``: how the message names it (the CLI names `brain serve`)."""

    def __init__(self, directory: Path, waited: float, holder: int | None = None, who: str | None = None) -> None:
        who = who if who is not None else (f" (pid {holder})" if holder else "")
        super().__init__(_locked_message(directory, waited, who))
        self.directory, self.waited, self.holder = directory, waited, holder


def lock_path(directory: Path) -> Path:
    """The vault's writer lock: beside the index folder, so it survives the rebuild swap."""
    return directory.with_name(directory.name + ".lock")


LOOK_EVERY = 0.1  # seconds between two tries of a writer waiting for the lock


class HeldLock:
    """The vault's writer lock, held: ``drop_file`` removes its file where this process made it;
    ``waited``: the seconds from the moment its taker began to wait for another writer (told
    ``vault_lock``'s ``waiting``) to the moment it took it, 0.0 when it did not wait."""

    def __init__(self, path: Path | None = None, fd: int = -1, made: bool = False, waited: float = 0.0) -> None:
        self.path, self._fd, self._made, self.waited = path, fd, made, waited

    def drop_file(self) -> None:
        """Remove the lock file, still held, where this run made it and it is still the file at its
        path (a first `brain index` that failed and removed the index folder it made: the file was
        left beside nothing). A writer that opened it meanwhile finds it gone once it holds it and
        takes the file there then (``vault_lock``); a file this run did not make is kept."""
        if self.path is None or not self._made:
            return
        with contextlib.suppress(OSError):
            if os.path.samestat(os.fstat(self._fd), os.lstat(self.path)):
                self.path.unlink()


@contextlib.contextmanager
def vault_lock(
    target: IndexStore | Path, *, wait: float = 0.0, waiting: Callable[[int | None], None] | None = None
) -> Iterator[HeldLock]:
    """One writer per vault index, rebuilds included. Readers never need it (SQLite WAL,
    a FAISS cache checked against the database, folders swapped whole).

    Held by another process: ``VaultLocked`` at once, or, with ``wait`` seconds, once they
    have passed without it coming free; ``waiting`` is told when the wait begins, with the
    holder's pid when the system says it (``flock_holder``). A lock taken on a file no longer
    at its path (its holder removed it, ``HeldLock.drop_file``) is let go and the file there
    now taken: two writers never hold two files."""
    directory = target.directory if isinstance(target, IndexStore) else target
    try:
        import fcntl
    except ImportError:  # Windows: SQLite's own locking still keeps the data consistent
        yield HeldLock()
        return
    config.private_folder(directory.parent)
    path = lock_path(directory)
    deadline: float | None = None
    began: float | None = None  # when the wait for another writer began
    while True:
        fd, made = _open_lock(path)
        with os.fdopen(fd, "a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError as exc:
                    now = time.monotonic()
                    if deadline is None and wait > 0:
                        began, deadline = now, now + wait
                        if waiting is not None:
                            waiting(flock_holder(handle.fileno()))
                    if deadline is None or now >= deadline:
                        # the holder named here too: with --wait 0 or --quiet no waiting line named it
                        raise VaultLocked(directory, wait, flock_holder(handle.fileno())) from exc
                    # polled, not a blocking flock: that one no timeout can end, and Ctrl-C here
                    # is click's "Aborted!"
                    time.sleep(min(LOOK_EVERY, deadline - now))
            try:  # the file the path leads to: a symlink there is never the file taken, and was spun on
                current = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                current = False
            if current:
                yield HeldLock(path, fd, made, 0.0 if began is None else time.monotonic() - began)
                return


def _open_lock(path: Path) -> tuple[int, bool]:
    """The lock file, opened to append (made if missing), and whether this call made it: a FIFO
    in its place was waited on for a reader forever, a folder was Python's IsADirectoryError;
    either, and a file this user may not open, is ``UnusableFileError`` naming it."""
    problem, made = None, False
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        try:
            fd, made = os.open(path, flags | os.O_EXCL, 0o666), True
        except FileExistsError:
            fd = os.open(path, flags, 0o666)
    except OSError as exc:
        problem, fd = exc, -1
    if fd >= 0 and stat.S_ISREG(os.fstat(fd).st_mode):
        return fd, made
    if fd >= 0:
        os.close(fd)
    from ..file_state import unusable

    said = unusable(path, "the vault's writer lock", "brain makes a new one")
    if said:
        raise UnusableFileError(said) from problem
    if problem is not None:
        raise problem
    raise UnusableFileError(f"the vault's writer lock {path} is not a regular file: remove it; brain makes a new one")


def indexing_now(directory: Path) -> dict[str, int | None] | None:
    """``{"pid": ...}`` when another process holds this vault's writer lock now (its pid where
    the system says it, else None), else None. Read from /proc/locks (Linux); elsewhere the lock
    is taken shared for a moment (as ``background.busy`` does): a writer that comes in that
    moment is turned away as if another wrote. Never made: `brain status` writes nothing.

    A lock file that is a symbolic link is followed, as writers follow it (``vault_lock``): its
    folder is private (``config.private_folder``, 0700, refused where another user can write), so
    a link there is the user's own; what it leads to is looked at only when it is a regular file,
    as a writer takes no other."""
    try:
        import fcntl
    except ImportError:  # Windows: no writer lock to look at
        return None
    path = lock_path(directory)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a device or FIFO is not opened at all
            return None
        # O_NONBLOCK: a FIFO put in its place since is not waited on for a writer (`brain status` hung)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:  # none yet (nothing ever indexed here), or not ours to open
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since it was looked at
            return None
        held = exclusive_flocks(fd)
        if held is not None:  # the system says who holds it, without a lock of ours in a writer's way
            return {"pid": next((pid for pid in held if pid > 0), None)} if held else None
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return {"pid": flock_holder(fd)}
    except OSError:
        return None
    finally:
        os.close(fd)  # releases a lock we took
    return None


def _locked_message(directory: Path, waited: float, who: str = "") -> str:
    then = (
        f"waited {waited:g} s for it: try again when it is done, or wait longer (--wait SECONDS)"
        if waited > 0
        else "try again when it is done"
    )
    return (
        f"another brain process{who} is indexing this vault ({directory}): `brain index`, the watcher of"
        f" `brain serve`, or a `brain ask` bringing the index up to date; {then}"
    )


def flock_holder(fd: int) -> int | None:
    """The pid of the process holding the flock on the open file ``fd``, from /proc/locks
    (Linux); None where the system does not say (macOS), or not now (it was let go)."""
    for pid in exclusive_flocks(fd) or ():
        return pid if pid > 0 else None  # 0: a process of another pid namespace
    return None
