"""An open of a database another process holds locked (an exclusive lock: not even a read goes
through) waits out the busy timeout inside ``migrations.connect``; past a second the caller's
``waiting`` is told, once, as a migration waiting for the write lock tells it. The hooks never
reach it: they print nothing."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ledger_helpers import brain_command, hook_payload

from brain import migrations


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A WAL database another connection holds with an exclusive lock and a write pending."""
    path = tmp_path / "held.db"
    migrations.connect(str(path)).close()
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE held (x)")
    try:
        yield path
    finally:
        holder.close()


def test_an_open_waiting_past_a_second_for_a_held_lock_tells_waiting_once(held):
    """One SQLite busy wait of the whole timeout did not return to Python: nothing could be told
    (nor Ctrl-C seen) until "database is locked"."""
    told: list[int] = []
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        migrations.connect(str(held), busy_timeout_ms=1600, waiting=lambda: told.append(1))
    assert told == [1]


def test_an_open_that_waited_keeps_the_busy_timeout_it_was_given(tmp_path):
    path = tmp_path / "free.db"
    conn = migrations.connect(str(path), busy_timeout_ms=1234, waiting=lambda: None)
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_an_open_told_nothing_says_nothing(held, capfd, caplog):
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        migrations.connect(str(held), busy_timeout_ms=1300)
    assert capfd.readouterr() == ("", "") and not caplog.records


@pytest.mark.parametrize("hook", ["stop", "prompt"])
def test_the_hooks_never_load_the_index_store_whose_opens_say_they_wait(tmp_path, hook):
    """The notice is the index store's (``store_open._waiting_for``); the hooks open brain.db alone,
    without ``waiting``, and never the index (the prompt hook asks `brain serve`)."""
    home, vault = tmp_path / "home", tmp_path / "vault"
    home.mkdir()
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nagent memory\n")
    payload = {**hook_payload(None, cwd=str(tmp_path)), "prompt": "how should agent memory work"}
    code = (
        "import sys; sys.argv = ['brain', 'hook', sys.argv[1]]\n"
        "import brain.__main__ as entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('brain'))))\n"
    )
    _, env = brain_command()
    env.update(BRAIN_HOME=str(home), BRAIN_VAULT=str(vault), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run(
        [sys.executable, "-c", code, hook],
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and proc.stdout == b"", proc
    loaded = proc.stderr.decode()
    assert "'brain.index.store'" not in loaded and "'brain.index.store_open'" not in loaded, loaded
    assert "'brain" in loaded, loaded
