"""Temporary files of atomic saves into the index folder, the orphans of killed saves, and the
folder's fsync that makes a save's rename durable.

A save writes ``<name>.<pid>.<random>.tmp`` and renames it over ``<name>``: unique per save, so
concurrent saves never collide, and the pid lets a later save clear what a killed one left
(the vector files and the recall cache can be large).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from ..processes import running


def temp_name(directory: Path, name: str) -> Path:
    """``<name>.<pid>.<random>.tmp`` in ``directory``."""
    return directory / f"{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def fsync_folder(directory: Path) -> None:
    """Make the renames into ``directory`` durable (POSIX); nothing where a folder cannot be
    opened or synced (Windows): the renames stand."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_orphans(directory: Path, names: Iterable[str]) -> None:
    """Temporary files of saves of these files killed mid-way (their process is gone)."""
    for name in names:
        for tmp in directory.glob(f"{name}.*.tmp"):
            parts = tmp.name[len(name) + 1 :].split(".")
            # ASCII digits, as a save writes them: int() read '²' as no number and failed the save
            if len(parts) == 3 and parts[0].isascii() and parts[0].isdigit() and not alive(int(parts[0])):
                tmp.unlink(missing_ok=True)


def alive(pid: int) -> bool:
    """Whether ``pid`` may be running: yes unless the system says no process has it (one of
    another user, or no way to tell: its file is left)."""
    return running(pid) is not False
