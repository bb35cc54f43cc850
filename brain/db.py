"""The telemetry and turn-ledger database (``BRAIN_DB``): one file for the user.

Tables are created by the named migrations in ``db_migrations``; ``schema.sql`` documents the
result. Standard library only: the Stop hook writes here.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from . import config
from .db_migrations import MIGRATIONS
from .migrations import connect


def open_db(path: Path | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the brain database."""
    path = path or config.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(str(path))
    conn.row_factory = sqlite3.Row
    MIGRATIONS.apply(conn)
    return conn
