"""The telemetry and turn-ledger database (``BRAIN_DB``): one file for the user.

Tables are created by the named migrations registered on ``MIGRATIONS``; ``schema.sql``
documents the result. Standard library only: the Stop hook writes here.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from . import config
from .migrations import Migrations, connect

MIGRATIONS = Migrations("brain")

_SURROGATE = re.compile("[\ud800-\udfff]")


def open_db(path: Path | None = None) -> sqlite3.Connection:
    """Open (creating and migrating as needed) the brain database."""
    path = path or config.db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(str(path))
    conn.row_factory = sqlite3.Row
    MIGRATIONS.apply(conn)
    return conn


def storable(value: Any) -> Any:
    """``value`` with every string fit for SQLite: unpaired UTF-16 surrogates become U+FFFD.

    JSON may hold "\\ud83d" alone (JavaScript cuts strings inside emoji), and json.loads
    keeps it; SQLite's UTF-8 encoder refuses it. Walks lists and dicts (keys too), so a
    value can be cleaned before json.dumps.
    """
    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value
        # Through UTF-16: a real pair becomes its character, a lone half U+FFFD.
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [storable(v) for v in value]
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    return value


# Migrations are registered by the modules that own the tables; import them here so that
# open_db always sees the full list, in a fixed order. Append new modules at the end.
from . import db_migrations  # noqa: E402,F401
