"""A vault moved or renamed: its index, named after the vault's path (``config.index_dir``),
is found in the brain home and taken over, its history with it, instead of a first run
embedding every note again beside it (minutes on thousands of notes) with the history left
in a folder nothing reads. Nothing in an index folder names the vault's absolute path but the
meta row ``VAULT_KEY`` (read by ``store.recorded_vault``), so the folder moves whole."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import BrainError, IndexBusyError
from ..text import shell_word
from .files import INDEX_FILE
from .store import record_moved, recorded_vault, unrecorded_notes

log = logging.getLogger(__name__)

SERVE_SUFFIX = ".serve"  # the folder a server of the vault keeps beside its index (server/runtime.py)
SAMPLE = 50  # notes of the old index looked for in the vault: at least half must be there


# A vault path that is no UTF-8 (a folder named in Latin-1): SQLite's text is UTF-8, so its bytes
# are recorded in hex after this mark (a resolved path starts with "/" or a drive, never with it).
_BYTES_MARK = "bytes:"


def recorded_form(root: Path) -> str:
    """``root`` as the index records it (``VAULT_KEY``): as written, or its bytes where it is no UTF-8."""
    text = str(root)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _BYTES_MARK + os.fsencode(text).hex()
    return text


def _recorded_path(recorded: str) -> str:
    """The path ``recorded_form`` recorded, as the file system names it."""
    if recorded.startswith(_BYTES_MARK):
        try:
            return os.fsdecode(bytes.fromhex(recorded[len(_BYTES_MARK) :]))
        except ValueError:
            return recorded
    return recorded


@dataclass(frozen=True)
class LeftBehind:
    directory: Path  # the old index folder
    vault: str  # the path it recorded, no longer a folder


def left_behind(root: Path, directory: Path) -> list[LeftBehind]:
    """The index folders beside ``directory`` whose vault is gone and whose notes are in
    ``root``: at least half of those looked at are files there."""
    return [fits for folder in _others(directory) if (fits := _fits(root, folder)) is not None]


def _others(directory: Path) -> list[Path]:
    """The index folders beside ``directory`` (none where that folder cannot be listed)."""
    try:
        entries = list(os.scandir(directory.parent))
    except OSError:
        return []
    return [
        Path(entry.path)
        for entry in entries
        if not entry.name.endswith((".lock", ".rebuild", ".retired", SERVE_SUFFIX))
        and entry.path != str(directory)
        and entry.is_dir(follow_symlinks=False)
    ]


def _most_here(root: Path, paths: list[str]) -> bool:
    """At least half of ``paths`` (some) are files in ``root``."""
    return bool(paths) and sum(1 for p in paths if (root / p).is_file()) * 2 >= len(paths)


def _fits(root: Path, folder: Path) -> LeftBehind | None:
    """``folder``, when it is an index whose recorded vault is gone and whose notes are in ``root``."""
    database = folder / INDEX_FILE
    if not database.is_file():
        return None
    recorded = recorded_vault(database, SAMPLE)
    if recorded is None:
        return None
    vault, paths, before = _recorded_path(recorded[0]), recorded[1], recorded[2]
    if recorded[0] == recorded_form(root) and before is not None:
        vault = _recorded_path(before)  # a take-over by this path that stopped before its rename
    elif os.path.isdir(vault):
        return None  # that vault is still there: a copy of it is indexed on its own
    return LeftBehind(folder, vault) if _most_here(root, paths) else None


def made_before_recording(root: Path, directory: Path) -> list[Path]:
    """The index folders beside ``directory`` that record no vault path (made by a brain before
    it recorded one, not indexed since) and hold ``root``'s notes (at least half of those looked
    at). Never taken over unasked (``adopt``): nothing in one tells whether its vault moved to
    ``root`` or is still where it was, ``root`` a copy of it."""
    return [
        folder
        for folder in _others(directory)
        if (folder / INDEX_FILE).is_file() and _most_here(root, unrecorded_notes(folder / INDEX_FILE, SAMPLE) or [])
    ]


def adopt(root: Path, directory: Path, folder: Path) -> None:
    """Move ``folder`` (``made_before_recording``'s, the user said its vault moved to ``root``)
    into ``directory``, under both writer locks, when it still fits, ``directory`` is not there
    and no `brain serve` holds its server folder. ``BrainError`` (``VaultLocked``) otherwise."""
    from ..server import runtime
    from .writer_lock import lock_path, vault_lock

    serve = folder.with_name(folder.name + SERVE_SUFFIX)
    if os.path.lexists(serve) and runtime.folder_lock_is_held(serve):
        raise BrainError(f"a `brain serve` runs for the index {folder} (it holds {serve}): stop it, then `brain index`")
    with vault_lock(directory, wait=0) as held:
        try:
            with vault_lock(folder, wait=0):
                if os.path.lexists(directory) or folder not in made_before_recording(root, directory):
                    raise BrainError(
                        f"the index {folder} was not taken over: it or this vault's index changed meanwhile"
                    )
                os.rename(folder, directory)
                with contextlib.suppress(OSError):
                    lock_path(folder).unlink()
        except OSError as exc:
            raise BrainError(
                f"the index {folder} could not be taken over: {exc}; fix that and run `brain index` again"
            ) from exc
        finally:
            if not os.path.lexists(directory):
                held.drop_file()  # the lock file made for an index that is not there: beside nothing


def take_over(
    root: Path, directory: Path, *, wait: float = 0.0, waiting: Callable[[int | None], None] | None = None
) -> LeftBehind | None:
    """Move the index of the vault ``root`` was before into ``directory`` (not there yet), when
    exactly one is found and no `brain serve` of its old path runs. Returns it, or None.
    ``IndexBusyError`` when another process writes it past ``wait`` seconds (``waiting`` told as
    ``vault_lock`` tells it), ``BrainError`` when it cannot be moved (not writable): a first run
    from nothing beside it would embed every note again."""
    from .writer_lock import VaultLocked, lock_path, vault_lock

    found = left_behind(root, directory)
    if len(found) != 1:
        if found:  # two indexes both fit: which one is the user's to say
            names = ", ".join(f"{f.directory} (of {f.vault})" for f in found)
            log.warning("%s: indexes of vaults no longer there hold these notes: %s; left as they are", root, names)
        return None
    old = found[0]
    if _served(old):
        # a `brain serve` of the old path holds its files open, and would write on into this vault's
        log.warning(
            "%s: the index of %s (no longer there) was not taken over: a `brain serve` ran for it; "
            "`brain serve --stop --vault %s`, then `brain index` again",
            root,
            old.vault,
            shell_word(old.vault),
        )
        return None
    try:
        with vault_lock(old.directory, wait=wait, waiting=waiting) as held:
            # Looked at again, held: the run that held it (a copy of the vault at another path
            # taking it over) may have recorded its own path, or moved the folder, since the look
            if _fits(root, old.directory) != old:
                held.drop_file()  # the one this run made where the folder went: beside nothing
                return None
            # this path recorded first: killed before the run's first commit (after the rename, or
            # before it), the index is this path's still, not one a copy elsewhere would take
            record_moved(old.directory / INDEX_FILE, recorded_form(root), recorded_form(Path(old.vault)))
            os.rename(old.directory, directory)
            # its lock file, beside nothing now: a writer that opens it meanwhile finds it gone
            with contextlib.suppress(OSError):
                lock_path(old.directory).unlink()
    except VaultLocked as exc:
        # a copy of the vault at another path taking it over now: a run from nothing beside it
        # (minutes of embedding) would race it for a copy the other run may be about to record
        who = f" (pid {exc.holder})" if exc.holder else ""
        waited = f" (waited {wait:g} s)" if wait > 0 else ""
        raise IndexBusyError(
            f"the index of {old.vault} (a folder no longer there), which holds this vault's notes, is being written "
            f"by another brain process{who}{waited}: run `brain index` again once it is done (a run from nothing "
            "beside it would embed every note again)"
        ) from exc
    except (OSError, sqlite3.Error) as exc:
        # the folder not writable (renaming a folder writes its ".."), a mount point: a first run
        # beside it embedded every note again and left its history where no run looks again
        raise BrainError(
            f"the index of {old.vault} (a folder no longer there), which holds this vault's notes, could not be "
            f"taken over: {exc}; fix that and run `brain index` again, or move {old.directory} out of "
            f"{old.directory.parent} for a new index (its history stays in it)"
        ) from exc
    return old


def _served(old: LeftBehind) -> bool:
    """Whether a `brain serve` of the old path runs: it holds its serve.lock all its life, as
    `brain status` and `brain serve --stop` tell (``runtime.lock_is_held``). A killed one's
    folder, record and lock file are left as they are, as those leave them; a folder
    that is not where the old path's server keeps its files is taken for a live server's."""
    from ..server import runtime

    folder = old.directory.with_name(old.directory.name + SERVE_SUFFIX)
    if not os.path.lexists(folder):
        return False
    try:
        root = Path(old.vault)
        same = runtime.runtime_dir(root) == folder
    except (OSError, ValueError, BrainError):  # a path this home cannot place now: not guessed at
        return True
    return not same or runtime.lock_is_held(root)
