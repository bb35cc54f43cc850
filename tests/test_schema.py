"""schema.sql documents every table: it must build exactly what the migrations build."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

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


def test_brain_db_matches_schema_sql(tmp_path, closing):
    conn = closing(open_db(tmp_path / "brain.db"))
    assert _objects(conn) == _from_schema("brain")
    assert [name for name, _ in MIGRATIONS.steps] == MIGRATIONS.applied(conn)


def test_index_db_matches_schema_sql(tmp_path, closing):
    store = closing(IndexStore.open(tmp_path / "idx"))
    assert _objects(store.conn) == _from_schema("index")
    assert [name for name, _ in INDEX_MIGRATIONS.steps] == INDEX_MIGRATIONS.applied(store.conn)


def test_migrations_are_recorded_once_and_reapplying_is_a_no_op(tmp_path, closing):
    path = tmp_path / "brain.db"
    open_db(path).close()
    conn = closing(open_db(path))
    assert MIGRATIONS.pending(conn) == []
    assert MIGRATIONS.apply(conn) == []
    count = conn.execute("SELECT count(*) FROM _migrations WHERE db = 'brain'").fetchone()[0]
    assert count == len(MIGRATIONS.steps)


def test_a_failing_migration_leaves_nothing_behind(tmp_path, closing):
    from brain.migrations import Migrations

    migrations = Migrations("demo")

    @migrations
    def m001_ok(conn):
        conn.execute("CREATE TABLE ok (x)")

    @migrations
    def m002_broken(conn):
        conn.executescript("CREATE TABLE half (x); CREATE TABLE half (x);")

    conn = closing(connect(str(tmp_path / "demo.db")))
    try:
        migrations.apply(conn)
    except sqlite3.OperationalError:
        pass
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "ok" in tables and "half" not in tables
    assert migrations.applied(conn) == ["m001_ok"]


def test_a_migration_sqlite_already_rolled_back_reports_its_own_error(tmp_path, closing):
    # A full disk makes SQLite roll the transaction back itself: the ROLLBACK that follows
    # must not replace "database or disk is full" with "no transaction is active".
    from brain.migrations import Migrations

    migrations = Migrations("demo")

    @migrations
    def m001_disk_full(conn):
        conn.execute("CREATE TABLE t (x)")
        conn.execute("ROLLBACK")  # what SQLite does on SQLITE_FULL or an I/O error
        raise sqlite3.OperationalError("database or disk is full")

    conn = closing(connect(str(tmp_path / "demo.db")))
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        migrations.apply(conn)
    assert not conn.in_transaction
    assert migrations.applied(conn) == []


def test_a_failing_rollback_does_not_hide_the_migration_error(tmp_path, closing):
    from brain.migrations import Migrations

    class RollbackFails:
        """A connection whose ROLLBACK fails (the file went away, the disk is gone)."""

        def __init__(self, conn):
            self._conn = conn

        def __getattr__(self, name):
            return getattr(self._conn, name)

        def execute(self, sql, *args):
            if sql == "ROLLBACK":
                raise sqlite3.OperationalError("disk I/O error")
            return self._conn.execute(sql, *args)

    migrations = Migrations("demo")

    @migrations
    def m001_broken(conn):
        raise sqlite3.OperationalError("database or disk is full")

    conn = closing(connect(str(tmp_path / "demo.db")))
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        migrations.apply(RollbackFails(conn))


def test_a_full_disk_during_the_first_migration_is_what_brain_db_reports(tmp_path, monkeypatch):
    from brain import db_migrations
    from brain.db import BrainDatabaseError

    def disk_full(conn):
        conn.execute("ROLLBACK")
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(db_migrations.MIGRATIONS, "steps", [("m001_turns", disk_full)])
    with pytest.raises(BrainDatabaseError, match="database or disk is full") as info:
        open_db(tmp_path / "brain.db")
    assert "cannot rollback" not in str(info.value)


def test_a_new_database_another_process_is_writing_is_opened_once_it_is_free(tmp_path):
    """The Stop hooks of twenty sessions meet a new brain.db: while one writes it, switching it
    to WAL is "database is locked" at once (SQLite's deadlock rule skips the busy timeout), and
    the hook lost its turn. connect waits for it, as the busy timeout would."""
    import threading

    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # a new database, not yet WAL: another process's first write
    other.execute("CREATE TABLE t (x)")
    timer = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    timer.start()
    try:
        conn = connect(str(path))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
        conn.close()
    finally:
        timer.join()
        other.close()


def test_a_database_locked_past_the_busy_timeout_is_still_an_error(tmp_path):
    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE t (x)")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        connect(str(path), busy_timeout_ms=200)
    other.execute("ROLLBACK")
    other.close()
