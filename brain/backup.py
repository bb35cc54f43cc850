"""`brain backup DEST`: a copy of what brain keeps that cannot be made again, taken while brain runs.

An SQLite database in WAL mode cannot be copied file by file while it is written (`cp -r` of
the brain home during `brain serve`'s pass or an FTS5 merge gave a torn copy: the database file
of one moment, its WAL of another). Each database here is copied through SQLite's online
backup API inside one read transaction: every step reads the same snapshot, so the copy is the
database as one commit left it, and writers go on meanwhile (a reader never blocks them in WAL
mode). Without that transaction, a commit by another process between two steps restarted the
copy from its first page, and under a steady writer it never ended.

What is copied, into the layout of the brain home (so that BRAIN_HOME pointed at the copy, or
the copy put in its place, is a working brain): each vault's ``index.db`` (notes, chunks and
their vectors, history), the ledger (``brain.db``, or the file BRAIN_DB names), the rows hooks
keep aside while its upgrade waits, the install records and the home's ``.env``. What brain
makes again on its own is left out: the FAISS files, BM25 postings and recall caches (derived
from ``index.db``, stamped with its state), locks, temporary files, logs, the WAL itself (the
copy holds every commit the snapshot saw). An index an older brain made is copied as it is: the
brain that opens the copy migrates it.

The copy is made in a hidden folder beside DEST (owner-only, as everything brain keeps) and
renamed to DEST when complete: a backup killed midway leaves no DEST, and its folder is
removed by the next backup into the same folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import config
from .db import kept_aside_dir
from .errors import BrainError, ConfigError, NoIndexError, NoSpaceError, NotWritableError, quoted
from .file_state import kind_of, unreachable, unusable
from .index.connections import connect_unswapped
from .index.files import INDEX_FILE, RETIRED_SUFFIX
from .index.health import built_index_dir, quick_check
from .migrations import disk_bytes
from .processes import running
from .text import shell_word
from .vault import resolve_vault

try:
    import fcntl
except ImportError:  # Windows: a killed backup's folder is told by its process id alone
    fcntl = None  # type: ignore[assignment]

LEDGER_FILE = "brain.db"
# Small files of the brain home that hold what no run makes again: which settings files the
# installs changed (uninstall reads them) and the user's settings.
HOME_FILES = ("hook-installs.json", "mcp-installs.json", ".env")
# Pages a backup step copies: 16 MB at the index's 8 KB pages, so the progress bar moves and a
# step's lock on the copy's file is short.
STEP_PAGES = 2048
_INDEX_FOLDER = re.compile(r".+-[0-9a-f]{10}")  # config.index_dir's names (not .serve, .retired, .lock)
_TEMP_MARK = ".brain-backup-"
# A backup's folder beside DEST: DEST's name (its first 50 characters: all of a long one made a
# name too long for the disk), the mark, its process id and a random part.
_TEMP_FOLDER = re.compile(r"\..*\.brain-backup-([0-9]+)-[0-9a-f]{8}", re.DOTALL)
_LOCK = ".backup.lock"
_LOCK_TAKING = ".backup.lock.taking"  # the lock file until it is held: the sweep does not open it

Progress = Callable[[int, int], None]  # (bytes copied so far, bytes to copy)


class BackupError(BrainError):
    """The backup cannot be made (where it would go, what it would copy); nothing was left at DEST."""


class UnsoundDatabase(BackupError):
    """A database SQLite cannot read as one (its header or schema damaged): nothing of it can be copied."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class Copied:
    """One database copied: where from, where in the backup, its size and the check of the copy."""

    kind: str  # "index" or "ledger"
    source: str
    copy: str  # relative to the backup
    bytes: int
    seconds: float
    problem: str | None = None  # what SQLite's quick_check found wrong in the copy (and the source)
    left_out: bool = False  # SQLite cannot read the source as a database: not copied (problem says why)
    not_a_file: bool = False  # left out: a FIFO, a socket, a device, a /proc file stands where the database should be


@dataclass
class BackupReport:
    destination: str
    databases: list[Copied] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # other files copied, relative to the backup
    seconds: float = 0.0

    @property
    def bytes(self) -> int:
        return sum(d.bytes for d in self.databases)

    def as_dict(self) -> dict:
        return {**asdict(self), "bytes": self.bytes}


