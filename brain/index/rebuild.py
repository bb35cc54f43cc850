"""`brain index --rebuild`: a new index built beside the old one, then swapped in whole.

The new index is filled in ``<index folder>.rebuild`` (marked by ``rebuild.json``, which names
the model), while the old folder keeps answering. When it is complete, the WAL is folded
into the database and the two folders trade places: on Linux and macOS in one atomic
exchange, elsewhere by two renames. The database, its WAL and its FAISS file always move
together, so a reader never sees a database replaced under an open WAL. A rebuild that stops
(Ctrl-C, kill -9, a model that cannot load) changes nothing readers see; the next
``--rebuild`` with the same model resumes it. A damaged index is moved aside, never deleted.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import sqlite3
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import config
from ..errors import BrainError, IndexMismatchError, NoSpaceError
from ..text import REPORTED
from .files import INDEX_FILE, RECALL_CACHE_FILE, RETIRED_SUFFIX
from .health import index_errors, integrity, no_room, uncarried_history
from .store import IndexStore
from .tempfiles import fsync_folder
from .upgrades import newer_migrations

if TYPE_CHECKING:
    from .indexer import IndexReport

log = logging.getLogger("brain")

REBUILD_SUFFIX = ".rebuild"  # the folder a rebuild fills, beside the index folder
REBUILD_MARKER = "rebuild.json"  # in that folder while it is a rebuild in progress


def rebuild_dir(directory: Path) -> Path:
    return directory.with_name(directory.name + REBUILD_SUFFIX)


def rebuild(
    root: Path,
    directory: Path,
    model_name: str,
    index_into: Callable[[IndexStore], IndexReport],
    *,
    keep_history: bool = True,
) -> IndexReport:
    """Build a new index for ``root`` beside ``directory`` with ``index_into``, then swap it in.

    ``keep_history``: the new index starts with the old one's history (versions, link history,
    past chunks; ``index_into`` finishes carrying it, re-embedding past chunks when the model
    changed), also from an index that lost a table of its present; otherwise, or when its history
    itself is damaged (said in the report, ``history_left``), history starts again from the
    rebuild, and the damaged index moved aside keeps what is left of it. The caller holds the vault's
    writer lock. Returns ``index_into``'s report, with ``moved_aside`` set when a damaged index
    was moved out of the way.
    """
    put_back_cut_swap(directory)
    broken, missing = integrity(directory)
    # A newer brain's index (its record of migrations read, from a damaged file too): its history
    # is read by rules this code lacks, so neither carried nor counted; it is moved aside whole,
    # to .newer-<time>, for that brain to open (or repair) again. A table this code reads that is
    # not there may be one that brain renamed or dropped: no evidence of damage.
    newer = newer_migrations(directory)
    damage: str | None
    if newer:
        damage = f"upgraded by a newer brain: {', '.join(newer)}" + (f"; damaged: {broken}" if broken else "")
        keep_history = False
    else:
        damage = broken or (f"no such table: {', '.join(missing)}" if missing else None)
    if broken or (damage and not newer):
        log.warning(  # the report's moved_aside line says it again, even with -q and --json
            "the index database %s is damaged (%s); building a new one beside it",
            directory / INDEX_FILE,
            broken or damage,
            extra=REPORTED,
        )
    source = None
    lost_history = None
    # a table of the present dropped leaves the history readable: carried, as from a sound index
    uncarried = uncarried_history(directory) if damage and not newer else None
    if uncarried:  # even with --yes: what is left of it is then only in the folder moved aside
        lost_history = uncarried
    elif keep_history and (directory / INDEX_FILE).exists():
        with index_errors(directory, root):
            old = IndexStore.open(directory, create=False, rerecord=True)  # one from before history is migrated first
            try:
                source = old.history_fingerprint()
            finally:
                old.close()
    staging = rebuild_dir(directory)
    kept: list[str] = []  # what folders brain removes held that it did not put there
    try:
        with index_errors(staging, root):  # a failure here is about the new index, not the old
            for attempt in (1, 2):
                store, resumed = _open_staging(staging, model_name, source, kept)
                try:
                    if source is not None and store.get_meta("history_carry") is None:
                        # the tokenizer first: the past chunks carried in are indexed once, in it
                        store.take_fts_tokenizer(config.fts_tokenizer())
                        store.carry_history_from(directory / INDEX_FILE)
                    report = index_into(store)
                    store.checkpoint()
                except IndexMismatchError:
                    store.close()
                    if not resumed or attempt == 2:
                        raise
                    # Same model name, other vectors (the model folder changed): start over.
                    log.warning("the interrupted rebuild in %s holds other vectors; starting it over", staging)
                    left = _remove_old(staging, directory)
                    kept.extend([str(left)] if left else [])
                    continue
                except BaseException as exc:
                    _stopped(store, staging, said=_no_room(exc))
                    raise
                store.close()
                break
    except NoSpaceError as exc:  # the stopped rebuild takes some of that disk itself: say how much
        raise NoSpaceError(_with_staging(str(exc), staging)) from exc
    held = IndexStore.history_at(directory) if lost_history else None
    # a newer brain's, moved aside whole for it: .newer-<time>, not .damaged-<time>
    report.moved_aside, swapped_out = _swap_in(staging, directory, damage, aside="newer" if newer else "damaged")
    for each in [*kept, *swapped_out]:
        say_kept(report, each)
    if report.moved_aside:
        _say_moved_aside(
            report, report.moved_aside, damage, newer, broken, lost_history, held, carried=source is not None
        )
    return report


def _say_moved_aside(
    report: IndexReport,
    aside: str,
    damage: str | None,
    newer: list[str],
    broken: str | None,
    lost_history: str | None,
    held: dict[str, Any] | None,
    *,
    carried: bool,
) -> None:
    """The report's warning on the index a rebuild moved to ``aside``: why, and
    what became of its history; ``history_left`` set where what is left of it is only there. In
    the report, not the log: the CLI says it once, even with --json and --quiet."""
    moved = f"the {'' if newer else 'damaged '}index ({damage}) was moved to {aside}"
    if newer and broken:  # kept for that brain, which can repair it: not to be deleted unread
        report.history_left = broken
        message = (
            f"{moved}; its history was not carried into the new index (this brain cannot read it by the"
            " newer rules): what is left of it is only there, keep that folder for a brain of that version"
            " (its `brain index --repair`)"
        )
    elif newer:
        message = (
            f"{moved}; its history was not carried into the new index (this brain cannot read it by the"
            " newer rules): a brain of that version opens it there"
        )
    elif lost_history:  # the one copy of what the notes once said: not to be deleted unread
        report.history_left = lost_history
        message = (
            f"{moved}; its history{_held(held)} could not be carried into the new index ({lost_history}),"
            " which keeps history from now on: what is left of it is only there, keep that folder"
        )
    elif carried:
        message = f"{moved}; its history was carried into the new index: delete it when you no longer need it"
    else:
        message = f"{moved}; delete it when you no longer need it"
    report.warnings.append({"path": aside, "message": message})


def say_kept(report: IndexReport, kept: str | None) -> None:
    """In the report (the CLI says it once, even with --json and --quiet): the folder that keeps
    what the replaced index folder held that brain did not put there."""
    if kept:
        report.kept_aside.append(kept)
        message = (
            f"the replaced index folder held files brain did not put there: they are kept in {kept}"
            " (brain's own files deleted); move back what you need and delete that folder"
        )
        report.warnings.append({"path": kept, "message": message})


def _held(held: dict[str, Any] | None) -> str:
    """(3 past versions of 2 notes, 16 closed links): what history an index holds, if read."""
    if not held or held.get("damaged"):
        return ""
    versions, notes, edges = held["past_versions"], held["notes_with_past"], held["closed_edges"]
    return f" ({versions} past version{'s' * (versions != 1)} of {notes} note{'s' * (notes != 1)}, {edges} closed link{'s' * (edges != 1)})"


def _no_room(exc: BaseException) -> bool:
    """A full disk, which the error (``_with_staging``) says stopped the rebuild, and where."""
    return isinstance(exc, NoSpaceError) or (isinstance(exc, sqlite3.OperationalError) and no_room(exc))


def _with_staging(message: str, staging: Path) -> str:
    """A full disk during a rebuild, and what the stopped rebuild kept of it (nothing, when it
    kept nothing): a rebuild needs room for a second index beside the first."""
    try:
        size = sum(f.stat().st_size for f in staging.rglob("*") if f.is_file())
    except OSError:
        size = 0
    if not size:
        return message
    return (
        f"{message}; the stopped rebuild in {staging} takes {size / 1e6:.1f} MB of it and needs room for a whole"
        " index beside the one in use: `brain index --rebuild` resumes it once there is (or delete that folder)"
    )


def _open_staging(staging: Path, model_name: str, history: str | None, kept: list[str]) -> tuple[IndexStore, bool]:
    """The rebuild folder: resumed when an interrupted rebuild with this model (carrying the
    history of the index as it is now, or none) left it, else new; ``kept`` gets where what the
    folder there held that brain did not put there was kept."""
    marker = staging / REBUILD_MARKER
    if staging.exists():
        try:
            found = json.loads(marker.read_text(encoding="utf-8"))
            resumable = found.get("model") == model_name and found.get("history") == history
        except (OSError, ValueError, AttributeError):
            resumable = False  # not a rebuild in progress: the old index of a swap cut short
        if resumable:
            try:
                store = _read_once(staging)
            except sqlite3.DatabaseError as exc:
                log.warning("the interrupted rebuild in %s is unreadable (%s); starting over", staging, exc)
            else:
                log.info("resuming the interrupted rebuild in %s", staging)
                return store, True
        moved = _remove_old(staging, staging.with_name(staging.name[: -len(REBUILD_SUFFIX)]), said=False)
        if moved:
            kept.append(str(moved))
        if staging.exists():  # e.g. an old index built by another user (sudo) under this name
            raise BrainError(
                f"cannot remove {staging}, left by an earlier rebuild ({_why_not_removed(staging)}): delete it"
                " yourself (it may belong to another user) and run `brain index --rebuild` again"
            )
    staging.mkdir(mode=0o700, parents=True)
    marker.write_text(json.dumps({"model": model_name, "started": time.time(), "history": history}), encoding="utf-8")
    return IndexStore.open(staging), False


def _read_once(staging: Path) -> IndexStore:
    """The interrupted rebuild's index, opened and read once; ``sqlite3.DatabaseError`` when it
    cannot be, nothing of it left open (it was, until a full collection: its files, deleted as the
    rebuild started over, were held with their disk space)."""
    store = IndexStore.open(staging)
    try:
        store.counts()
    except BaseException:
        store.close()
        raise
    return store


def _stopped(store: IndexStore | None, staging: Path, *, said: bool = False) -> None:
    """A rebuild that stops keeps what it embedded for the next ``--rebuild``, unless nothing;
    ``said``: the error says so (a full disk: ``_with_staging``), a warning before it said it twice."""
    try:
        done = store.counts()["notes"] if store is not None else 0
    except sqlite3.Error:
        done = 0
    if store is not None:
        store.close()
    if not done:
        left = _remove_old(staging, staging.with_name(staging.name[: -len(REBUILD_SUFFIX)]), said=False)
        if left:
            log.warning("the stopped rebuild's folder held files brain did not put there: they are kept in %s", left)
    elif not said:
        log.warning(
            "the rebuild stopped after %d notes; the previous index still answers, and "
            "`brain index --rebuild` resumes it",
            done,
        )


def _swap_in(
    staging: Path, directory: Path, damage: str | None, *, aside: str = "damaged"
) -> tuple[str | None, list[str]]:
    """Put the completed rebuild in the index folder's place; the old folder goes (its database
    with its WAL and FAISS file, all of brain's files in it at once). Readers that hold the old
    database open keep reading it; new readers open the new one. Returns where a damaged index
    was moved (named ``<folder>.<aside>-<time>``), and where what the old folder held that brain
    did not put there was kept (``<folder>.kept-<time>``)."""
    moved = None
    kept: list[Path] = []
    try:
        if not directory.exists():
            os.rename(staging, directory)
        elif not damage and _exchange(staging, directory):  # atomic: there is always an index to open
            kept.extend(_kept_list(_remove_old(staging, directory)))
        else:
            # A damaged index is kept for the user, under a name nothing takes for an index;
            # a sound one waits under the retired name until the new one is in place.
            if damage:
                old = _move_aside(directory, aside)
            else:
                old = directory.with_name(directory.name + RETIRED_SUFFIX)
                kept.extend(_kept_list(_remove_old(old, directory)))  # one a swap cut short left
                if old.exists():  # what could not be deleted (said): no rename goes over it
                    _rmtree(old, ignore_errors=True)
                os.rename(directory, old)
            try:
                os.rename(staging, directory)
            except OSError:
                os.rename(old, directory)
                raise
            if damage:
                moved = old
            else:
                kept.extend(_kept_list(_remove_old(old, directory)))
    except OSError as exc:  # e.g. Windows, where a folder with open files cannot be renamed
        raise BrainError(
            f"the rebuilt index is complete in {staging} but could not take the place of {directory} "
            f"({exc.strerror or exc}); stop other brain processes on this vault and run "
            "`brain index --rebuild` again: it resumes from there"
        ) from exc
    (directory / REBUILD_MARKER).unlink(missing_ok=True)
    fsync_folder(directory.parent)
    return (str(moved) if moved else None), [str(each) for each in kept]


def _kept_list(kept: Path | None) -> list[Path]:
    return [kept] if kept else []


def brains_own(name: str) -> bool:
    """Whether a file of this name in an index folder is one brain makes there: the database
    with its -wal, -shm and -journal, the vector files, the postings, the recall cache, the
    background work's locks and failure marks, a rebuild's marker, and the temporary files of
    saves of these (``tempfiles.temp_name``). Anything else is the user's."""
    from .background import KINDS
    from .postings_due import FILE as POSTINGS_FILE
    from .vectors import DELTA_FILE, FAISS_FILE, SIDECAR_FILE

    saved = (FAISS_FILE, DELTA_FILE, SIDECAR_FILE, POSTINGS_FILE, RECALL_CACHE_FILE)
    own = {INDEX_FILE, *(INDEX_FILE + end for end in ("-wal", "-shm", "-journal")), *saved, REBUILD_MARKER}
    own.update(f"{kind.name}.{end}" for kind in KINDS for end in ("lock", "failed"))
    if name in own:
        return True
    for each in saved:  # <name>.<pid>.<random>.tmp
        if name.startswith(each + "."):
            parts = name[len(each) + 1 :].split(".")
            return len(parts) == 3 and parts[0].isdigit() and parts[2] == "tmp"
    return False


