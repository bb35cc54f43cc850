"""What is wrong with a file brain keeps, when a library's word for it is not the cause.

SQLite says "unable to open database file" of an index it may not read, of a folder where the
file should be, of a symbolic link to nowhere, and of a folder it may not write alike; FAISS and
numpy say less. ``unusable`` looks at the file itself and says which, so that the line a user
reads names the file, what is wrong with it and what to do, never "not writable" of a file that
cannot be read. Light: the hooks and `brain status` import it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


def kind_of(mode: int) -> str:
    """What a ``stat`` mode says stands at a path, in a line's words: "a folder", "a FIFO",
    "a socket", "a device", "a file"; "no file" for 0 (nothing could be stat'ed)."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a file" if stat.S_IFMT(mode) else "no file"


def unusable(path: Path, what: str, remake: str) -> str | None:
    """One line on why ``path`` (``what``: "the index database") cannot be opened for reading,
    and what to do, when the file (or a folder on its way) says why; None when it does not (it
    is not there, or it can be read: the cause is elsewhere, e.g. its folder cannot be written).
    ``remake``: what makes it again once moved aside ("`brain index` builds a new one")."""
    named = f"{what} {path}"
    st = _standing(path, what)
    if not isinstance(st, os.stat_result):
        return st
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return (
                f"{named} is a symbolic link to {target}, which does not exist (a disk not mounted?): "
                f"mount it, or remove the link; {remake}"
            )
        except OSError:
            return None
    if stat.S_ISDIR(st.st_mode):
        return _a_folder(named, remake)
    if not stat.S_ISREG(st.st_mode):
        kind = "FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else "device"
        return f"{named} is a {kind}, not a file: remove it; {remake}"
    try:
        os.close(os.open(path, os.O_RDONLY))
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM):
            return None
        return f"{named} cannot be read by this user ({_modes(st)}): {_give_access(path, st)}"
    return None


def in_the_way(path: Path, what: str, remake: str) -> str | None:
    """One line when what stands at ``path``, a file brain replaces whole (a save writes a new
    file beside it and renames it over the name), is the user's and a save would fail on it or
    lose it; None when nothing is there or a file is (brain's to replace; ``unusable`` says what
    else is wrong with one). A folder: a rename cannot replace it, and brain deletes none. A
    symbolic link, wherever it leads (a folder, a file, nowhere: a disk not mounted): a rename
    replaces the link itself, not what it leads to, so the save would drop the link silently
    and the file would not be where the user put it. Nothing is touched; the line says what to
    do. ``remake``: what makes the file again once the name is clear."""
    named = f"{what} {path}"
    st = _standing(path, what)
    if not isinstance(st, os.stat_result):
        return st
    if stat.S_ISDIR(st.st_mode):
        return _a_folder(named, remake)
    if not stat.S_ISLNK(st.st_mode):
        return None
    target = os.readlink(path)
    replaced = "brain saves this file by replacing it whole, which would replace the link, not what it leads to"
    try:
        led = os.stat(path)
    except OSError:
        return f"{named} is a symbolic link to {target}, which does not exist: {replaced}; remove the link; {remake}"
    if stat.S_ISDIR(led.st_mode):
        return f"{named} is a symbolic link to the folder {target}, not a file: remove the link; {remake}"
    return (
        f"{named} is a symbolic link to {target}: {replaced}; put the file in its place"
        f" (mv {_word(Path(os.path.realpath(path)))} {_word(path)}), or remove the link; {remake}"
    )


def _standing(path: Path, what: str) -> os.stat_result | str | None:
    """What stands at ``path`` (a symbolic link itself, not what it leads to), for ``unusable``
    and ``in_the_way`` alike: None when nothing does, ``unreachable``'s line when a folder on
    the way may not be searched (None when something else failed the look)."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return unreachable(path, what)


def _a_folder(named: str, remake: str) -> str:
    return f"{named} is a folder, not a file: move it aside; {remake}"


def read_only(path: Path, what: str) -> str | None:
    """One line saying that the file ``path`` may be read but not written by this user (its
    modes, its owner), and what to do; None when it is not there, not a file, or writable."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM):
            return None
        if st.st_uid != os.geteuid():
            fix = f"it belongs to another user; make it yours (sudo chown $USER {_word(path)})"
        else:
            fix = f"make it writable (chmod u+w {_word(path)})"
        return f"{what} {path} is read-only for this user ({_modes(st)}): {fix}"
    return None