def backup(
    destination: str | os.PathLike[str],
    *,
    vault: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    step_pages: int = STEP_PAGES,
) -> BackupReport:
    """Copy brain's state (every vault's index and the ledger; with ``vault``, that vault's index
    alone) into the new folder ``destination``. ``progress`` is called after each step."""
    started = time.perf_counter()
    home = config.brain_home().expanduser().absolute()
    dest = _destination(destination, lambda place: _refuse_place(place, home, vault))
    databases, files, odd = _sources(home, vault)
    _refuse_place(dest, home, vault)
    _refuse_short_of_space(dest.parent, databases, files)
    report = BackupReport(destination=str(dest))
    report.databases += [
        Copied(kind, str(path), "", 0, 0.0, _not_a_file(path, kind), left_out=True, not_a_file=True)
        for path, kind in odd
    ]
    _remove_killed(dest)
    with _temporary_folder(dest) as temp:
        source: Path | None = None  # what is being copied, for an error to name
        try:
            # The rows kept aside before the ledger: a row that moves into brain.db meanwhile is
            # then in both copies rather than in neither.
            for source, relative in files:
                # The copy's ledger is its brain.db: a BRAIN_DB of the home's .env, copied as it
                # was, sent a brain run on the copy to the live ledger (and left the copy's unread)
                _copy_file(source, temp, relative, _ledger_beside if relative == Path(".env") else None)
                report.files.append(str(relative))
            total = sum(disk_bytes(source) for source, _, _ in databases)
            done = 0
            unsound: list[UnsoundDatabase] = []
            for source, relative, kind in databases:
                target = temp / relative
                _private_folders(temp, target.parent)
                began = time.perf_counter()

                def step(copied: int, done_before: int = done) -> None:
                    if progress:
                        progress(done_before + copied, max(total, done_before + copied))

                try:
                    size, problem = copy_database(source, target, progress=step, step_pages=step_pages)
                except UnsoundDatabase as exc:
                    # One index SQLite cannot read refused the whole backup: the ledger and every
                    # other vault's index went without one until it was rebuilt (its history lost)
                    unsound.append(exc)
                    if target.parent != temp:
                        with contextlib.suppress(OSError):
                            target.parent.rmdir()  # its index folder, made empty above
                    report.databases.append(Copied(kind, str(source), "", 0, 0.0, exc.reason, left_out=True))
                    continue
                done += size
                seconds = round(time.perf_counter() - began, 3)
                report.databases.append(Copied(kind, str(source), str(relative), size, seconds, problem))
            if len(unsound) == len(databases):
                raise unsound[0]  # a backup holding no database is none
            _sync_tree(temp)
        except OSError as exc:
            raise _os_error(exc, dest) from exc
        except sqlite3.Error as exc:
            if "full" in str(exc):  # SQLITE_FULL: the disk the copy is written to
                raise NoSpaceError(
                    f"the disk holding {dest} is full ({exc}): nothing of the backup was left there"
                ) from exc
            if "disk I/O" in str(exc):  # SQLITE_IOERR: a write of the copy failed
                raise _write_failed(exc, dest, source) from exc
            raise BackupError(f"cannot back up to {dest}: {exc}; nothing was left there") from exc
        _put_in_place(temp, dest)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def copy_database(
    source: Path, target: Path, *, progress: Callable[[int], None] | None = None, step_pages: int = STEP_PAGES
) -> tuple[int, str | None]:
    """Copy the SQLite database ``source`` to the new file ``target`` (0600) as one commit left
    it, while other processes write it; the bytes copied, and what SQLite's quick_check finds
    wrong in the copy (None: nothing). ``source`` is opened read-only: an
    older brain's database is not migrated, and its WAL is not folded in."""
    src, page_size = _open_source(source)
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        dst = sqlite3.connect(str(target), isolation_level=None)
        try:
            total_pages = [0]

            def step(status: int, remaining: int, total: int) -> None:
                total_pages[0] = total
                if progress:
                    progress((total - remaining) * page_size)

            src.backup(dst, pages=max(1, step_pages), progress=step)
            pages = int(dst.execute("PRAGMA page_count").fetchone()[0])
            problem = _check(dst)
        finally:
            # The copy keeps the source's journal mode (WAL) in its header: this, its only
            # connection, leaves no -wal or -shm beside it when it closes.
            dst.close()
        src.execute("COMMIT")
    finally:
        src.close()
    return pages * page_size, problem


