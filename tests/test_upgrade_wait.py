"""Processes that open a vault's index while another upgrades it (the first command after a new
brain is installed runs its migrations, holding the write lock; at 100,000 notes m021 held it
12.7 s): they wait for it and say so once, rather than failing at SQLite's 5 s busy timeout, and
the migration runs once, whichever process won the lock."""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from serve_helpers import LAUNCHER, brain_env, holding, starting_server, wait_until

from brain import config, migrations
from brain.cli import cli
from brain.index import upgrades
from brain.index.files import INDEX_FILE
from brain.index.indexer import index_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.server import client

WAITING = "needs an upgrade and another brain process is upgrading or writing it: waiting for it"
BUSY_TIMEOUT = 5.0  # SQLite's, on every connection brain opens: what a process waited before
LAST = INDEX_MIGRATIONS.steps[-1][0]


@pytest.fixture
def older(toy_vault: Path) -> Path:
    """An indexed vault whose index lacks the record of its last migration, as one an older brain
    made lacks it (the last one gives the same rows when run again: ``safe_to_run_again``)."""
    assert LAST in INDEX_MIGRATIONS.safe_to_run_again
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    conn = sqlite3.connect(_database(toy_vault), isolation_level=None)
    try:
        conn.execute("DELETE FROM _migrations WHERE name = ?", (LAST,))
    finally:
        conn.close()
    return toy_vault


def _database(vault: Path) -> Path:
    return config.index_dir(vault.resolve()) / INDEX_FILE


def _records(vault: Path) -> int:
    conn = sqlite3.connect(_database(vault))
    try:
        return conn.execute("SELECT count(*) FROM _migrations WHERE name = ?", (LAST,)).fetchone()[0]
    finally:
        conn.close()


@contextlib.contextmanager
def upgrading(vault: Path) -> Iterator[subprocess.Popen]:
    """Another process holding the index's write lock, as one running its migrations holds it,
    until the test closes its stdin; killed at the end whatever happens."""
    with holding(
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE')\n"
        "print('held', flush=True); sys.stdin.read(); c.execute('ROLLBACK')",
        str(_database(vault)),
        stdin=True,
    ) as holder:
        yield holder


def _let_go(holder: subprocess.Popen) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(10)


@contextlib.contextmanager
def brain_processes(
    tmp_path: Path, commands: dict[str, list[str]], **env: str
) -> Iterator[dict[str, subprocess.Popen]]:
    """``brain`` processes (with the fake embedder, and ``env`` in their environment), their
    stderr in ``tmp_path/<name>.err``; killed at the end if still running."""
    procs: dict[str, subprocess.Popen] = {}
    try:
        for name, args in commands.items():
            with open(tmp_path / f"{name}.err", "wb") as err:
                procs[name] = subprocess.Popen(
                    [sys.executable, str(LAUNCHER), *args],
                    env=brain_env(**env),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                )
        yield procs
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)


def _stderr(tmp_path: Path, name: str) -> str:
    return (tmp_path / f"{name}.err").read_text(encoding="utf-8", errors="replace")


def _hold_past_busy_timeout(tmp_path: Path, procs: dict[str, subprocess.Popen]) -> None:
    """Until every process has said it waits (or ended: the old code failed at the busy timeout),
    then longer than SQLite's busy timeout."""
    wait_until(
        lambda: all(p.poll() is not None or WAITING in _stderr(tmp_path, n) for n, p in procs.items()),
        300,  # the guards in this file: of brain processes started on a loaded machine
        "every process to meet the upgrade",
    )
    time.sleep(BUSY_TIMEOUT + 0.5)


def test_index_ask_and_status_wait_for_an_upgrade_under_way_then_run_it_once(older, tmp_path):
    vault = str(older)
    commands = {
        "index": ["index", "--vault", vault],
        "ask": ["ask", "guitar", "--vault", vault],
        "status": ["status", "--vault", vault],
    }
    # each waits an hour for the upgrade (60 s: the first to meet it could give up while a loaded
    # machine started the last), so only the upgrade's end can end the wait
    with upgrading(older) as holder, brain_processes(tmp_path, commands, FAKE_UPGRADE_WAIT="3600") as procs:
        _hold_past_busy_timeout(tmp_path, procs)
        assert all(p.poll() is None for p in procs.values()), "a process gave up while the upgrade ran"
        _let_go(holder)
        for proc in procs.values():
            proc.wait(300)
    for name, proc in procs.items():
        err = _stderr(tmp_path, name)
        assert proc.returncode == 0, (name, err)
        assert err.count(WAITING) == 1, (name, err)  # once, not a line per try
        assert "locked" not in err and "Traceback" not in err, (name, err)
    # all three found it pending; the one that took the lock first ran it, the others skipped it
    assert _records(older) == 1


def test_brain_serve_starting_waits_for_an_upgrade_under_way_then_serves(older, tmp_path):
    """It failed at the busy timeout ("the index database … is busy"); it waits, and meanwhile a
    `brain ask` answers in its own process saying the server is starting, not that its record is gone."""
    root = older.resolve()
    serve = {"serve": ["serve", "--vault", str(older)]}
    with upgrading(older) as holder, brain_processes(tmp_path, serve, FAKE_UPGRADE_WAIT="3600") as procs:
        wait_until(
            lambda: procs["serve"].poll() is not None or WAITING in _stderr(tmp_path, "serve"), 300, "the upgrade"
        )
        asks = {"ask": ["ask", "guitar", "--vault", str(older)]}
        with brain_processes(tmp_path, asks, FAKE_UPGRADE_WAIT="3600") as asking:
            _hold_past_busy_timeout(tmp_path, {**procs, **asking})
            assert procs["serve"].poll() is None, _stderr(tmp_path, "serve")
            _let_go(holder)
            asking["ask"].wait(300)
        wait_until(lambda: (client.status(root) or {}).get("state") == "ready", 300, "the server to load the index")
        procs["serve"].send_signal(signal.SIGTERM)
        procs["serve"].wait(30)
    err = _stderr(tmp_path, "serve")
    assert err.count(WAITING) == 1 and "Traceback" not in err, err
    ask = _stderr(tmp_path, "ask")
    assert asking["ask"].returncode == 0, ask
    assert f"brain serve for {root} is starting (pid {procs['serve'].pid}); answering in this process" in ask, ask
    assert "serve.json" not in ask
    assert _records(older) == 1


