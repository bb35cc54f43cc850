"""Where a vault's server keeps its files, and what its record says. Standard library only.

In a folder beside the vault's index folder (``$BRAIN_HOME/vaults/<name>-<hash>.serve/``, mode
0700): beside it, not in it, because ``brain index --rebuild`` swaps the index folder whole,
and the socket and the record must outlive that.

    serve.lock   held (flock) by the running server for its whole life: one server per vault,
                 and a lock nobody holds means anything else here is stale (a ``kill -9``); it
                 holds the server's pid, which ``--stop`` signals when the server does not answer
                 (Linux's F_GETLK does not see a flock); mode 0600
    serve.sock   the Unix socket, mode 0600 (owner only)
    serve.json   the record: pid, vault, socket, start time, HTTP address and token, embedding
                 model; mode 0600

A socket path longer than the platform allows (about 100 bytes) goes to a private folder
under the temporary directory instead, ``<tmp>/brain-<uid>``, or, when another user took that
name first, a new folder ``<tmp>/brain-<uid>-XXXXXXXX`` made for this server; ``serve.json``
says where (clients find the socket there, never by its name).

A running server makes again any of these that is removed under it (``Daemon.heal``): it keeps
what each path led to (``identity``) and looks again every few seconds.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from .. import config
from ..processes import running

LOCK_FILE = "serve.lock"
SOCKET_FILE = "serve.sock"
RECORD_FILE = "serve.json"
MAX_SOCKET_PATH = 100  # bytes; sun_path is 104 (macOS) or 108 (Linux) with the terminator


def runtime_dir(root: Path) -> Path:
    """The server's folder for this vault: ``<index folder>.serve``."""
    index = config.index_dir(root)
    return index.with_name(index.name + ".serve")


def record_path(root: Path) -> Path:
    return runtime_dir(root) / RECORD_FILE


def lock_path(root: Path) -> Path:
    return runtime_dir(root) / LOCK_FILE


def socket_path(root: Path) -> Path:
    """The socket's path: in the server's folder, or a short private path when that is too long."""
    preferred = runtime_dir(root) / SOCKET_FILE
    if len(os.fsencode(str(preferred))) <= MAX_SOCKET_PATH:
        return preferred
    import hashlib  # only for the rare long path: loading OpenSSL is not free on every client's start

    digest = hashlib.sha1(os.fsencode(str(runtime_dir(root)))).hexdigest()[:16]
    return private_dir() / f"{digest}.sock"


def private_dir() -> Path:
    """``<tmp>/brain-<uid>``, created 0700 and checked to be ours and private; or, when that
    name is taken by anything not ours alone (another user's folder, file or symlink: anyone may
    make names in /tmp, and so stop every long-path vault's server from starting), a new folder
    made for this server by ``mkdtemp``, whose random name nobody can take first."""
    import tempfile  # only for the rare long path: not on every client's import

    from ..errors import ConfigError

    folder = Path(tempfile.gettempdir()) / f"brain-{os.getuid()}"
    try:
        make_private(folder, parents=False)
        return folder
    except (ConfigError, FileExistsError):  # FileExistsError: a file or a dangling symlink there
        return Path(tempfile.mkdtemp(prefix=folder.name + "-"))


def drop_one_off(folder: Path) -> None:
    """Remove ``folder`` when it is one ``private_dir`` made for one server (``mkdtemp``'s), once
    its socket is gone; a folder with anything left in it stays."""
    import tempfile

    if folder.parent == Path(tempfile.gettempdir()) and folder.name.startswith(f"brain-{os.getuid()}-"):
        try:
            folder.rmdir()
        except OSError:
            pass


def make_private(folder: Path, *, parents: bool = True) -> None:
    """Create ``folder`` 0700, or make an existing one ours alone: a folder of ours that others
    may write to is narrowed to 0700 (else they could swap the socket or the record, and take
    our questions); one that is not ours, or a symlink, is refused."""
    from ..errors import ConfigError

    folder.mkdir(mode=0o700, parents=parents, exist_ok=True)
    st = folder.lstat()
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise ConfigError(f"{folder} is not a private folder of this user; remove it and try again")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)


