"""schema.sql documents every table: it must build exactly what the migrations build."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from brain.db import MIGRATIONS, open_db
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.migrations import connect

SCHEMA = Path(__file__).resolve().parents[1] / "brain" / "schema.sql"


def _objects(conn: sqlite3.Connection) -> dict[str, str]:
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
        " AND name NOT LIKE '%_fts_%' AND name != '_migrations'"
    )
    return {name: re.sub(r"\s+", " ", sql).strip() for name, sql in rows}


def _section(marker: str) -> str:
    text = SCHEMA.read_text(encoding="utf-8")
    brain_part, index_part = text.split("-- ===== index database")
    return brain_part if marker == "brain" else index_part.split("\n", 1)[1]


def _from_schema(part: str) -> dict[str, str]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(_section(part))
    return _objects(conn)


def test_brain_db_matches_schema_sql(tmp_path):
    conn = open_db(tmp_path / "brain.db")
    assert _objects(conn) == _from_schema("brain")
    assert [name for name, _ in MIGRATIONS.steps] == MIGRATIONS.applied(conn)


def test_index_db_matches_schema_sql(tmp_path):
    store = IndexStore.open(tmp_path / "idx")
    assert _objects(store.conn) == _from_schema("index")
    assert [name for name, _ in INDEX_MIGRATIONS.steps] == INDEX_MIGRATIONS.applied(store.conn)


def test_migrations_are_recorded_once_and_reapplying_is_a_no_op(tmp_path):
    path = tmp_path / "brain.db"
    open_db(path).close()
    conn = open_db(path)
    assert MIGRATIONS.pending(conn) == []
    assert MIGRATIONS.apply(conn) == []
    count = conn.execute("SELECT count(*) FROM _migrations WHERE db = 'brain'").fetchone()[0]
    assert count == len(MIGRATIONS.steps)


def test_a_failing_migration_leaves_nothing_behind(tmp_path):
    from brain.migrations import Migrations

    migrations = Migrations("demo")

    @migrations
    def m001_ok(conn):
        conn.execute("CREATE TABLE ok (x)")

    @migrations
    def m002_broken(conn):
        conn.executescript("CREATE TABLE half (x); CREATE TABLE half (x);")

    conn = connect(str(tmp_path / "demo.db"))
    try:
        migrations.apply(conn)
    except sqlite3.OperationalError:
        pass
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "ok" in tables and "half" not in tables
    assert migrations.applied(conn) == ["m001_ok"]
