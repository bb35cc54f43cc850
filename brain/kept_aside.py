"""The folder beside brain.db where the hooks keep the rows they could not write while an
upgrade of it waits (``ledger.deferred`` writes them there and catches them up): where it is,
which of its files are rows, and how many wait. Standard library only: `brain status` counts
them without importing the ledger's writers and the database's migrations."""

from __future__ import annotations

from pathlib import Path

from . import config
from .errors import ConfigError

# The subfolder a catch-up moves the files it cannot record to.
REJECTED = "rejected"


def kept_aside_dir(path: Path) -> Path:
    """Where hooks keep the rows they could not write while an upgrade of ``path`` waits
    (``ledger.deferred``); while it holds any, hooks leave the database alone."""
    return path.with_name(path.name + ".kept-aside")


def is_kept_row(name: str) -> bool:
    """Whether a file of the kept-aside folder named ``name`` is a row waiting there: not a
    hidden one (a row being written, the lock) nor ``rejected/`` (what a catch-up set aside)."""
    return name.endswith(".json") and not name.startswith(".")


def waiting(db_path: Path | None = None) -> int:
    """How many rows are kept aside for ``db_path`` (0 when even where it is cannot be said)."""
    try:
        folder = kept_aside_dir(db_path or config.db_path())
        return sum(1 for p in folder.iterdir() if is_kept_row(p.name))
    except (OSError, ConfigError):
        return 0


def rejected(db_path: Path | None = None) -> list[Path]:
    """The files a catch-up moved to ``rejected/`` for ``db_path`` (none when that cannot be said)."""
    try:
        folder = kept_aside_dir(db_path or config.db_path()) / REJECTED
        return sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    except (OSError, ConfigError):
        return []


def rejected_line(count: int, folder: Path) -> str:
    """One line: ``count`` files kept aside held no row that could be recorded, and are in ``folder``."""
    return (
        f"{count} file{'s' if count != 1 else ''} kept aside held no row brain can record "
        f"(not JSON, too large, a field missing or refused): moved to {folder}, not deleted; the others are recorded"
    )
