"""The telemetry and turn-ledger database (``BRAIN_DB``): one file for the user.

Tables are created by the named migrations registered on ``MIGRATIONS``; ``schema.sql``
documents the result. Standard library only: the Stop hook writes here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from . import config
from .migrations import Migrations, connect

MIGRATIONS = Migrations("brain")


def open_db(path: Path | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the brain database."""
    path = path or config.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(str(path))
    conn.row_factory = sqlite3.Row
    MIGRATIONS.apply(conn)
    return conn


# Migrations are registered by the modules that own the tables; import them here so that
# open_db always sees the full list, in a fixed order. Append new modules at the end.
from . import db_migrations  # noqa: E402,F401