def test_ctrl_c_while_waiting_for_an_upgrade_ends_the_wait(older, tmp_path):
    """SQLite's busy wait does not return to Python until it ends: the wait is taken in slices, so
    Ctrl-C ends it at once, as click's "Aborted!", not at the end of the wait. It gave the process
    half of UPGRADE_WAIT (30 s of wall time) to end, for what takes a quarter of a second: the
    process waits an hour here (FAKE_UPGRADE_WAIT), so only the Ctrl-C can end it in the five
    minutes it is allowed."""
    with (
        upgrading(older),
        brain_processes(tmp_path, {"index": ["index", "--vault", str(older)]}, FAKE_UPGRADE_WAIT="3600") as procs,
    ):
        wait_until(
            lambda: procs["index"].poll() is not None or WAITING in _stderr(tmp_path, "index"), 300, "the waiting line"
        )
        assert procs["index"].poll() is None, _stderr(tmp_path, "index")
        assert "(up to 3600 s)" in _stderr(tmp_path, "index")  # the hour's wait it was given
        procs["index"].send_signal(signal.SIGINT)
        procs["index"].wait(300)
    err = _stderr(tmp_path, "index")
    assert procs["index"].returncode == 1 and "Aborted" in err and "Traceback" not in err, err


class _TickingClock:
    """``time`` for brain.migrations: each look at ``monotonic()`` moves it ``TICK`` on, so the
    wait's deadline is kept or passed by the loop's own looks, not by how loaded the machine is;
    looking on past ``limit`` raises (a wait that would never end fails instead of hanging)."""

    TICK = 0.25

    def __init__(self, limit: float) -> None:
        self.now = 1000.0
        self.limit = self.now + limit
        self.looks = 0
        self.overran = False

    def monotonic(self) -> float:
        if self.now > self.limit:
            self.overran = True
            raise AssertionError("the wait went on past its limit")
        self.looks += 1
        self.now += self.TICK
        return self.now - self.TICK

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    time = staticmethod(time.time)


def test_an_upgrade_held_past_the_wait_ends_in_one_line(older, monkeypatch):
    """Waited for past SQLite's busy timeout, to the end of UPGRADE_WAIT, and not beyond: on a
    clock that ticks a look at a time (each look one SQLite slice of at most 250 ms here), the wait
    gives up within a look of its end (it was bounded at 6 to 15 s of wall time)."""
    monkeypatch.setattr(upgrades, "UPGRADE_WAIT", BUSY_TIMEOUT + 1)
    clock = _TickingClock(limit=4 * (BUSY_TIMEOUT + 1))
    monkeypatch.setattr(migrations, "time", clock)
    with upgrading(older):
        result = CliRunner().invoke(cli, ["ask", "guitar", "--vault", str(older)])
    assert not clock.overran, "the wait did not end at UPGRADE_WAIT"
    assert result.exit_code == 1
    waited, error = result.stderr.splitlines()  # the waiting line, then the error's one line
    assert WAITING in waited
    assert error.startswith(f"Error: the index database {_database(older)} needs an upgrade and another")
    assert "held it for over 6 s" in error and "try again once it is done" in error
    # three looks a try (its slice, its end, the waiting line): given up on the first look at or
    # past the deadline, BUSY_TIMEOUT + 1 after the wait's first look
    spent = clock.looks * clock.TICK
    assert BUSY_TIMEOUT + 1 <= spent <= BUSY_TIMEOUT + 1 + 3 * clock.TICK, clock.looks


def test_status_names_a_server_that_is_starting(older):
    """A server waiting at its start (for an upgrade) holds its lock with no record yet: "starting",
    not "not answering"."""
    index_vault(older, embedder=FakeEmbedder(), progress=False)  # upgraded: status opens it at once
    with starting_server(older) as holder:
        result = CliRunner().invoke(cli, ["status", "--vault", str(older)])
    assert result.exit_code == 0, result.output
    assert f"server: starting (pid {holder.pid}; asks work without it meanwhile)" in result.stdout


def test_ask_whose_update_meets_a_long_write_answers_from_the_index_as_it_is(toy_vault):
    """A note changed, and another process writing the index without the vault's writer lock
    (one migrating it, a brain of another version) past the busy timeout: `brain ask`'s update
    failed the answer ("the index database … is busy"); it answers from the index as it is, and
    says why, as it does when another process holds the writer lock."""
    index_vault(toy_vault, embedder=FakeEmbedder(), progress=False)
    write(toy_vault, "Pending.md", "# Pending\n\nA note saved while another process wrote the index.\n")
    with upgrading(toy_vault):
        result = CliRunner().invoke(cli, ["ask", "guitar", "--vault", str(toy_vault)])
    assert result.exit_code == 0, result.output
    assert (
        "1 note changed since the last index and it cannot be updated now (another brain process is writing"
        " the index); answering from the index as it is" in result.stderr
    ), result.stderr
    assert result.stdout.strip()