def unreachable(path: Path, what: str) -> str | None:
    """One line saying that ``path`` (``what``: "the brain home's folder") cannot be reached, a
    folder above it not to be searched by this user, and what to do; None when it can be."""
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            folder = _unsearchable_folder(path)
            return (
                f"{what} {path} cannot be reached: the folder {folder} may not be searched by this user "
                f"(permission denied); give your user access to it (chmod u+rwx {_word(folder)})"
            )
    return None


def _unsearchable_folder(path: Path) -> Path:
    """The folder above ``path`` that may not be searched: the parent of the first one whose
    ``lstat`` is refused, from the root down."""
    for below in [*reversed(path.absolute().parents), path.absolute()]:
        try:
            os.lstat(below)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                return below.parent
            break
    return path.parent


def _modes(st: os.stat_result) -> str:
    return f"mode {stat.S_IMODE(st.st_mode):03o}, owner {_user(st.st_uid)}"


def _give_access(path: Path, st: os.stat_result) -> str:
    if st.st_uid != os.geteuid():
        return (
            f"it belongs to another user; make it yours (sudo chown $USER {_word(path)}), "
            "or set BRAIN_HOME to a folder of your own"
        )
    return f"give your user read and write access to it (chmod u+rw {_word(path)})"


def _user(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _word(path: Path) -> str:
    from .text import shell_word

    return shell_word(path)


def file_size_limit() -> int | None:
    """This process's file size limit (``ulimit -f``, bytes), or None when it has none. A write
    that meets it fails with EFBIG, which SQLite says as "disk I/O error" (or "disk is full")."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    except (ImportError, OSError, ValueError):  # Windows: no such limit
        return None
    if limit == resource.RLIM_INFINITY or limit < 0:
        return None
    return limit


def file_size_limit_met(exc: BaseException, files: Iterable[str | os.PathLike[str]]) -> int | None:
    """The file size limit (``ulimit -f``, bytes) when it is what stopped the write that raised
    ``exc`` on one of ``files``, else None. The write that meets it fails with EFBIG, which
    SQLite says as "disk I/O error", and a -shm file it could not make its 32 KB as "disk is
    full": a broken or a full disk, to read it, on a disk with room. Told by ``exc`` being one of
    those, the limit being set, and one of ``files`` (those not there passed over) being within
    1 MiB of it, or the limit being under 1 MiB: too low for any index or ledger."""
    if isinstance(exc, OSError):
        if exc.errno != errno.EFBIG:
            return None
    else:
        name = getattr(exc, "sqlite_errorname", "")
        text = str(exc)
        if not (name.startswith(("SQLITE_IOERR", "SQLITE_FULL")) or "disk I/O error" in text or "disk is full" in text):
            return None
    limit = file_size_limit()
    if limit is None or limit < 1 << 20:
        return limit
    for file in files:
        try:
            st = os.stat(file)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size >= limit - (1 << 20):
            return limit
    return None


def size_limit_words(limit: int) -> str:
    return f"{limit / (1 << 20):.1f} MB" if limit >= 1 << 20 else f"{limit:,} bytes"


def exclusive_flocks(fd: int) -> list[int] | None:
    """The pids holding an exclusive flock on the open file ``fd`` (0 for a process of another
    pid namespace), from /proc/locks; None where the system does not say (macOS). Who holds a
    lock, read without taking it: a look that took it for a moment turned away a process that
    came for it in that moment, as if another held it."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return None
    file = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found = []
    for line in lines:
        # "1: FLOCK  ADVISORY  WRITE 4242 fe:00:2149121 0 EOF"; a waiter's line has "->" after the number
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[5] == file:
            found.append(int(fields[4]) if fields[4].isdigit() else 0)
    return found