def _why_not_removed(folder: Path) -> str:
    """Why ``folder`` is still there, for the message: the error deleting one of brain's files
    in it, or the folder itself (only brain's files are tried)."""
    try:
        for name in os.listdir(folder):
            if brains_own(name) and _regular(folder / name):
                (folder / name).unlink()
        folder.rmdir()
    except OSError as exc:
        return str(exc.strerror or exc)
    return "it came back"


def _remove_old(folder: Path, directory: Path, *, said: bool = True) -> Path | None:
    """Delete the index a rebuild replaced (or a swap cut short left), brain's files in it by
    name; what else it holds, the user's (a folder at vectors.faiss that brain refused, a note
    put there), is kept: the folder, emptied of brain's files, goes to ``<directory>.kept-<time>``,
    returned. What cannot be deleted is said, not left silently."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
    except FileNotFoundError:
        return None
    except OSError:
        names = []
    for name in names:
        if brains_own(name):
            path = folder / name
            with contextlib.suppress(OSError):  # what is left is said below
                if stat.S_ISREG(path.lstat().st_mode):  # a folder (or link) of that name is not brain's
                    path.unlink()
    try:
        folder.rmdir()
        return None
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:
        left = any(not brains_own(name) or not _regular(folder / name) for name in os.listdir(folder))
    except OSError:
        left = False
    if not left:
        if not said:  # the caller says it
            return None
        log.warning("the replaced index could not be deleted from %s; delete it yourself", folder)
        return None
    try:
        return _move_aside(folder, "kept", directory)
    except OSError:
        log.warning(
            "the replaced index in %s holds files brain did not put there, left in it; delete it yourself", folder
        )
        return None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _rmtree(folder: Path, *, ignore_errors: bool = False) -> None:
    """``shutil.rmtree``, imported here: with nothing to remove (`brain status`, a `brain index`
    with nothing left over) no shutil is imported, nor its bz2 and lzma."""
    import shutil

    shutil.rmtree(folder, ignore_errors=ignore_errors)


def _move_aside(directory: Path, label: str = "damaged", named_for: Path | None = None) -> Path:
    """Move a damaged index to a name of its own (``named_for``'s name, by default its own, with
    the label and the time); never over an earlier one the user has not looked at yet, even one
    made between the look and the rename."""
    for _ in range(100):
        aside = _damaged_name(named_for or directory, label)
        try:
            _rename_noreplace(directory, aside)
            return aside
        except FileExistsError:
            continue  # taken meanwhile: the next name
    raise FileExistsError(errno.EEXIST, "no free name to move the damaged index to", str(directory))


def _damaged_name(directory: Path, label: str = "damaged") -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate, n = directory.with_name(f"{directory.name}.{label}-{stamp}"), 1
    while candidate.exists():  # never over an earlier one the user has not looked at yet
        n += 1
        candidate = directory.with_name(f"{directory.name}.{label}-{stamp}-{n}")
    return candidate


def put_back_cut_swap(directory: Path) -> None:
    """A swap by two renames cut short between them (kill -9) leaves no index folder, the old
    index under the retired name and the new one in the rebuild folder, marker and all: the old
    one goes back in place (the next ``--rebuild`` resumes the new one), where it was deleted
    and a new, empty index begun, history lost. Call with the vault's writer lock held."""
    retired = directory.with_name(directory.name + RETIRED_SUFFIX)
    if not directory.exists() and (retired / INDEX_FILE).exists():
        os.rename(retired, directory)
        log.warning(
            "a rebuild stopped while it swapped in the new index: the previous index is back in %s"
            " (`brain index --rebuild` finishes the new one)",
            directory,
        )


