"""A database whose record of its migrations (``_migrations``) is gone: which ran is read from
its schema where that tells it, never by running one again over its tables (brain/migrations.py)."""

from __future__ import annotations

import sqlite3

from brain.index.schema import INDEX_MIGRATIONS
from brain.migrations import Migrations, write_transaction


def _database_at(last: str) -> sqlite3.Connection:
    """A database that had the index migrations up to ``last``, its record of them dropped."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    steps = [name for name, _ in INDEX_MIGRATIONS.steps]
    partial = Migrations(INDEX_MIGRATIONS.name)
    for _, fn in INDEX_MIGRATIONS.steps[: steps.index(last) + 1]:
        partial(fn)
    partial.apply(conn)
    conn.execute("DROP TABLE _migrations")
    return conn


def test_the_migrations_a_database_had_are_read_from_its_schema_and_the_rest_then_run():
    conn = _database_at("m007_history")
    assert INDEX_MIGRATIONS.lost_record(conn)
    applied = INDEX_MIGRATIONS.applied_from_schema(conn)
    names = [name for name, _ in INDEX_MIGRATIONS.steps]
    assert applied == names[: names.index("m007_history") + 1]
    INDEX_MIGRATIONS.record(conn, applied)
    assert INDEX_MIGRATIONS.apply(conn) == names[len(applied) :]  # an upgrade, as from a sound one
    assert not INDEX_MIGRATIONS.lost_record(conn)


def test_a_schema_a_migration_of_rows_alone_leaves_as_it_was_tells_nothing():
    # m003_index_id writes a row and no table: whether it ran cannot be read from the schema
    assert INDEX_MIGRATIONS.applied_from_schema(_database_at("m002_lexical")) is None
    assert INDEX_MIGRATIONS.applied_from_schema(_database_at("m003_index_id")) is None


def test_a_schema_short_of_a_table_tells_nothing():
    conn = _database_at("m020_past_texts_in_segments")
    with write_transaction(conn):
        conn.execute("DROP TABLE links")
    assert INDEX_MIGRATIONS.applied_from_schema(conn) is None


def test_an_empty_database_has_lost_no_record():
    assert not INDEX_MIGRATIONS.lost_record(sqlite3.connect(":memory:"))


def test_the_tables_of_a_current_index_are_those_the_migrations_make():
    from brain.index.schema import LATEST_TABLES

    # a migration added: LATEST_TABLES names it and the tables once it ran (missing_tables reads it)
    last = INDEX_MIGRATIONS.steps[-1][0]
    assert (last, INDEX_MIGRATIONS.tables_made()[last]) == LATEST_TABLES