def _open_source(source: Path) -> tuple[sqlite3.Connection, int]:
    """``source`` opened read-only inside the read transaction every step of the copy reads, and
    its page size (``_open_read_only``). SQLite opens the database file when it connects, and its
    WAL and shared memory by name at the first read: a ``brain index --rebuild`` swapping its
    folder in between (renameat2, while the backup ran) gave the old file read through the new
    index's WAL, pages of two databases, a torn copy. The file at the path is the one opened when
    it is the same before the connect and after the first read; else the database is opened again
    (``connect_unswapped``)."""
    page_sizes: list[int] = []

    def open_it() -> sqlite3.Connection:
        src, page_size = _open_read_only(source)
        page_sizes.append(page_size)
        return src

    src = connect_unswapped(
        source,
        open_it,
        torn=UnsoundDatabase,
        replaced=lambda: BackupError(f"{source} was replaced each time it was opened to be backed up: back up again"),
    )
    return src, page_sizes[-1]


def _open_read_only(source: Path) -> tuple[sqlite3.Connection, int]:
    """``source`` opened read-only inside the read transaction every step of the copy reads, and
    its page size. In a folder that cannot be written (a disk remounted read-only, a snapshot)
    SQLite cannot make the -shm file it opens a WAL database with: with no commit in the WAL
    (none, or empty) the file is the whole database and nobody can change it, so it is read as
    it is (``immutable``), as `brain status` and `brain ask` read it; it was called "not a
    sound SQLite database" and left out."""
    from .errors import read_only_failure

    uri = source.resolve().as_uri()
    wal = source.with_name(source.name + "-wal")
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        try:
            src = sqlite3.connect(f"{uri}?{flags}", uri=True, isolation_level=None, timeout=30)
        except sqlite3.Error as exc:
            raise BackupError(f"cannot open {source} to back it up: {exc}") from exc
        try:
            # One read transaction for every step: the backup API reads each step in it, so no
            # commit in between restarts the copy or tears it.
            src.execute("BEGIN")
        except BaseException:
            src.close()
            raise
        try:
            page_size = int(src.execute("PRAGMA page_size").fetchone()[0])
            src.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            src.close()
            if not read_only_failure(exc):
                raise UnsoundDatabase(
                    f"{source} is not a sound SQLite database ({exc}): it was not backed up; see `brain status`",
                    str(exc),
                ) from exc
            try:
                pending = wal.stat().st_size
            except OSError:
                pending = 0
            if flags == "mode=ro" and not pending:
                continue
            raise BackupError(
                f"cannot read {source} to back it up ({exc}): its folder cannot be written"
                + (
                    f", and SQLite reads the commits in its WAL ({_mb(pending)}) only through a -shm file"
                    if pending
                    else ""
                )
                + "; back up from a brain home this user may write (`brain status` says which folder)"
            ) from exc
        return src, page_size
    raise AssertionError("unreachable")


def _check(db: sqlite3.Connection) -> str | None:
    """What SQLite's quick_check finds wrong in a copy (and so in its source), or None."""
    try:
        return quick_check(db)
    except sqlite3.DatabaseError as exc:
        return str(exc)


# ----- what to copy ----------------------------------------------------------------------------