def remove_leftovers(directory: Path) -> str | None:
    """What a swap cut short leaves: the old index under the rebuild name (without its marker)
    or under the retired name (then put back if no index took its place). A rebuild in
    progress (marker present) is left for --rebuild. Returns where what such a folder held that
    brain did not put there was kept, if anything."""
    put_back_cut_swap(directory)
    staging = rebuild_dir(directory)
    kept = None
    if staging.exists() and not (staging / REBUILD_MARKER).exists():
        kept = _remove_old(staging, directory)
    retired = directory.with_name(directory.name + RETIRED_SUFFIX)
    if retired.exists():
        kept = _remove_old(retired, directory) or kept
    return str(kept) if kept else None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically where the system can (Linux renameat2, macOS renamex_np)."""
    return _rename_with(a, b, linux=2, darwin=2) == 0  # else the caller renames twice


def _rename_noreplace(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst``, or FileExistsError if something is there, whatever comes
    there meanwhile: a plain rename replaces an empty folder (POSIX)."""
    if sys.platform == "win32":  # its rename never replaces a folder
        os.rename(src, dst)
        return
    failed = _rename_with(src, dst, linux=1, darwin=4)  # RENAME_NOREPLACE, RENAME_EXCL
    if failed == 0:
        return
    if failed is not None and failed not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        raise OSError(failed, os.strerror(failed), str(src), None, str(dst))
    # no such rename here, or not on this file system: the name taken first (mkdir fails
    # if it exists), then the rename over that empty folder of ours; one put in its place
    # that is not empty makes the rename fail, never replaced
    os.mkdir(dst)
    try:
        os.rename(src, dst)
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(dst)
        raise


def _rename_with(a: Path, b: Path, *, linux: int, darwin: int) -> int | None:
    """renameat2 (Linux) or renamex_np (macOS) with these flags: 0 done, else its errno; None
    where neither is there."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
            at_fdcwd = -100
            fn = libc.renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
            done = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), linux)
        elif sys.platform == "darwin" and hasattr(libc, "renamex_np"):
            fn = libc.renamex_np
            fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
            done = fn(os.fsencode(a), os.fsencode(b), darwin)
        else:
            return None
    except (OSError, AttributeError):
        return None
    return 0 if done == 0 else ctypes.get_errno()


def rebuild_status(directory: Path) -> dict[str, Any] | None:
    """A rebuild running or stopped beside the index: its folder, model and notes so far."""
    staging = rebuild_dir(directory)
    try:
        model = json.loads((staging / REBUILD_MARKER).read_text(encoding="utf-8")).get("model")
    except (OSError, ValueError, AttributeError):
        return None
    return {"path": str(staging), "model": model, "notes": IndexStore.note_count_at(staging)}