def is_private(folder: Path) -> bool:
    """Whether ``folder`` is a folder of this user's that no one else may enter (no symlink)."""
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows: no owners or modes to read this way
        return True
    try:
        st = folder.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def read_record(root: Path) -> dict[str, Any] | None:
    """The running (or stale) server's record, or None when there is none or it is unreadable,
    or when its folder is not ours alone: a record someone else could write would send every
    question (and the prompt hook's prompts) to their socket, and ``--stop``'s SIGTERM to their pid."""
    if not is_private(runtime_dir(root)):
        return None
    path = record_path(root)
    try:
        st = path.lstat()  # a file another user left before the folder was narrowed is not ours
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_record(root: Path, record: dict[str, Any]) -> None:
    """Write ``serve.json`` atomically, owner-only from the start (it may hold the HTTP token).
    A vault whose path is not UTF-8 ("caf\\udce9" for a Latin-1 name) has it written escaped, as
    JSON may (read back as it was): written as text, it failed `brain serve`'s start."""
    path = record_path(root)
    try:
        text = json.dumps(record, indent=2, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(record, indent=2).encode("ascii")
    write_private(path, text)


def write_private(path: Path, data: bytes) -> None:
    """Write ``path`` whole, owner-only from the start: a temporary file beside it (mode 0600),
    renamed over it, so a reader sees the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


Identity = tuple[int, int]  # (st_dev, st_ino): which file a path leads to


def identity(path: Path) -> Identity | None:
    """The file ``path`` itself leads to now (a symlink is itself, never followed), or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def open_lock(path: Path) -> int:
    """Open (or make, 0600) the lock file at ``path``; a symlink there is refused (``OSError``)."""
    # O_NONBLOCK: a FIFO in its place fails (ENXIO) rather than waits for a reader forever
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)


def write_lock_pid(fd: int, *, starting: bool = False) -> None:
    """Write this process's pid into the lock file it holds (``fd``): the record can be gone
    and not made again (a full disk, a read-only folder), and ``--stop`` still finds whom to stop.
    ``starting``: marked so until the record is written (``server_starting``)."""
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}{' starting' if starting else ''}\n".encode())
    except OSError:  # the pid is a help, not the lock: a full disk leaves it unknown
        pass


def clear_lock_pid(fd: int) -> None:
    """Empty the lock file before it is let go: the pid is of its holder only."""
    try:
        os.ftruncate(fd, 0)
    except OSError:
        pass


def lock_holder(root: Path) -> int | None:
    """The pid the server holding this vault's lock wrote into it, when alive; None otherwise
    (no server, a server from before the pid was written, a folder not ours alone)."""
    if not is_private(runtime_dir(root)):
        return None
    path = lock_path(root)
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_size > 64:
            return None
        words = path.read_text(encoding="ascii").split()
    except (OSError, ValueError):
        return None
    pid = int(words[0]) if words and words[0].isdigit() else None
    return pid if pid_alive(pid) and lock_is_held(root) else None


def server_starting(root: Path) -> bool:
    """Whether the server holding this vault's lock has not written its record yet: it is still
    starting (waiting for another process upgrading the index may take a while), its record not gone."""
    if lock_holder(root) is None:
        return False
    try:  # its holder checked by lock_holder: a regular file of ours, a few bytes
        return lock_path(root).read_text(encoding="ascii").split()[1:] == ["starting"]
    except (OSError, ValueError):
        return False


def pid_alive(pid: Any) -> bool:
    """Whether the process a server's record or lock names runs (another user's too). No for
    what is no process id (a record's ``true`` is not process 1) and for an id the system cannot
    answer for: no server to signal or to wait for."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    return running(pid) is True


def lock_is_held(root: Path) -> bool:
    """Whether a server holds this vault's lock now (without taking it for long)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:  # pragma: no cover - no flock: trust the record's pid
        record = read_record(root)
        return bool(record and pid_alive(record.get("pid")))
    return folder_lock_is_held(runtime_dir(root))


def folder_lock_is_held(folder: Path) -> bool:
    """Whether a server holds the lock in its folder ``folder`` now. Not in a folder that is not
    ours alone: no server of ours is there, and opening a lock file planted there (a symlink)
    would make the file it leads to."""
    if not is_private(folder):
        return False
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock: a server's folder is taken for a live server's
        return True
    try:
        # never made here (no O_CREAT): a lock file a client made where the server's was removed
        # was free to take, so a running server looked stopped (and heal took the client's file)
        # O_NONBLOCK: a FIFO in its place was waited on for a reader (`brain status` and `ask` hung)
        fd = os.open(folder / LOCK_FILE, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # releases a lock we took
    return False