def _sources(
    home: Path, vault: str | os.PathLike[str] | None
) -> tuple[list[tuple[Path, Path, str]], list[tuple[Path, Path]], list[tuple[Path, str]]]:
    """The databases (source, place in the backup, kind) and other files (source, place) to copy,
    and what stands where a database should be but is no file (source, kind): left out, said."""
    databases: list[tuple[Path, Path, str]] = []
    files: list[tuple[Path, Path]] = []
    odd: list[tuple[Path, str]] = []
    if vault not in (None, ""):
        directory = built_index_dir(resolve_vault(vault))
        databases = [(directory / INDEX_FILE, Path("vaults") / directory.name / INDEX_FILE, "index")]
        _refuse_unreadable(databases)
        return databases, [], []
    # What this user may not read is the backup's one line, before anything is copied: passed
    # over, an index folder of mode 000 ended the look at the vaults (those after it left out
    # unsaid), a brain home of mode 000 was a traceback, and its vaults "nothing to back up"
    try:
        with _absent_is_none():
            for directory in sorted((home / "vaults").iterdir()):
                if _INDEX_FOLDER.fullmatch(directory.name) and (directory / INDEX_FILE).is_file():
                    databases.append((directory / INDEX_FILE, Path("vaults") / directory.name / INDEX_FILE, "index"))
                elif _cut_swap(directory):
                    # A rebuild killed between its two renames leaves the vault's one index (its
                    # history) under the retired name, which was passed over unsaid; it is copied
                    # into its place, where the next brain run on the home would put it back
                    place = directory.name[: -len(RETIRED_SUFFIX)]
                    databases.append((directory / INDEX_FILE, Path("vaults") / place / INDEX_FILE, "index"))
        ledger = config.db_path()
        with _absent_is_none():
            if ledger.exists() and not ledger.is_file():
                # A BRAIN_DB that is a FIFO, a socket or a device was passed over unsaid, as if
                # there were no ledger yet: the backup lacked what its user counted on it holding
                odd.append((ledger, "ledger"))
            elif ledger.is_file() and ledger.stat().st_size == 0 and _holds_text(ledger):
                # /proc/self/status says 0 bytes and holds text: skipped unsaid as an empty ledger,
                # while `brain turns` refuses it as no database
                odd.append((ledger, "ledger"))
            elif ledger.is_file() and ledger.stat().st_size > 0:
                databases.append((ledger, Path(LEDGER_FILE), "ledger"))
                aside = kept_aside_dir(ledger)
                for path in sorted(aside.rglob("*")) if aside.is_dir() else ():
                    # a row being written is hidden until renamed into place; the lock is no row
                    if path.is_file() and not path.name.startswith("."):
                        files.append((path, Path(kept_aside_dir(Path(LEDGER_FILE)).name) / path.relative_to(aside)))
        for name in HOME_FILES:
            if (home / name).is_file():
                files.append((home / name, Path(name)))
    except PermissionError as exc:
        raise BackupError(f"{_denied(Path(exc.filename or home))}: nothing was backed up") from exc
    _refuse_unreadable(databases)
    if not databases:
        if odd:
            raise BackupError(f"nothing to back up: {_not_a_file(*odd[0])}; {home} holds no index")
        raise NoIndexError(
            f"nothing to back up: {home} holds no index and no ledger yet (run `brain index --vault PATH` first)"
        )
    return databases, files, odd


