"""A database a newer brain upgraded, opened by this (older) code: a downgrade, two installs
sharing BRAIN_HOME, or a `brain serve` / `brain mcp` started before `pip install -U`.

"Newer" is faked as such a brain leaves it: a record in ``_migrations`` of a migration this code
does not have, and a column and a table of its own. This code writes nothing into such a database
(its older rules mixed with the newer ones), in one line naming the migration and the way out;
what only reads goes on, said once; the hooks keep their rows aside for the newer brain.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import modes_binding_prefix
from ledger_helpers import hook_payload, run_hook
from serve_helpers import BrainProcess, kill_recorded_server, mcp_call, run_brain, served, wait_until
from test_hardening_index import _brain, _chmod_tree

from brain import config, migrations
from brain import db as db_module
from brain.autorecall import hook as prompt_hook
from brain.child_process import python_module_command
from brain.cli import cli
from brain.db import NewerLedger, kept_aside_dir, open_db
from brain.db_migrations import MIGRATIONS
from brain.errors import BrainError, NewerDatabaseError
from brain.index import background, fts_merge, postings_child, postings_due, store_open, vectors
from brain.index.files import RECALL_CACHE_FILE
from brain.index.health import index_errors
from brain.index.indexer import index_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.index.upgrades import schema_changed
from brain.ledger import deferred
from brain.ledger.hook import record_stop
from brain.server import client, protocol
from brain.server.service import SUPERSEDED_ANSWER

NEWER = "m999_from_a_newer_brain"
REFUSED = "was upgraded by a newer brain (m999_from_a_newer_brain), which"


def _make_newer(database: Path, db: str, table: str) -> None:
    """Leave ``database`` as a newer brain's migration would: recorded, a column and a table added."""
    conn = sqlite3.connect(database, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN newer_rule TEXT")
        conn.execute("CREATE TABLE newer_things (x)")
        conn.execute("INSERT INTO _migrations (db, name, applied_at) VALUES (?, ?, ?)", (db, NEWER, time.time()))
        conn.execute("COMMIT")
    finally:
        conn.close()


def _index_db(vault: Path) -> Path:
    return config.index_dir(vault.resolve()) / "index.db"


def _paths(vault: Path) -> set[str]:
    conn = sqlite3.connect(_index_db(vault))
    try:
        return {row[0] for row in conn.execute("SELECT path FROM notes")}
    finally:
        conn.close()


@pytest.fixture
def newer_index(toy_vault: Path) -> Path:
    """The toy vault indexed, then upgraded by a "newer brain"; a note added since."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
    write(toy_vault, "Added.md", "# Added\n\nA note saved after the newer brain indexed the vault.\n")
    return toy_vault


def test_unknown_lists_the_migrations_this_code_lacks(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    INDEX_MIGRATIONS.apply(conn)
    assert INDEX_MIGRATIONS.unknown(conn) == []
    conn.execute("INSERT INTO _migrations VALUES (?, ?, ?)", (INDEX_MIGRATIONS.name, NEWER, time.time()))
    conn.execute("INSERT INTO _migrations VALUES ('brain', 'm999_of_the_ledger', 0)")  # another database's
    assert INDEX_MIGRATIONS.unknown(conn) == [NEWER]
    assert INDEX_MIGRATIONS.pending(conn) == []
    conn.close()


@pytest.mark.parametrize(
    "args",
    [["index"], ["index", "--repair"], ["prune", "--vacuum"], ["prune", "--before", "2030-01-01"]],
    ids=["index", "repair", "prune-vacuum", "prune-before"],
)
def test_commands_that_write_the_index_refuse_in_one_line(newer_index, args):
    before = _paths(newer_index)
    result = CliRunner().invoke(cli, [*args, "--vault", str(newer_index)])
    assert result.exit_code == 1, result.output
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in result.output, result.output
    assert REFUSED in line and "this brain does not write it" in line, line
    assert "upgrade brain to the version that made it" in line and "`brain index --rebuild`" in line, line
    assert _paths(newer_index) == before  # the note added was not indexed by the older rules


@pytest.mark.parametrize(
    "args",
    [["ask", "how should agent memory work"], ["status"], ["note", "Vannevar Bush"], ["history", "Vannevar Bush"]],
    ids=["ask", "status", "note", "history"],
)
def test_commands_that_read_the_index_answer_and_say_it_once(newer_index, args):
    before = _paths(newer_index)
    result = CliRunner().invoke(cli, [*args, "--vault", str(newer_index)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert result.output.count(REFUSED) == 1, result.output
    assert "read as it is, never updated by this brain" in result.output
    assert _paths(newer_index) == before  # ask's update did not write the note added


def _make_newer_renaming(database: Path, change: str) -> None:
    """A newer brain's migration that is not additive: it renamed what this code reads."""
    conn = sqlite3.connect(database, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(change)
        conn.execute(
            "INSERT INTO _migrations (db, name, applied_at) VALUES (?, ?, ?)",
            (INDEX_MIGRATIONS.name, NEWER, time.time()),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


RENAMES = {
    "column": "ALTER TABLE notes RENAME COLUMN path TO vault_path",
    "table": "ALTER TABLE note_versions RENAME TO versions",
}


@pytest.mark.parametrize("change", list(RENAMES), ids=list(RENAMES))
@pytest.mark.parametrize(
    "args",
    [
        ["ask", "how should agent memory work"],
        ["ask", "how should agent memory work", "--as-of", "today"],
        ["status"],
        ["history", "Vannevar Bush"],
        ["note", "Vannevar Bush"],
        ["neighbours", "Vannevar Bush"],
    ],
    ids=["ask", "ask-as-of", "status", "history", "note", "neighbours"],
)
def test_a_newer_index_that_renamed_what_this_brain_reads_is_one_line_naming_the_way_out(toy_vault, change, args):
    """Readers took the newer schema for additive: a column renamed was "could not be used (no
    such column: path)", a table renamed "lacks a table it needs ... the damaged index", and
    `brain note` and `neighbours` a traceback. Now: one line naming the newer brain and the fix."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    _make_newer_renaming(_index_db(toy_vault), RENAMES[change])
    args = [time.strftime("%Y-%m-%d") if each == "today" else each for each in args]  # the end of this day
    result = CliRunner().invoke(cli, [*args, "--vault", str(toy_vault)])
    assert isinstance(result.exception, SystemExit | None), result.exception  # a traceback in a shell
    if result.exit_code == 0:  # what it reads was not renamed (status and note read no version)
        assert change == "table" and args[0] in ("status", "note", "neighbours"), result.output
        return
    assert result.exit_code == 1, result.output
    [line] = [each for each in result.stderr.splitlines() if each.startswith("Error: ")]
    assert REFUSED in line, result.stderr
    assert "this brain cannot read it (no such" in line and "damaged" not in line, line
    assert "upgrade brain to the version that made it" in line and "`brain index --rebuild`" in line, line


@pytest.mark.parametrize(("change", "tool"), [("column", "get_note"), ("table", "history")])
def test_brain_mcp_on_a_newer_index_it_cannot_read_says_so_at_once(toy_vault, monkeypatch, change, tool):
    """Its own service stopped indexing with no index to answer from, still "starting": each call
    waited its whole wait (300 s), then said the index was still loading. And a read failing on
    the index it loaded was "OperationalError: no such table: note_versions"."""
    from brain.mcp import backend

    # The wait run out says "still loading" (``Starting``), whatever the machine's load: the answer
    # is the refusal, so it came before. (It was bounded at 20 s of a 30 s wait, which a loaded
    # machine took in starting the service and its pass.)
    monkeypatch.setattr(backend, "LOCAL_WAIT", 120.0)
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    _make_newer_renaming(_index_db(toy_vault), RENAMES[change])
    result = mcp_call(toy_vault, tool, {"note": "Vannevar Bush"})
    assert result.is_error, result
    said = result.content[0].text
    assert "still loading" not in said and "still starting" not in said, said  # (said "starting" since stop 72)
    assert REFUSED in said and f"this brain cannot read it (no such {change}" in said and "\n" not in said, said


def test_rebuild_replaces_a_newer_index_this_brain_cannot_read(toy_vault):
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    _make_newer_renaming(_index_db(toy_vault), RENAMES["column"])
    result = CliRunner().invoke(cli, ["index", "--rebuild", "--vault", str(toy_vault)])
    assert result.exit_code == 0, result.output
    asked = CliRunner().invoke(cli, ["ask", "how should agent memory work", "--vault", str(toy_vault)])
    assert asked.exit_code == 0, asked.output


def _checkpointed(database: Path) -> tuple[int, int]:
    """``database`` with its WAL written into it (what a damaged page then holds is the file's);
    the notes table's first page and the page size."""
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'notes'").fetchone()
        [size] = conn.execute("PRAGMA page_size").fetchone()
        return root, size
    finally:
        conn.close()


def _damage_notes(database: Path, how: str) -> None:
    """A newer index damaged: the notes table's first page overwritten, its record of migrations
    left readable (page 2), or the file cut short, which leaves its schema unreadable too."""
    root, size = _checkpointed(database)
    if how == "page":
        with open(database, "r+b") as handle:
            handle.seek((root - 1) * size)
            handle.write(os.urandom(size))
        conn = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
        assert INDEX_MIGRATIONS.unknown(conn) == [NEWER]  # still a newer brain's index, as far as can be read
        conn.close()
    else:
        os.truncate(database, database.stat().st_size // 3)


@pytest.mark.parametrize("how", ["page", "truncated"])
@pytest.mark.parametrize(
    "args",
    [["ask", "how should agent memory work"], ["status"], ["note", "Vannevar Bush"], ["history", "Vannevar Bush"]],
    ids=["ask", "status", "note", "history"],
)
def test_a_newer_index_that_is_damaged_is_said_damaged_not_newer(newer_index, args, how):
    """Once the index was newer, any failed read was blamed on the newer brain: a corrupt page of
    notes was "this brain cannot read it (database disk image is malformed: the newer brain changed
    what this brain reads); upgrade brain ...", which no upgrade mends. It is damage, said as such,
    with what mends it: this brain's --repair is refused on a newer index, its --rebuild is not."""
    _damage_notes(_index_db(newer_index), how)
    result = CliRunner().invoke(cli, [*args, "--vault", str(newer_index)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    [line] = [each for each in result.stderr.splitlines() if each.startswith("Error: ")]
    assert f"the index database {_index_db(newer_index)} is damaged (" in line, line
    assert "the newer brain changed what this brain reads" not in line and "upgrade brain" not in line, line
    assert f"`brain index --rebuild --vault {newer_index.resolve()}`" in line, line
    if how == "page":  # its record read: this brain's --repair, which it would refuse, is not what it is told
        assert f"a newer brain upgraded it ({NEWER}), so this brain does not repair it" in line, line
        assert "`brain index --repair` with that brain" in line and "--repair --vault" not in line, line


def test_brain_mcp_on_a_damaged_newer_index_says_it_is_damaged_at_once(newer_index, monkeypatch):
    import concurrent.futures

    from brain.mcp import backend

    # A call that waited for the index to load, not told it never will, would take ten minutes (it
    # was bounded at 20 s of wall time against a 30 s wait, which a loaded machine could overrun).
    monkeypatch.setattr(backend, "LOCAL_WAIT", 600.0)  # the most a request may wait
    _damage_notes(_index_db(newer_index), "page")
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        result = pool.submit(mcp_call, newer_index, "get_note", {"note": "Vannevar Bush"}).result(120)
    finally:
        pool.shutdown(wait=False)
    assert result.is_error, result
    said = result.content[0].text
    assert "is damaged (database disk image is malformed)" in said and "this brain cannot read it" not in said, said
    assert f"a newer brain upgraded it ({NEWER})" in said and "\n" not in said, said


def test_the_rebuild_a_damaged_newer_index_is_told_to_run_builds_one(newer_index):
    _damage_notes(_index_db(newer_index), "page")
    rebuilt = CliRunner().invoke(cli, ["index", "--rebuild", "--vault", str(newer_index)])
    assert rebuilt.exit_code == 0, rebuilt.output
    asked = CliRunner().invoke(cli, ["ask", "how should agent memory work", "--vault", str(newer_index)])
    assert asked.exit_code == 0 and REFUSED not in asked.output, asked.output


def _moved_aside(vault: Path) -> list[str]:
    return sorted(
        p.name.rsplit(".", 1)[1].split("-")[0] for p in config.index_dir(vault.resolve()).parent.glob("*-*.*-*")
    )


def test_rebuild_moves_a_damaged_newer_index_aside_as_the_newer_brains(newer_index):
    """A newer index with a damaged page went to .damaged-<time> as this brain's own, its history's
    count read by this brain's rules from the newer brain's tables ("its history (0 past versions of
    0 notes, 1 closed link) could not be carried"): it is that brain's, to repair, and its history is
    not this brain's to count."""
    _damage_notes(_index_db(newer_index), "page")
    result = CliRunner().invoke(cli, ["index", "--rebuild", "--json", "--vault", str(newer_index)])
    assert result.exit_code == 0, result.output
    assert _moved_aside(newer_index) == ["newer"], result.stderr
    report = json.loads(result.stdout)
    assert ".newer-" in report["moved_aside"] and report["history_left"], report
    [said] = [each for each in result.stderr.splitlines() if report["moved_aside"] in each]
    assert f"the index (upgraded by a newer brain: {NEWER}; damaged: " in said, said
    assert "keep that folder for a brain of that version" in said and "past version" not in said, said
    assert "Added.md" in _paths(newer_index)


def test_rebuild_moves_a_newer_index_that_renamed_a_table_aside_as_newer_not_damaged(toy_vault):
    """A newer brain's rename of a table this brain reads was "the damaged index (no such table:
    note_versions)", moved to .damaged-<time>, with "its history (0 past versions of 0 notes, 0 closed
    links)", counted from the absence of a table."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    _make_newer_renaming(_index_db(toy_vault), RENAMES["table"])
    result = CliRunner().invoke(cli, ["index", "--rebuild", "--vault", str(toy_vault)])
    assert result.exit_code == 0, result.output
    assert _moved_aside(toy_vault) == ["newer"], result.stderr
    assert f"the index (upgraded by a newer brain: {NEWER}) was moved to" in result.stderr, result.stderr
    assert "damaged" not in result.stderr and "past version" not in result.stderr, result.stderr


def test_rebuild_over_a_newer_index_whose_record_is_unreadable_calls_it_damaged(newer_index):
    _damage_notes(_index_db(newer_index), "truncated")  # nothing says it is a newer brain's: damaged
    result = CliRunner().invoke(cli, ["index", "--rebuild", "--vault", str(newer_index)])
    assert result.exit_code == 0, result.output
    assert _moved_aside(newer_index) == ["damaged"], result.stderr
    assert "past version" not in result.stderr, result.stderr


def test_a_newer_index_locked_by_another_connection_is_busy_not_newer(newer_index, monkeypatch):
    """The holder's lock is real (an exclusive lock with a write pending: no reader can read the
    file), so each command rightly waits out the busy timeout before saying busy: 5 s in the
    product, 0.2 s here (three commands waited 15 s of an 18.9 s test)."""
    waited: list[int] = []

    def brief(path: str, *, busy_timeout_ms: int = 5000, **kwargs: Any) -> sqlite3.Connection:
        waited.append(busy_timeout_ms)
        return migrations.connect(path, busy_timeout_ms=200, **kwargs)

    monkeypatch.setattr(store_open, "connect", brief)
    _checkpointed(_index_db(newer_index))
    holder = sqlite3.connect(_index_db(newer_index), isolation_level=None, timeout=0)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO meta (key, value) VALUES ('held', '1')")
        for args in (["ask", "how should agent memory work"], ["status"], ["note", "Vannevar Bush"]):
            result = CliRunner().invoke(cli, [*args, "--vault", str(newer_index)])
            assert result.exit_code == 1, result.output
            [line] = [each for each in result.stderr.splitlines() if each.startswith("Error: ")]
            assert "is busy (database is locked)" in line and "try again" in line and "newer" not in line, line
    finally:
        holder.close()
    assert waited == [5000] * 3, waited  # each command met the lock through the timeout shortened here


WAITING = "locked: waiting for it…"


@pytest.mark.parametrize(
    "args",
    [["ask", "how should agent memory work", "--json"], ["status", "--json"], ["note", "Vannevar Bush"]],
    ids=lambda args: args[0],
)
def test_a_command_waiting_on_a_locked_index_says_so_once_on_stderr(newer_index, args):
    """An index another process holds locked: `brain ask/status/note` sat silent through the 5 s
    busy timeout of its open. Past a second it says so, once, on stderr; its stdout (the --json
    one too) is what it is without the lock. The lock is let go when the line is logged: no race."""
    command = [*args, "--vault", str(newer_index)]
    free = CliRunner().invoke(cli, command)
    assert free.exit_code == 0 and WAITING not in free.stderr, free.output
    _checkpointed(_index_db(newer_index))
    holder = sqlite3.connect(_index_db(newer_index), isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO meta (key, value) VALUES ('held', '1')")

    class LetGo(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if WAITING in record.getMessage():
                holder.close()  # its write rolled back, its lock gone

    logger, let_go = logging.getLogger("brain"), LetGo()
    logger.addHandler(let_go)
    try:
        waited = CliRunner().invoke(cli, command)
    finally:
        logger.removeHandler(let_go)
        holder.close()
    assert waited.exit_code == 0, waited.output
    [line] = [each for each in waited.stderr.splitlines() if WAITING in each]
    assert line == f"brain: WARNING: another process holds the index {_index_db(newer_index)} {WAITING}", line
    assert WAITING not in waited.stdout, waited.stdout
    assert _steady(waited.stdout) == _steady(free.stdout)


def _steady(stdout: str) -> object:
    """A command's stdout without what differs from run to run (--json's timings)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return stdout
    return {key: value for key, value in data.items() if key != "timings_ms"}


@pytest.mark.slow  # a process that file modes bind
def test_a_newer_index_that_is_damaged_in_a_read_only_home_is_said_damaged(newer_index, brain_home):
    modes_binding_prefix()
    _damage_notes(_index_db(newer_index), "page")
    _chmod_tree(brain_home, writable=False)
    try:
        done = _brain(brain_home, "ask", "how should agent memory work", "--vault", str(newer_index))
    finally:
        _chmod_tree(brain_home, writable=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = [each for each in done.stderr.splitlines() if each.startswith("Error: ")]
    assert "is damaged (" in line and "this brain cannot read it" not in line, line


@pytest.mark.parametrize(
    ("error", "newer"),
    [
        ("no such column: path", True),
        ("no such table: note_versions", True),
        ("ambiguous column name: path", True),
        ("no such function: brain_newer_rule", True),
        ("table notes has 12 columns but 11 values were supplied", True),
        ("disk I/O error", False),
        ("interrupted", False),
        ("out of memory", False),
    ],
)
def test_only_what_a_changed_schema_explains_is_said_of_the_newer_brain(newer_index, error, newer):
    """A read of a newer index failing on the disk (an I/O error) or the process (no memory, an
    interrupt) was "this brain cannot read it (disk I/O error: the newer brain changed what this
    brain reads)"."""
    directory = config.index_dir(newer_index.resolve())
    with pytest.raises(BrainError) as raised, index_errors(directory, newer_index):
        raise sqlite3.OperationalError(error)
    said = str(raised.value)
    assert isinstance(raised.value, NewerDatabaseError) is newer, said
    assert (f"this brain cannot read it ({error}: the newer brain changed" in said) is newer, said
    if not newer:
        assert f"could not be used ({error})" in said, said


def test_what_sqlite_names_damage_is_not_a_changed_schema():
    """Python 3.11's error names: damage's words are never read as a schema's."""
    corrupt = sqlite3.DatabaseError("malformed database schema (notes) - no such table: main.x")
    corrupt.sqlite_errorname = "SQLITE_CORRUPT"
    assert not schema_changed(corrupt)
    renamed = sqlite3.OperationalError("no such column: path")
    renamed.sqlite_errorname = "SQLITE_ERROR"
    assert schema_changed(renamed)


def test_status_says_the_pending_note_is_not_for_this_brain_to_index(newer_index):
    result = CliRunner().invoke(cli, ["status", "--vault", str(newer_index)])
    assert "pending: 1 new, 0 changed, 0 renamed, 0 deleted  (not indexed by this brain: see newer:)" in result.stdout
    assert f"newer:  the index {_index_db(newer_index)} {REFUSED}" in result.stdout, result.stdout
    as_json = CliRunner().invoke(cli, ["status", "--json", "--vault", str(newer_index)])
    assert NEWER in json.loads(as_json.stdout)["newer"]


def test_rebuild_moves_the_newer_index_aside_and_builds_one_this_brain_owns(newer_index):
    result = CliRunner().invoke(cli, ["index", "--rebuild", "--vault", str(newer_index)])
    assert result.exit_code == 0, result.output
    assert "upgraded by a newer brain: m999_from_a_newer_brain" in result.stderr, result.stderr
    assert "its history was not carried" in result.stderr
    aside = next(p for p in config.index_dir(newer_index.resolve()).parent.iterdir() if ".newer-" in p.name)
    kept = sqlite3.connect(aside / "index.db")
    assert kept.execute("SELECT count(*) FROM _migrations WHERE name = ?", (NEWER,)).fetchone()[0] == 1
    kept.close()
    assert "Added.md" in _paths(newer_index)
    again = CliRunner().invoke(cli, ["index", "--vault", str(newer_index)])
    assert again.exit_code == 0, again.output


def test_a_store_opened_before_the_upgrade_writes_nothing_after_it(toy_vault):
    """An open store (a server's pass, a long `brain index`) whose index a newer brain upgraded
    meanwhile: its next write transaction is refused, inside the write lock."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    store = IndexStore.open(config.index_dir(toy_vault.resolve()), create=False)
    try:
        with store.transaction():
            store.conn.execute("INSERT INTO meta (key, value) VALUES ('before', '1')")
        _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
        with pytest.raises(NewerDatabaseError, match=NEWER), store.transaction():
            store.conn.execute("INSERT INTO meta (key, value) VALUES ('after', '1')")
        assert not store.conn.in_transaction
    finally:
        store.close()
    conn = sqlite3.connect(_index_db(toy_vault))
    assert {r[0] for r in conn.execute("SELECT key FROM meta WHERE key IN ('before', 'after')")} == {"before"}
    conn.close()


@pytest.mark.slow
def test_brain_serve_refuses_to_start_on_a_newer_index(newer_index):
    result = run_brain(["serve", "--vault", str(newer_index)], timeout=60)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert REFUSED in err and "Traceback" not in err, err
    assert client.status(newer_index.resolve(), timeout=0.5) is None


@pytest.fixture
def server_process(toy_vault):
    """A `brain serve` process on the indexed toy vault, killed at the end whatever happened."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    proc = BrainProcess(["serve", "--vault", str(toy_vault)])
    try:
        yield proc
    finally:
        proc.close()
        kill_recorded_server(toy_vault)


@pytest.mark.slow
def test_a_running_server_stops_once_a_newer_brain_upgraded_its_index(toy_vault, server_process):
    root = toy_vault.resolve()
    wait_until(lambda: (client.status(root, timeout=1.0) or {}).get("state") == "ready", 60, "the server")
    _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
    assert server_process.proc.wait(30) == 0  # the probe (every 2 s) finds it; no pass needed
    err = server_process.proc.stderr.read().decode()
    assert REFUSED in err and "this server runs older code: it stops indexing" in err, err
    assert "stopping: the next `brain serve` runs the newer code" in err
    assert "Traceback" not in err
    # clients find no server and answer in their own process, reading the index as it is
    asked = run_brain(["ask", "guitar", "--vault", str(toy_vault)], timeout=60)
    assert asked.returncode == 0, asked.stderr
    assert REFUSED.encode() in asked.stderr


def test_a_server_whose_pass_meets_the_upgrade_stops_its_watcher_and_still_answers(toy_vault):
    """The pass (not the probe) met it first: refused, the watcher stopped, said once; a session's
    own service (`brain mcp`) answers on from the snapshot it holds."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    with served(toy_vault, answer_when_newer=True) as daemon:
        service = daemon.service
        _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
        assert service._index() is None
        assert service.superseded and NEWER in service.superseded
        assert service.watcher.stopping.is_set()
        reply = service.handle(
            protocol.request(
                "ask", str(toy_vault.resolve()), query="agent memory", modes=["vector"], settings={}, wait=5
            )
        )
        assert reply["ok"] and reply["result"]["results"], reply
        # the agent is told, once an answer, not only the server's log
        assert [r["warnings"].count(SUPERSEDED_ANSWER) for r in reply["result"]["results"]] == [1], reply


def test_brain_mcp_tells_the_agent_it_is_older_than_the_index(newer_index):
    result = mcp_call(newer_index, "search", {"query": "how should agent memory work", "k": 3})
    assert not result.is_error, result
    assert json.loads(result.content[0].text)["warnings"].count(SUPERSEDED_ANSWER) == 1, result


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search", {"query": "how should agent memory work", "k": 3}),
        ("get_note", {"note": "Vannevar Bush"}),
        ("get_note", {"note": "Vannevar Bush", "as_of": "today"}),  # from the index's history
        ("neighbours", {"note": "Vannevar Bush"}),
        ("history", {"note": "Vannevar Bush"}),
        ("status", {}),
    ],
    ids=["search", "get_note", "get_note-as-of", "neighbours", "history", "status"],
)
def test_every_brain_mcp_tool_reading_the_index_says_it_is_older(newer_index, tool, arguments):
    """Before, only search's answers said it: get_note, neighbours, history and status answered
    from the newer index in silence."""
    if arguments.get("as_of") == "today":
        arguments = {**arguments, "as_of": time.strftime("%Y-%m-%d")}  # the end of this day
    result = mcp_call(newer_index, tool, arguments)
    assert not result.is_error, result
    assert json.loads(result.content[0].text)["warnings"].count(SUPERSEDED_ANSWER) == 1, result


def test_brain_mcp_answers_from_a_newer_index(newer_index):
    result = mcp_call(newer_index, "search", {"query": "how should agent memory work", "k": 3})
    assert not result.is_error, result
    assert len(json.loads(result.content[0].text)["results"]) == 3


# ----- what else writes into the index folder: background children, disk caches ---------------


def _folder(vault: Path) -> dict[str, int]:
    """The index folder's files but the database (its WAL folded in as a connection closes) and
    the work locks (the newer brain's children share them): name -> size."""
    directory = config.index_dir(vault.resolve())
    return {
        p.name: p.stat().st_size
        for p in directory.iterdir()
        if not (p.name.endswith(".lock") or p.name.startswith("index.db"))
    }


@pytest.mark.parametrize("work", [fts_merge.MERGE, postings_due.BUILD], ids=["fts-merge", "postings"])
def test_a_background_child_started_on_a_newer_index_writes_nothing_into_it(newer_index, work):
    """Before, the child's refused open was recorded as its failure (``<name>.failed``, a
    traceback), which the newer brain's next pass warned of as its own work failing."""
    directory = config.index_dir(newer_index.resolve())
    before = _folder(newer_index)
    assert background.start(work, directory) is not None
    background.wait_for_all(60)
    assert _folder(newer_index) == before
    assert not background.failure_file(directory, work.name).exists()


def _holds_open(pid: int, path: Path) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    try:
        return any(os.path.realpath(fd) == str(path) for fd in fds.iterdir())
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="sees the child's open files in /proc")
def test_a_postings_child_started_before_the_upgrade_leaves_nothing_in_the_newer_index(toy_vault):
    """The child opened the index, then a newer brain upgraded it: its install is refused, and
    the file it built (at a temporary name in the folder) was left there."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    directory = config.index_dir(toy_vault.resolve())
    child = subprocess.Popen(
        [*python_module_command("brain.index.postings_child"), str(directory), "--early"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: _holds_open(child.pid, (directory / "index.db").resolve()), 30, "the child's open")
        _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
        before = _folder(toy_vault)
        _, err = child.communicate(b"go\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert NEWER.encode() in err, err  # refused, not built
    assert _folder(toy_vault) == before, err
    conn = sqlite3.connect(_index_db(toy_vault))
    assert conn.execute("SELECT value FROM meta WHERE key = 'postings_stamp'").fetchone() is None
    conn.close()


def test_an_upgrade_landing_as_the_index_is_opened_leaves_nothing_in_it(toy_vault, monkeypatch):
    """The test above, its race made certain: the newer brain's upgrade lands after the open
    looked at the record of migrations and before it counted them (as it did under load, the
    child niced). The count took the newer migration for this code's own, so no write was
    refused: the child built and installed its postings into the newer index, its stderr empty."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    directory = config.index_dir(toy_vault.resolve())
    upgrade = store_open.upgrade

    def upgraded_meanwhile(conn: sqlite3.Connection, path: Path) -> None:
        upgrade(conn, path)
        _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")

    monkeypatch.setattr(store_open, "upgrade", upgraded_meanwhile)
    before = _folder(toy_vault)
    with pytest.raises(NewerDatabaseError, match=NEWER):
        postings_child._build(directory, early=False)  # the child's open, build and install
    assert _folder(toy_vault) == before
    conn = sqlite3.connect(_index_db(toy_vault))
    assert conn.execute("SELECT value FROM meta WHERE key = 'postings_stamp'").fetchone() is None
    conn.close()


def test_a_superseded_server_keeps_no_recall_cache_in_the_newer_index(toy_vault):
    """A `brain serve` (or `brain mcp`) stopping keeps its names and link graph for the next
    start (recall-cache.npz): into an index a newer brain upgraded meanwhile, it wrote this
    code's file, which the newer brain owns."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    kept = config.index_dir(toy_vault.resolve()) / RECALL_CACHE_FILE
    kept.unlink(missing_ok=True)
    with served(toy_vault, answer_when_newer=True) as daemon:
        _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
        wait_until(lambda: daemon.service.superseded is not None, 30, "the probe")
    assert not kept.exists()


def test_the_vectors_rebuilt_for_a_store_opened_before_the_upgrade_are_not_saved(toy_vault):
    """A `brain ask` whose store was opened writable just before the upgrade, whose vector
    files are missing: they are rebuilt in memory, not saved into the newer index."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    directory = config.index_dir(toy_vault.resolve())
    for name in (vectors.FAISS_FILE, vectors.DELTA_FILE, vectors.SIDECAR_FILE):
        (directory / name).unlink(missing_ok=True)
    store = IndexStore.open(directory, create=False)
    try:
        _make_newer(_index_db(toy_vault), INDEX_MIGRATIONS.name, "notes")
        loaded = vectors.load_current(store, int(store.get_meta("dim") or 0))
        assert loaded.size == store.chunk_count()
    finally:
        store.close()
    assert not (directory / vectors.FAISS_FILE).exists() and not (directory / vectors.SIDECAR_FILE).exists()


def _upgraded_as(module: object, name: str, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``module.name`` (a write of a temporary file) runs with a newer brain's upgrade landing
    first, the first time: between a look at the index before the save and the save's rename."""
    write = getattr(module, name)
    done: list[bool] = []

    def upgraded_meanwhile(*args: object, **kwargs: object) -> object:
        if not done:
            done.append(True)
            _make_newer(_index_db(vault), INDEX_MIGRATIONS.name, "notes")
        return write(*args, **kwargs)

    monkeypatch.setattr(module, name, upgraded_meanwhile)


def test_a_recall_cache_whose_write_an_upgrade_lands_in_is_not_put_in_place(toy_vault, monkeypatch):
    """Looked at before its write, an upgrade meanwhile left this code's recall-cache.npz in the
    newer brain's folder; the look and the rename now hold the index's write lock."""
    import numpy as np

    from brain.recall.opening import open_recaller

    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    kept = config.index_dir(toy_vault.resolve()) / RECALL_CACHE_FILE
    kept.unlink(missing_ok=True)
    recaller = open_recaller(toy_vault.resolve(), embedder=FakeEmbedder(), rerank_model=None)
    recaller.names()
    recaller.link_graph()
    _upgraded_as(np, "savez", toy_vault, monkeypatch)
    recaller.close()  # keeps them for the next run
    assert not kept.exists()
    assert not list(kept.parent.glob(f"{RECALL_CACHE_FILE}.*.tmp"))


def test_vectors_rebuilt_as_an_upgrade_lands_are_not_put_in_place(toy_vault, monkeypatch):
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    directory = config.index_dir(toy_vault.resolve())
    for name in (vectors.FAISS_FILE, vectors.DELTA_FILE, vectors.SIDECAR_FILE):
        (directory / name).unlink(missing_ok=True)
    store = IndexStore.open(directory, create=False)
    try:
        _upgraded_as(vectors, "_write_faiss", toy_vault, monkeypatch)
        loaded = vectors.load_current(store, int(store.get_meta("dim") or 0))
        assert loaded.size == store.chunk_count()  # answered from memory
    finally:
        store.close()
    assert not (directory / vectors.FAISS_FILE).exists() and not (directory / vectors.SIDECAR_FILE).exists()
    assert not list(directory.glob("vectors.*.tmp"))


def test_an_indexers_vector_delta_written_as_an_upgrade_lands_is_not_put_in_place(toy_vault, monkeypatch):
    """An older `brain index` (its notes committed) bringing the vector files level as a newer
    brain's command upgrades the index (a migration takes no vault lock)."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    directory = config.index_dir(toy_vault.resolve())
    before = {name: (directory / name).read_bytes() for name in (vectors.FAISS_FILE, vectors.SIDECAR_FILE)}
    assert not (directory / vectors.DELTA_FILE).exists()
    write(toy_vault, "Added.md", "# Added\n\nA note the older brain indexes as the newer one upgrades.\n")
    _upgraded_as(vectors, "_write_new", toy_vault, monkeypatch)
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)  # its writes were done before
    assert {name: (directory / name).read_bytes() for name in before} == before
    assert not (directory / vectors.DELTA_FILE).exists()
    assert not list(directory.glob("vectors.*.tmp"))


# ----- the ledger (brain.db) -------------------------------------------------------------------


@pytest.fixture
def newer_ledger() -> Path:
    db = config.db_path()
    open_db(db).close()
    _make_newer(db, MIGRATIONS.name, "turns")
    return db


def _turns(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    finally:
        conn.close()


def test_a_command_that_writes_the_ledger_refuses_in_one_line(newer_ledger):
    with pytest.raises(NewerLedger, match=f"upgraded by a newer brain \\({NEWER}\\).*upgrade brain"):
        open_db(newer_ledger)
    result = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "90d"])
    assert result.exit_code == 1, result.output
    line = result.stderr.strip()
    assert "\n" not in line and f"{newer_ledger} was upgraded by a newer brain ({NEWER})" in line, line
    assert "Traceback" not in result.output


def test_the_stop_hook_keeps_its_turn_aside_for_the_newer_brain(newer_ledger, monkeypatch):
    started: list[Path] = []
    monkeypatch.setattr(deferred, "start_catch_up", lambda path: started.append(path) or True)
    record_stop({"session_id": "s1", "prompt_id": "p1", "last_assistant_message": "done"}, db_path=newer_ledger,
                migrate_until=time.monotonic() + 5)  # fmt: skip
    assert _turns(newer_ledger) == 0
    assert len(list(kept_aside_dir(newer_ledger).glob("*.json"))) == 1
    assert started == []  # this code's catch-up would be refused too
    log = (config.log_dir() / "hook.log").read_text()
    assert NEWER in log and "the newer brain's `brain turns`" in log, log


def test_the_stop_hook_as_a_process_exits_zero(newer_ledger, brain_home):
    done = run_hook(json.dumps(hook_payload(None, last_assistant_message="done")).encode(), brain_home)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert _turns(newer_ledger) == 0 and list(kept_aside_dir(newer_ledger).glob("*.json"))


def test_the_prompt_hook_keeps_its_row_aside_for_the_newer_brain(newer_ledger, monkeypatch):
    started: list[Path] = []
    monkeypatch.setattr(deferred, "start_catch_up", lambda path: started.append(path) or True)
    prompt_hook.record({"session_id": "s1", "prompt": "why", "prompt_chars": 3, "latency_ms": 1.0}, newer_ledger,
                       migrate_until=time.monotonic() + 5)  # fmt: skip
    conn = sqlite3.connect(newer_ledger)
    assert conn.execute("SELECT count(*) FROM recalls").fetchone()[0] == 0
    conn.close()
    assert len(list(kept_aside_dir(newer_ledger).glob("*.json"))) == 1 and started == []


def _upgraded_as_it_opens(monkeypatch, ledger: Path, owner: Any, step: str) -> None:
    """The newer brain's upgrade lands inside this brain's open, after its look for a newer
    brain's migrations: ``step`` of ``owner`` (run within the open) runs, then the upgrade."""
    run = getattr(owner, step)

    def then_upgraded(*args: Any, **kwargs: Any) -> Any:
        done = run(*args, **kwargs)
        _make_newer(ledger, MIGRATIONS.name, "turns")
        monkeypatch.setattr(owner, step, run)  # once
        return done

    monkeypatch.setattr(owner, step, then_upgraded)


def test_an_upgrade_landing_as_the_stop_hook_opens_the_ledger_leaves_its_turn_aside(monkeypatch):
    """The open looked for a newer brain's migrations once, before its own upgrade (within the
    hook's budget): an upgrade landing after that look went unseen, and the turn was written into
    the newer ledger by this code's older rules (its new column empty). It is looked for again at
    the write, under the write lock: the turn waits aside for the newer brain, as it would had
    the upgrade landed before the hook."""
    db = config.db_path()
    open_db(db).close()
    _upgraded_as_it_opens(monkeypatch, db, db_module, "_apply_until")
    monkeypatch.setattr(deferred, "start_catch_up", lambda path: True)
    record_stop({"session_id": "s1", "prompt_id": "p1", "last_assistant_message": "done"}, db_path=db,
                migrate_until=time.monotonic() + 60)  # fmt: skip
    assert MIGRATIONS.unknown(open_db(db, read_only=True)) == [NEWER]  # it landed
    assert _turns(db) == 0
    assert len(list(kept_aside_dir(db).glob("*.json"))) == 1
    log = (config.log_dir() / "hook.log").read_text()
    assert NEWER in log and "the newer brain's `brain turns`" in log, log


def test_an_upgrade_landing_as_the_prompt_hook_opens_the_ledger_leaves_its_row_aside(monkeypatch):
    db = config.db_path()
    open_db(db).close()
    _upgraded_as_it_opens(monkeypatch, db, db_module, "_apply_until")
    monkeypatch.setattr(deferred, "start_catch_up", lambda path: True)
    prompt_hook.record({"session_id": "s1", "prompt": "why", "prompt_chars": 3, "latency_ms": 1.0}, db,
                       migrate_until=time.monotonic() + 60)  # fmt: skip
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM recalls").fetchone()[0] == 0
    conn.close()
    assert len(list(kept_aside_dir(db).glob("*.json"))) == 1


def test_an_upgrade_landing_as_a_command_opens_the_ledger_leaves_the_rows_kept_aside(monkeypatch):
    """A command's catch-up (`brain turns`) upgrading the ledger for the rows the hooks kept aside,
    the newer brain's upgrade landing after its look: it recorded them into the newer ledger by
    its older rules, and removed their files. They wait for the newer brain."""
    db = config.db_path()
    open_db(db).close()
    deferred.keep_aside(db, deferred.TURN, {"turn_key": "s1:p1", "session_id": "s1", "ask": "why"})
    _upgraded_as_it_opens(monkeypatch, db, MIGRATIONS, "apply")
    with pytest.raises(NewerLedger, match=NEWER):
        deferred.catch_up(db)
    assert _turns(db) == 0
    assert len(list(kept_aside_dir(db).glob("*.json"))) == 1


def test_an_upgrade_landing_during_an_eval_stops_its_ab_log(tmp_path, monkeypatch):
    """`brain eval --ab-log` holds brain.db open for the whole run: a newer brain's upgrade landing
    after its first row went unseen, and every later row went into the newer ledger by this code's
    older rules. The run's figures stand; logging stops, said in one line."""
    from brain import telemetry

    vault = tmp_path / "v"
    write(vault, "a.md", "# Alpha\n\napples and pears\n")
    write(vault, "b.md", "# Beta\n\nboats and rivers\n")
    queries = tmp_path / "q.jsonl"
    line = {"id": "a", "query": "apples", "type": "entity", "relevant": ["a.md"]}
    queries.write_text(json.dumps(line) + "\n" + json.dumps({**line, "id": "b", "relevant": ["b.md"]}) + "\n")
    db = config.db_path()
    log_ab = telemetry.log_ab

    def then_upgraded(*args: Any, **kwargs: Any) -> int:
        row_id = log_ab(*args, **kwargs)
        _make_newer(db, MIGRATIONS.name, "ab_recall")
        monkeypatch.setattr(telemetry, "log_ab", log_ab)  # once
        return row_id

    monkeypatch.setattr(telemetry, "log_ab", then_upgraded)
    result = CliRunner().invoke(
        cli, ["eval", str(queries), "--vault", str(vault), "--modes", "vector", "--ab-log", "x"]
    )
    assert result.stdout.startswith("2 queries over 2 notes") and "nDCG@10" in result.stdout, result.output
    error = result.stderr.splitlines()[-1]
    assert result.exit_code == 1 and f"upgraded by a newer brain ({NEWER})" in error, result.stderr
    assert "1 of 2 rows were logged to ab_recall" in error and "Traceback" not in result.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM ab_recall").fetchone()[0] == 1
    conn.close()


def test_brain_turns_reads_a_newer_ledger_with_rows_kept_aside(newer_ledger, monkeypatch):
    monkeypatch.setattr(deferred, "start_catch_up", lambda path: False)
    record_stop({"session_id": "s1", "prompt_id": "p1", "last_assistant_message": "done"}, db_path=newer_ledger,
                migrate_until=time.monotonic() + 5)  # fmt: skip
    result = CliRunner().invoke(cli, ["turns", "--json"])
    assert result.exit_code == 0, result.output
    assert "the rows the hooks kept aside wait for it" in result.stderr, result.stderr
    assert f"upgraded by a newer brain ({NEWER})" in result.stderr and "Traceback" not in result.output
    assert json.loads(result.stdout) == []
    assert len(list(kept_aside_dir(newer_ledger).glob("*.json"))) == 1


def test_brain_mcp_recent_turns_says_in_its_answer_that_the_ledger_is_newer(newer_ledger, toy_vault):
    """It was said in mcp.log alone: the agent read the turns as if this brain knew them all,
    where every index tool's answer says the index is newer."""
    conn = sqlite3.connect(newer_ledger, isolation_level=None)  # as the newer brain writes it (this code refuses)
    conn.execute(
        "INSERT INTO turns (turn_key, session_id, created_at, updated_at, ask, summary, newer_rule) "
        "VALUES ('s:1', 's', '2026-12-01T10:00:00.000Z', '2026-12-01T10:00:00.000Z', 'fix the parser', 'done', 'x')"
    )
    conn.close()
    result = mcp_call(toy_vault, "recent_turns", {})
    assert not result.is_error, result
    answer = json.loads(result.content[0].text)
    assert [turn["ask"] for turn in answer["turns"]] == ["fix the parser"]
    (said,) = answer["warnings"]
    assert said.startswith(f"{newer_ledger} was upgraded by a newer brain ({NEWER}), which ") and "\n" not in said
    assert said.endswith("restart the session with the newer brain"), said
    with served(toy_vault, watch=False):  # the ledger is read in brain mcp's process, server or not
        answer = json.loads(mcp_call(toy_vault, "recent_turns", {"text": "parser"}, use_server=True).content[0].text)
    assert len(answer["turns"]) == 1 and answer["warnings"] == [said]


def test_brain_mcp_says_a_newer_ledger_in_its_log_once_a_session(newer_ledger, toy_vault, caplog):
    """Each recent_turns call logged it again, a warning on the client's stderr every time."""
    import asyncio

    from mcp import Client

    from brain.mcp.backend import Backend
    from brain.mcp.server import build_server

    backend = Backend(toy_vault.resolve(), embedder=FakeEmbedder(), use_server=False, watch=False)

    async def go():
        async with Client(build_server(toy_vault.resolve(), backend)) as session:
            return [await session.call_tool("recent_turns", {}) for _ in range(3)]

    try:
        with caplog.at_level("INFO", logger="brain"):
            answers = asyncio.run(go())
    finally:
        backend.close()
    assert all(len(json.loads(each.content[0].text)["warnings"]) == 1 for each in answers)
    logged = [r for r in caplog.records if f"upgraded by a newer brain ({NEWER})" in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelname == "WARNING", [r.getMessage() for r in logged]


def test_the_prompt_hook_still_reads_what_the_session_was_shown(newer_ledger, capfd):
    """Its dedupe is a read: a newer brain.db is read as it is (before, each prompt showed again the
    notes the session already holds, and logged that it could not read them)."""
    conn = sqlite3.connect(newer_ledger)
    conn.execute(
        "INSERT INTO recall_shown (session_id, path, recall_id, hash, chunk_id) VALUES ('s1', 'a.md', 1, 'h', 7)"
    )
    conn.commit()
    conn.close()
    shown = prompt_hook._shown_before("s1", ["a.md", "b.md"], newer_ledger, time.monotonic() + 5)
    assert shown == {"a.md": ("h", 7)}
    assert capfd.readouterr().err == ""  # the agent's stderr: nothing