def _not_a_file(path: Path, kind: str) -> str:
    """What stands at ``path``, where the ``kind`` database should be: "the ledger X is a FIFO, ..."."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = 0
    what = kind_of(mode)
    if what == "a file":  # 0 bytes to stat and text to read
        what = "a file of 0 bytes to stat that holds text (one of /proc or /sys?)"
    return f"the {kind} {path} is {what}, not a database file"


def _holds_text(path: Path) -> bool:
    """Whether ``path``, 0 bytes to stat, has something to read (a file of /proc or /sys)."""
    try:
        with path.open("rb") as handle:
            return bool(handle.read(16))
    except OSError:  # one this user may not read: nothing recorded in it, as `brain turns` says
        return False


def _cut_swap(directory: Path) -> bool:
    """Whether ``directory`` is an index under the retired name with none in its place."""
    name = directory.name
    if not name.endswith(RETIRED_SUFFIX) or not _INDEX_FOLDER.fullmatch(name[: -len(RETIRED_SUFFIX)]):
        return False
    return (directory / INDEX_FILE).is_file() and not (
        directory.with_name(name[: -len(RETIRED_SUFFIX)]) / INDEX_FILE
    ).exists()


@contextlib.contextmanager
def _absent_is_none() -> Iterator[None]:
    """A place that is not there (or not a folder) holds nothing to copy; one this user may not
    read is raised."""
    try:
        yield
    except PermissionError:
        raise
    except OSError:
        pass


def _refuse_unreadable(databases: list[tuple[Path, Path, str]]) -> None:
    """A database this user may not read (mode 000, another user's) is said before anything is
    copied, as every command says it; SQLite said "unable to open database file"."""
    for source, _, kind in databases:
        if kind == "index":
            said = unusable(source, "the index database", "`brain index` builds a new one")
        else:
            said = unusable(source, "the brain database", "brain starts a new one")
        if said:
            raise BackupError(f"{said}; nothing was backed up")


def _denied(path: Path) -> str:
    """Why this user may not read ``path``: a folder above it not to be searched, or ``path`` a
    folder it may not list, or a file it may not read; with the chmod that gives it back."""
    what = {"vaults": "the folder", INDEX_FILE: "the index database"}.get(path.name, "the file")
    said = unreachable(path, what)
    if said:
        return said
    return (
        f"{path} cannot be read by this user (permission denied): give your user access to it "
        f"(chmod u+rwx {shell_word(path)})"
    )


# ----- where it goes -------------------------------------------------------------------------


def _destination(destination: str | os.PathLike[str], refuse_place: Callable[[Path], None]) -> Path:
    raw = os.fspath(destination)
    if not raw.strip():
        raise ConfigError("no backup folder given: name a new folder, e.g. `brain backup ~/brain-backup`")
    path = config.user_path("DEST", raw).absolute()
    if path.name in ("", ".", ".."):
        raise ConfigError(f"{raw!r} names no new folder: name one, e.g. {shell_word(str(Path(raw) / 'brain-backup'))}")
    try:
        os.lstat(path)
    except OSError as exc:  # a name longer than the system takes (a paste gone wrong) was a traceback
        if exc.errno == errno.ENAMETOOLONG:
            raise ConfigError(
                f"cannot back up to {quoted(str(path))}: {exc.strerror} (a name in it longer than the system takes): "
                "name a new folder, e.g. `brain backup ~/brain-backup`"
            ) from None
    if not path.parent.is_dir():
        if not path.parent.exists():  # was "is not a folder" for one not there: make it first, with what
            # ... unless it would be made in a vault or BRAIN_HOME: the hint sent the user to make
            # a folder there (a vault's sync carries it), and the next try was refused there
            refuse_place(path.resolve())
            raise BackupError(
                f"{path.parent} does not exist: make it first (mkdir -p {shell_word(str(path.parent))}), "
                "or name a new folder in one that does"
            )
        raise BackupError(f"{path.parent} is not a folder: name a new folder in one")
    path = path.parent.resolve() / path.name
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise BackupError(f"{path} already exists: name a new folder (a backup never writes over anything)")
    if path.is_dir():
        try:
            empty = next(os.scandir(path), None) is None
        except OSError as exc:
            raise _os_error(exc, path) from exc
        if not empty:
            raise BackupError(
                f"{path} already exists and is not empty: name a new folder (a backup never writes over one)"
            )
        if os.path.ismount(path):
            # The copy is made beside DEST, on the disk above the mount: it filled that disk (its
            # room never asked) and ended in "Device or resource busy", the one rename refused
            raise BackupError(
                f"{path} is a mount point (another disk): name a new folder in it, "
                f"e.g. brain backup {shell_word(str(path / 'brain-backup'))}"
            )
    return path


def _refuse_place(dest: Path, home: Path, vault: str | os.PathLike[str] | None) -> None:
    """A backup inside the brain home would be copied by the next backup (and taken for its
    own folders); inside a vault, brain would write where it never writes, and the copy would
    travel with the vault's sync."""
    home = home.resolve()
    if dest == home or home in dest.parents:
        raise BackupError(f"{dest} is inside BRAIN_HOME ({home}): back up to a folder outside it")
    # A BRAIN_DB outside the home keeps its kept-aside rows beside it: a backup in there was
    # copied by the next one as rows, and held the hooks off the ledger while it was there
    aside = kept_aside_dir(config.db_path().expanduser().absolute()).resolve()
    if dest == aside or aside in dest.parents:
        raise BackupError(f"{dest} is inside the ledger's kept-aside folder ({aside}): back up to a folder outside it")
    vaults = [resolve_vault(vault)] if vault not in (None, "") else []
    for above in (dest, *dest.parents):  # a folder is a vault when brain keeps an index for it
        if above in vaults or (config.index_dir(above, checked=False) / INDEX_FILE).exists():
            raise BackupError(
                f"{dest} is inside the vault {above}: brain never writes in a vault; back up to a folder outside it"
            )


def _refuse_short_of_space(
    folder: Path, databases: list[tuple[Path, Path, str]], files: list[tuple[Path, Path]]
) -> None:
    needed = sum(disk_bytes(source) for source, _, _ in databases)
    for source, _ in files:
        with contextlib.suppress(OSError):
            needed += source.stat().st_size
    try:
        free = shutil.disk_usage(folder).free
        blocks = os.statvfs(folder).f_blocks if hasattr(os, "statvfs") else None
    except OSError:
        return  # cannot be told here: a full disk is said when the copy meets it
    if blocks == 0:  # /proc, /sys: no disk under it at all, so "0.0 MB free" was no reason to give
        raise BackupError(
            f"cannot write the backup in {folder}: it is not on a disk (a file system with no storage, "
            "as /proc and /sys are); name a folder on a disk"
        )
    if needed > free:
        raise NoSpaceError(
            f"not enough space for the backup in {folder}: it needs up to {_mb(needed)}, the disk has {_mb(free)} free"
        )


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


# ----- the temporary folder and the rename -------------------------------------------------


def _temp_prefix(dest: Path) -> str:
    return f".{dest.name[:50]}{_TEMP_MARK}"


@contextlib.contextmanager
def _temporary_folder(dest: Path) -> Iterator[Path]:
    """A new owner-only folder beside ``dest``, held by this process (a lock taken in it) until
    renamed, removed if anything fails."""
    temp = dest.with_name(f"{_temp_prefix(dest)}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        temp.mkdir(mode=0o700)
        os.chmod(temp, 0o700)  # whatever the umask
        # The lock is taken under a name the sweep of killed backups does not open, and renamed
        # into place held: made under its own name and taken a moment later, a backup starting
        # beside this one found it free in between, took the folder for a killed backup's and
        # removed it under this one (which then failed, "No such file or directory"). Until the
        # rename, the sweep asks after this process, which is alive.
        lock = os.open(temp / _LOCK_TAKING, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        shutil.rmtree(temp, ignore_errors=True)
        raise _os_error(exc, dest) from exc
    try:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            os.rename(temp / _LOCK_TAKING, temp / _LOCK)
        except OSError as exc:
            raise _os_error(exc, dest) from exc
        yield temp
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    finally:
        os.close(lock)


def _put_in_place(temp: Path, dest: Path) -> None:
    # The lock file goes first (the folder is ours still: its name holds our pid, which a
    # later backup asks after); the rename is the one step that makes DEST.
    (temp / _LOCK).unlink(missing_ok=True)
    try:
        os.rename(temp, dest)  # over an empty folder, or none
    except OSError as exc:
        shutil.rmtree(temp, ignore_errors=True)
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise BackupError(f"{dest} was made while the backup ran: nothing of the backup was left there") from exc
        raise _os_error(exc, dest) from exc
    with contextlib.suppress(OSError):
        _fsync(dest.parent)


def _remove_killed(dest: Path) -> None:
    """Remove the folders of backups beside ``dest`` (to it or to any other name there) that were
    killed midway: their lock is free, or (on a system without flock, or before the lock was
    made) their process is gone. Those of backups to other names went only when one was made
    to the same name again, and a backup a day to a dated name never was: each killed one's
    copy stayed, hidden, for good."""
    try:
        entries = [
            (entry, found)
            for entry in os.scandir(dest.parent)
            if (found := _TEMP_FOLDER.fullmatch(entry.name)) and entry.is_dir(follow_symlinks=False)
        ]
    except OSError:
        return
    for entry, found in entries:
        if _abandoned(Path(entry.path), found.group(1)):
            shutil.rmtree(entry.path, ignore_errors=True)


def _abandoned(folder: Path, pid: str) -> bool:
    if fcntl is not None:
        try:
            fd = os.open(folder / _LOCK, os.O_RDWR)
        except FileNotFoundError:
            pass  # not held yet, or taken away before the rename: ask after the process
        except OSError:
            return False
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                return False
            finally:
                os.close(fd)
    # gone only when the system says no process has it: another user's, or no way to tell, stays
    return running(int(pid)) is False


# ----- files ---------------------------------------------------------------------------------


def _private_folders(top: Path, folder: Path) -> None:
    """``folder`` and those between it and ``top`` made, owner-only."""
    for each in reversed([folder, *folder.parents]):
        if each == top or top not in each.parents:
            continue
        if not each.is_dir():
            each.mkdir(mode=0o700)
            os.chmod(each, 0o700)


def _copy_file(source: Path, top: Path, relative: Path, change: Callable[[bytes], bytes] | None = None) -> None:
    """Copy one small file to ``top / relative`` (its bytes through ``change``), owner-only
    whatever its mode was (a record names the user's files, a row holds a prompt)."""
    target = top / relative
    _private_folders(top, target.parent)
    try:
        with source.open("rb") as read:
            data = read.read()
    except FileNotFoundError:
        return  # a kept-aside row recorded meanwhile: it is in the ledger now
    if change is not None:
        data = change(data)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as write:
        write.write(data)


LEDGER_NOTE = "# brain backup: the ledger is brain.db beside this file; BRAIN_DB, as the home had it:\n"


def _ledger_beside(data: bytes) -> bytes:
    """A home's ``.env`` with its ``BRAIN_DB`` lines made comments: the backup's ledger is the
    ``brain.db`` beside it, where a brain run on the copy (or on the home restored from it)
    looks when BRAIN_DB is not set. A file brain does not read (not UTF-8) is copied as it is."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    spans = config.dotenv_spans(text, "BRAIN_DB")
    if not spans:
        return data
    head = text.rfind("\n", 0, spans[0][0]) + 1
    for start, end in reversed(spans):
        first = text.rfind("\n", 0, start) + 1
        lines = text[first:end].split("\n")
        text = text[:first] + "\n".join(f"# {line}" for line in lines) + text[end:]
    return (text[:head] + LEDGER_NOTE + text[head:]).encode("utf-8")


def _sync_tree(top: Path) -> None:
    """Everything in ``top`` on the disk before the rename makes it DEST."""
    for folder, _, names in os.walk(top):
        for name in names:
            _fsync(Path(folder) / name)
        _fsync(Path(folder))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_TOO_LARGE = (
    "a file of the backup is larger than this process may write (the file size limit, `ulimit -f`) "
    "or {dest}'s file system holds; raise the limit or back up to another disk; nothing was left there"
)


def _write_failed(exc: sqlite3.Error, dest: Path, source: Path | None) -> BrainError:
    """SQLite's "disk I/O error" writing a copy, its cause named where it can be told: SQLite says
    SQLITE_FULL for ENOSPC alone, and EFBIG (the file size limit, ``ulimit -f``) and a disk filled
    under a quota or by another writer came out as "disk I/O error", with nothing to act on."""
    needed = disk_bytes(source) if source is not None else 0
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        unlimited = limit == resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError):  # Windows: no such limit
        limit, unlimited = 0, True
    if not unlimited and needed > limit:
        return NoSpaceError(
            f"cannot write the copy of {source} ({_mb(needed)}) in {dest}: the file size limit (`ulimit -f`) "
            f"stops a file at {_mb(limit)}; raise it (`ulimit -f unlimited`) and back up again; nothing was left there"
        )
    try:
        free = shutil.disk_usage(dest.parent).free
    except OSError:
        free = None
    if free is not None and free < max(needed, 1 << 20):
        return NoSpaceError(
            f"the disk holding {dest} is full ({exc}, {_mb(free)} free): make space there or back up to "
            "another disk; nothing was left there"
        )
    return BackupError(
        f"cannot write the backup in {dest} ({exc}): see that its disk has space and works (df, dmesg) "
        "and that no file size limit stops the copy (`ulimit -f`); nothing was left there"
    )


def _os_error(exc: OSError, dest: Path) -> BrainError:
    where = exc.filename or dest
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return NoSpaceError(f"the disk holding {dest} is full ({exc.strerror}): nothing of the backup was left there")
    if exc.errno == errno.EFBIG:
        return NoSpaceError(f"cannot write {where} ({exc.strerror}): {_TOO_LARGE.format(dest=dest)}")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return NotWritableError(f"cannot write {where} ({exc.strerror}): back up to a folder you can write")
    return BackupError(f"cannot back up to {dest} ({where}: {exc.strerror or exc}): nothing was left there")
