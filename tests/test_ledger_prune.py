"""`brain prune --ledger`: the brain database bounded by age, in batches a hook can wait behind.

Each promise of the README's "How big it grows" is tried here: what is dropped (by the time a
row was recorded, every format the tables hold), what is kept (newer rows, rows with no
readable time, every other table), no vault needed, the usage errors, --vacuum, a kill -9
inside a batch, between batches and inside VACUUM, and a Stop hook arriving during a prune.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ledger_helpers import ROOT, Transcript, brain_command, hook_payload

from brain.autorecall.store import write_recall
from brain.cli import cli
from brain.db import open_db
from brain.ledger import prune as ledger_prune
from brain.ledger.prune import prune_ledger
from brain.ledger.store import write_turn

DAY = 86400
NOW = time.time()
CUTOFF = NOW - 100 * DAY


@pytest.fixture(autouse=True)
def now(monkeypatch) -> float:
    """NOW and CUTOFF as each test starts, not as the suite was collected: the CLI's spans
    (``--before 100d``) count from when it runs, and the rows an hour after CUTOFF were pruned by a
    test reached more than an hour into the run (a whole suite on a loaded machine)."""
    moment = time.time()
    monkeypatch.setattr(sys.modules[__name__], "NOW", moment)
    monkeypatch.setattr(sys.modules[__name__], "CUTOFF", moment - 100 * DAY)
    return moment


def _iso(moment: float) -> str:  # the turns' and recalls' format
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}Z"


def _sqlite(moment: float) -> str:  # ab_recall's format
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(moment))


def _turn(conn: sqlite3.Connection, key: str, created: str, started: str | None = None) -> None:
    write_turn(
        conn,
        {"turn_key": key, "session_id": "s1", "ask": f"ask {key}", "summary": "x" * 50, "started_at": started},
        now=created,
    )


def _recall(conn: sqlite3.Connection, created: str) -> None:
    write_recall(conn, {"created_at": created, "session_id": "s1", "prompt": "p", "prompt_chars": 1, "latency_ms": 1})


def _ab(conn: sqlite3.Connection, created: str) -> None:
    conn.execute(
        "INSERT INTO ab_recall (created_at, source, vault, query, mode_a, mode_b, k, gate_entity, gate_reason,"
        " candidates_added, new_in_top_k, via_graph_in_top_k) VALUES (?, 'work', '/v', 'q', 'vector', 'graph',"
        " 5, 0, 'r', 0, 0, 0)",
        (created,),
    )


def _keys(db: Path, table: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        column = "turn_key" if table == "turns" else "created_at"
        return sorted(r[0] for r in conn.execute(f"SELECT {column} FROM {table}"))
    finally:
        conn.close()


@pytest.fixture
def db(brain_home) -> Path:
    """Rows on both sides of CUTOFF in each table, in each table's own format."""
    path = brain_home / "brain.db"
    conn = open_db(path)
    _turn(conn, "old", _iso(CUTOFF - 1))
    _turn(conn, "older", _iso(CUTOFF - 300 * DAY))
    _turn(conn, "new", _iso(CUTOFF + 3600))  # an hour: the CLI's spans count from a later now
    # Typed long ago (a resumed session) but recorded after the cutoff: when it was recorded decides.
    _turn(conn, "resumed", _iso(CUTOFF + DAY), started=_iso(CUTOFF - 50 * DAY))
    for created in (_iso(CUTOFF - 2), _iso(CUTOFF - 200 * DAY), _iso(CUTOFF + 3600)):
        _recall(conn, created)
    for created in (_sqlite(CUTOFF - 2), _sqlite(CUTOFF + 3600), _sqlite(NOW)):
        _ab(conn, created)
    conn.close()
    return path


def test_drops_what_was_recorded_before_and_keeps_the_rest(db):
    conn = sqlite3.connect(db)
    migrations = conn.execute("SELECT * FROM _migrations ORDER BY name").fetchall()
    conn.close()
    conn = open_db(db)
    _turn(conn, "edge", _iso(CUTOFF + 0.001))  # a millisecond after: kept
    conn.close()
    report = prune_ledger(CUTOFF)
    assert report.dropped == {"turns": 2, "recalls": 2, "ab_recall": 1}
    assert _keys(db, "turns") == ["edge", "new", "resumed"]
    assert _keys(db, "recalls") == [_iso(CUTOFF + 3600)]
    assert _keys(db, "ab_recall") == sorted([_sqlite(CUTOFF + 3600), _sqlite(NOW)])
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT * FROM _migrations ORDER BY name").fetchall() == migrations  # nothing else
    conn.close()
    assert prune_ledger(CUTOFF).dropped == {"turns": 0, "recalls": 0, "ab_recall": 0}  # again: nothing more


def test_rows_with_no_readable_time_are_kept(db):
    conn = open_db(db)
    for created in ("", "   ", "yesterday", "0000", "12", "now", "2026-13-45T00:00:00Z"):
        # Written by hand (brain always writes a time):
        conn.execute(
            "INSERT INTO recalls (created_at, prompt, prompt_chars, latency_ms) VALUES (?, 'p', 1, 1)", (created,)
        )
        _ab(conn, created)
    conn.execute("UPDATE turns SET created_at = '' WHERE turn_key = 'older'")
    conn.close()
    report = prune_ledger(NOW + 10 * DAY)  # a moment to come: everything with a time goes
    assert report.dropped == {"turns": 3, "recalls": 3, "ab_recall": 3}
    assert _keys(db, "turns") == ["older"]
    assert len(_keys(db, "recalls")) == 7 and len(_keys(db, "ab_recall")) == 7


def test_a_time_with_an_offset_counts_in_utc(brain_home):
    path = brain_home / "brain.db"
    conn = open_db(path)
    # 23:00 on the day before at -05:00 is 04:00 UTC on the cutoff's day: after a 00:00 cutoff.
    # (mktime(...) - time.timezone was an hour early where 2 March is summer time: Sydney's.)
    cutoff = calendar.timegm(time.strptime("2026-03-02 00:00:00", "%Y-%m-%d %H:%M:%S"))
    _recall(conn, "2026-03-01T23:00:00-05:00")
    _recall(conn, "2026-03-01T23:00:00+05:00")  # 18:00 UTC the day before: dropped
    _recall(conn, "2026-03-02T00:30:00+01:00")  # 23:30 UTC the day before: dropped
    _recall(conn, "2026-03-01T19:30:00-05:00")  # 00:30 UTC on the day: kept
    conn.close()
    assert prune_ledger(cutoff, path=path).dropped["recalls"] == 2
    assert _keys(path, "recalls") == ["2026-03-01T19:30:00-05:00", "2026-03-01T23:00:00-05:00"]


def test_each_batch_is_committed_on_its_own(brain_home, monkeypatch):
    path = brain_home / "brain.db"
    conn = open_db(path)
    conn.execute("BEGIN")
    for i in range(600):
        _recall(conn, _iso(CUTOFF - DAY - i))
    conn.execute("COMMIT")
    conn.close()
    seen: list[tuple[int, int]] = []
    # Each look at the clock moves it a millisecond, and the time between batches ten seconds:
    # the longest hold is one batch's, from its lock to its commit (it was bounded at 1 s of wall
    # time, which a loaded machine can pass).
    clock = _Ticking()
    monkeypatch.setattr(ledger_prune, "time", clock)

    def on_batch(table: str, rows: int) -> None:
        clock.now += 10
        if table == "recalls":  # another connection sees each batch gone once it is called
            other = sqlite3.connect(path)
            seen.append((rows, other.execute("SELECT count(*) FROM recalls").fetchone()[0]))
            other.close()

    monkeypatch.setattr(ledger_prune, "TARGET_HOLD", 0)  # every batch "too long": they stay at the smallest size
    report = prune_ledger(CUTOFF, path=path, batch_rows=50, pause=0, on_batch=on_batch)
    assert report.dropped["recalls"] == 600 and report.batches == 12
    assert seen == [(50, 600 - 50 * (i + 1)) for i in range(12)]
    # a few looks within one batch: not the ten seconds between batches, nor the sum of twelve
    assert 0 < report.longest_hold <= 0.005 and report.seconds > 12 * 10


class _Ticking:
    """``time`` for the prune: ``monotonic()`` moves a millisecond at each look (and when the test
    moves it), whatever the machine's load; the rest is the real module's."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        self.now += 0.001
        return self.now

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


def test_a_missing_or_empty_database_is_not_created(brain_home):
    path = brain_home / "brain.db"
    report = prune_ledger(CUTOFF, path=path)
    assert not report.existed and not path.exists()
    path.write_bytes(b"")
    assert not prune_ledger(CUTOFF, path=path).existed and path.read_bytes() == b""
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "30d"])
    assert out.exit_code == 0 and out.output.startswith("nothing to prune: no brain database at ")


# ----- the command ---------------------------------------------------------------------------------


def test_cli_prints_what_it_dropped_and_the_size(db):
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("pruned 2 turns, 2 prompts (recalls) and 1 A/B row (ab_recall) recorded before ")
    assert lines[1].startswith("in 3 batches, ") and "the longest held the write lock" in lines[1]
    assert lines[2].startswith(f"{db} still takes ") and "free inside it" in lines[2] and "--vacuum" in lines[2]
    data = json.loads(CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d", "--json"]).output)
    assert data["dropped"] == {"turns": 0, "recalls": 0, "ab_recall": 0} and data["database"] == str(db)
    assert set(data) >= {"bytes_before", "bytes_after", "free_bytes", "longest_hold_ms", "vacuumed", "before_utc"}


def test_cli_needs_no_vault(db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no vault here
    monkeypatch.setenv("BRAIN_VAULT", str(tmp_path / "no such vault"))  # nor where BRAIN_VAULT says
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d"])
    assert out.exit_code == 0, out.output
    assert _keys(db, "turns") == ["new", "resumed"]


def test_brain_db_names_the_database(db, tmp_path, monkeypatch):
    other = tmp_path / "elsewhere.db"
    conn = open_db(other)
    _turn(conn, "elsewhere-old", _iso(CUTOFF - DAY))
    conn.close()
    monkeypatch.setenv("BRAIN_DB", str(other))
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d", "--yes"])  # all it holds
    assert out.exit_code == 0 and out.output.startswith("pruned 1 turn, 0 prompts")
    assert _keys(db, "turns") == ["new", "old", "older", "resumed"]  # brain home's: untouched


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ledger"], "Error: --ledger needs --before WHEN (e.g. `brain prune --ledger --before 180d`), or --vacuum"),
        (["--ledger", "--before", "1d", "--vault", "."], "Error: --vault is for a vault's history; --ledger prunes"),
    ],
)
def test_usage_errors_are_one_line(db, args, message):
    out = CliRunner().invoke(cli, ["prune", *args])
    assert out.exit_code == 2
    assert out.output.splitlines()[-1].startswith(message)
    assert len(_keys(db, "turns")) == 4


def test_when_is_read_as_brain_prune_reads_it(db):
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "yesterdayish"])
    assert out.exit_code == 1 and "--before takes a date (2026-03-01), a date and time" in out.output
    date = time.strftime("%Y-%m-%d", time.localtime(CUTOFF - 5 * DAY))  # its start: rows 5 days later stay
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", date, "--json"])
    assert json.loads(out.output)["dropped"] == {"turns": 1, "recalls": 1, "ab_recall": 0}
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "14w", "--json"])  # 98 days back
    assert json.loads(out.output)["dropped"] == {"turns": 3, "recalls": 2, "ab_recall": 2}


def test_before_today_keeps_what_was_recorded_today(brain_home):
    """`--ledger --before today` dropped the turns and prompts recorded earlier today (today was
    its end): a date is the start of that day, local time, and the output says that moment."""
    began = dt.datetime.combine(dt.date.today(), dt.time.min).timestamp()
    if began > NOW - 60:
        pytest.skip("too close to midnight: a row a minute old was yesterday's")
    conn = open_db(brain_home / "brain.db")
    _turn(conn, "today", _iso(NOW - 60))
    _turn(conn, "yesterday", _iso(began - 60))
    _recall(conn, _iso(NOW - 60))
    conn.close()
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "today", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["dropped"] == {"turns": 1, "recalls": 0, "ab_recall": 0}
    assert (
        report["before"] == began
        and report["before_local"] == dt.datetime.fromtimestamp(began).astimezone().isoformat()
    )
    assert _keys(brain_home / "brain.db", "turns") == ["today"]
    text = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "today"]).output
    assert f"recorded before {dt.date.today().isoformat()} 00:00:00 local ({report['before_utc']})" in text, text


def test_a_before_that_drops_every_row_asks_first(db, monkeypatch):
    """`brain prune --ledger --before 0m` (0 months meant) deleted every turn and prompt unasked:
    now off a terminal (--json too) it refuses in one line naming --yes, nothing dropped; on one it
    says how many rows from when to when and asks; --yes drops them as before."""
    kept = {table: _keys(db, table) for table in ("turns", "recalls", "ab_recall")}
    for args in ([], ["--json"]):
        out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "0m", *args])
        assert out.exit_code == 1, out.output
        assert "would drop every turn and prompt brain has recorded (`brain turns`, `brain recalls`): 4 turns, " in (
            out.output
        )
        assert "3 prompts and 3 A/B rows, recorded from " in out.output and out.output.count("\n") == 1
        assert out.output.rstrip().endswith("Nothing dropped: add --yes to drop it")
        assert {table: _keys(db, table) for table in kept} == kept
    monkeypatch.setattr("brain.history_cli._interactive", lambda: True)
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "0m"], input="n\n")
    assert out.exit_code == 1 and "\nDrop it? [y/N]" in out.output, out.output
    assert {table: _keys(db, table) for table in kept} == kept
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "0m"], input="y\n")
    assert out.exit_code == 0 and out.output.count("pruned 4 turns, 3 prompts (recalls) and 3 A/B rows") == 1
    assert _keys(db, "turns") == []


def test_yes_drops_every_row_unasked(db):
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "now", "--yes", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["dropped"] == {"turns": 4, "recalls": 3, "ab_recall": 3}


def test_a_span_under_a_day_that_drops_the_last_days_rows_asks(db):
    """`--before 10m` (ten months meant) keeps ten minutes: with rows of the last day before it,
    asked even though some are kept; `--before 100d` and a date stay unasked."""
    conn = open_db(db)
    _turn(conn, "two hours ago", _iso(NOW - 7200))
    _turn(conn, "just now", _iso(NOW + 60))
    conn.close()
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "1h"])
    assert out.exit_code == 1 and "would drop 10 of its 12 rows, the last day's among them: 5 turns" in out.output
    assert "two hours ago" in _keys(db, "turns")
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d"])
    assert out.exit_code == 0 and "pruned 2 turns" in out.output, out.output
    out = CliRunner().invoke(
        cli, ["prune", "--ledger", "--before", time.strftime("%Y-%m-%dT%H:%M", time.localtime(NOW - 3600))]
    )
    assert out.exit_code == 0 and "pruned 3 turns" in out.output, out.output


def test_a_file_that_is_not_a_database_is_refused_in_one_line(tmp_path, monkeypatch):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    monkeypatch.setenv("BRAIN_DB", str(notes))
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "1d"])
    assert out.exit_code == 1 and len(out.output.splitlines()) == 1 and "is not an SQLite database" in out.output
    assert notes.read_text() == "my notes\n"


def test_vacuum_gives_the_space_back_and_keeps_the_file_private(brain_home):
    path = brain_home / "brain.db"
    conn = open_db(path)
    conn.execute("BEGIN")
    for i in range(2000):
        _turn(conn, f"t{i}", _iso(CUTOFF - DAY if i < 1900 else NOW))
        conn.execute("UPDATE turns SET summary = ? WHERE turn_key = ?", ("y" * 3000, f"t{i}"))
    conn.execute("COMMIT")
    conn.close()
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d", "--vacuum", "--json"])
    data = json.loads(out.output)
    assert data["vacuumed"] and data["dropped"]["turns"] == 1900
    assert data["bytes_after"] < data["bytes_before"] / 5 and data["free_bytes"] == 0
    assert data["vacuum_seconds"] is not None
    assert path.stat().st_size == data["bytes_after"]  # the WAL emptied: its pages are in the file
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 100
    conn.close()
    text = CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d", "--vacuum"]).output
    assert "the space is back on the disk (VACUUM held it " in text


def test_vacuum_alone_compacts_brain_db_and_drops_nothing(brain_home):
    """`brain prune --vacuum` alone compacts a vault's index.db; `--ledger --vacuum` alone was a
    usage error, so the space a deletion by hand left inside brain.db stayed there."""
    path = brain_home / "brain.db"
    conn = open_db(path)
    conn.execute("BEGIN")
    for i in range(2000):
        _turn(conn, f"t{i}", _iso(CUTOFF - DAY))  # all old: --before would drop them
        conn.execute("UPDATE turns SET summary = ? WHERE turn_key = ?", ("y" * 3000, f"t{i}"))
    conn.execute("COMMIT")
    conn.execute("DELETE FROM turns WHERE turn_key >= 't1'")  # leaves t0 alone
    conn.close()
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--vacuum", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["vacuumed"] and data["rows"] == 0 and data["batches"] == 0
    assert data["before"] is None and data["before_utc"] is None
    assert data["bytes_after"] < data["bytes_before"] / 5 and data["free_bytes"] == 0
    assert path.stat().st_size == data["bytes_after"]
    assert _keys(path, "turns") == ["t0"]  # old, and kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = CliRunner().invoke(cli, ["prune", "--ledger", "--vacuum"])
    assert text.exit_code == 0, text.output
    assert text.output.startswith(f"compacted {path}: now ") and "nothing given back to the disk" in text.output
    assert "; no rows dropped (VACUUM held it " in text.output and len(text.output.splitlines()) == 1
    assert _keys(path, "turns") == ["t0"]


def test_vacuum_alone_creates_no_brain_db(brain_home):
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--vacuum"])
    assert out.exit_code == 0 and out.output.startswith("nothing to compact: no brain database at ")
    assert not (brain_home / "brain.db").exists()


def test_a_prune_records_the_moment_it_cut_at_never_one_ahead_of_it(tmp_path, monkeypatch):
    """The cut a catch-up drops kept-aside rows by (``deferred``) is WHEN, or the prune's own
    moment when WHEN is ahead: a row a hook keeps aside after the prune is no row it cut (one
    written straight into brain.db then is kept too), and is recorded."""
    from brain.ledger import deferred

    path = tmp_path / "brain.db"
    open_db(path).close()
    monkeypatch.setattr(deferred, "start_catch_up", lambda db_path: False)
    prune_ledger(NOW - DAY, path=path)
    prune_ledger(NOW + 30 * DAY, path=path)  # a WHEN ahead: `--before 2100-01-01`
    conn = sqlite3.connect(path)
    cuts = [r[0] for r in conn.execute("SELECT cut FROM ledger_prunes ORDER BY id")]
    conn.close()
    assert cuts[0] == _iso(NOW - DAY) and _iso(NOW) <= cuts[1] < _iso(NOW + 60)
    monkeypatch.setattr(deferred, "utc_now", lambda: _iso(NOW + 60))  # kept aside a minute after
    deferred.keep_aside(path, deferred.TURN, {"turn_key": "s:after", "session_id": "s"})
    assert deferred.catch_up(path)[:3] == (1, [], 0)
    assert _keys(path, "turns") == ["s:after"]


def test_the_stop_hook_does_not_import_the_prune():
    hook = (ROOT / "brain" / "ledger" / "hook.py").read_text() + (ROOT / "brain" / "autorecall" / "hook.py").read_text()
    assert "prune" not in hook


# ----- kill -9, and a Stop hook during a prune (subprocesses) -----------------------------------------

# The CLI with each batch 100 rows, announcing on stdout the statement it reached (STATEMENT:N,
# before or after it runs) and then sleeping there, so the test kills it exactly at that point.
WRAPPER = """
import contextlib, sys, time
import brain.ledger.prune as p
word, nth, when = sys.argv.pop(1).split(":")
p.BATCH_ROWS = p.MIN_BATCH_ROWS = p.MAX_BATCH_ROWS = 100
real = p.connection
class Announcing:
    def __init__(self, conn):
        self.conn, self.seen = conn, 0
    def __getattr__(self, name):
        return getattr(self.conn, name)
    def execute(self, sql, *args):
        if sql.split()[0].upper() == word:
            self.seen += 1
        hit = sql.split()[0].upper() == word and self.seen == int(nth)
        if hit and when == "before":
            print("here", flush=True)
        cursor = self.conn.execute(sql, *args)
        if hit and when == "after":
            print("here", flush=True)
            time.sleep(120)
        return cursor
@contextlib.contextmanager
def announcing(*args, **kwargs):
    with real(*args, **kwargs) as conn:
        yield Announcing(conn)
p.connection = announcing
sys.argv[0] = "brain"
from brain.__main__ import main
main()
"""
OLD_TURNS, NEW_TURNS, OLD_RECALLS = 1000, 300, 500


def _fill(path: Path, old: int, new: int, recalls: int, summary: int = 200) -> None:
    conn = open_db(path)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO turns (turn_key, session_id, created_at, updated_at, summary) VALUES (?, 's', ?, ?, ?)",
        [
            (f"k{i}", t, t, f"{i} " + "z" * summary)
            for i in range(old + new)
            for t in [_iso(CUTOFF - DAY - i if i < old else NOW - i)]
        ],
    )
    conn.executemany(
        "INSERT INTO recalls (created_at, prompt, prompt_chars, latency_ms) VALUES (?, 'p', 1, 1)",
        [(_iso(CUTOFF - DAY - i),) for i in range(recalls)],
    )
    conn.execute("COMMIT")
    conn.close()


def _newer_digest(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT * FROM turns WHERE created_at >= ? ORDER BY id", (_iso(CUTOFF),)).fetchall()
        return hashlib.sha256(repr(rows).encode()).hexdigest()
    finally:
        conn.close()


def _counts(path: Path) -> tuple[str, int, int]:
    conn = sqlite3.connect(path)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return check, *(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("turns", "recalls"))
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize(
    ("point", "vacuum", "turns_left", "recalls_left"),
    [
        ("DELETE:3:after", False, NEW_TURNS + OLD_TURNS - 200, OLD_RECALLS),  # inside the 3rd batch: 2 done
        ("COMMIT:4:after", False, NEW_TURNS + OLD_TURNS - 300, OLD_RECALLS),  # right after the 3rd (the 1st: the cut)
        ("DELETE:12:after", False, NEW_TURNS, OLD_RECALLS - 100),  # inside the 2nd batch of recalls
        ("VACUUM:1:before", True, NEW_TURNS, 0),  # while VACUUM rewrites the file
        ("VACUUM:1:after", True, NEW_TURNS, 0),  # VACUUM done, its pages still only in the WAL
    ],
)
def test_a_kill_at_any_point_leaves_a_consistent_database(tmp_path, point, vacuum, turns_left, recalls_left):
    db = tmp_path / "brain.db"
    _fill(db, OLD_TURNS, NEW_TURNS, OLD_RECALLS, summary=20_000 if vacuum else 200)
    digest = _newer_digest(db)
    _, env = brain_command()
    env.update(BRAIN_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    args = ["prune", "--ledger", "--before", "100d", *(["--vacuum"] if vacuum else [])]
    proc = subprocess.Popen(
        [sys.executable, "-c", WRAPPER, point, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"here\n", (
            proc.stderr.read() if proc.stderr else ""
        )
        if point == "VACUUM:1:before":
            time.sleep(0.02)  # VACUUM of the 6 MB kept takes longer than this
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert _counts(db) == ("ok", turns_left, recalls_left)
    assert _newer_digest(db) == digest  # every newer row as it was
    report = prune_ledger(CUTOFF, path=db)  # the next run finishes the job
    assert report.dropped["turns"] == turns_left - NEW_TURNS
    assert _counts(db) == ("ok", NEW_TURNS, 0) and _newer_digest(db) == digest


@pytest.mark.slow
def test_a_stop_hook_during_a_large_prune_records_its_turn(tmp_path):
    """Stop hooks, with their real 2 s budget, run one after another while a prune of 40,000
    turns of 3 KB deletes in batches: each records its row, and none gives up."""
    db = tmp_path / "brain.db"
    _fill(db, 40_000, 100, 0, summary=3000)
    _, env = brain_command()
    cmd = [sys.executable, "-m", "brain"]  # this checkout's brain, for the prune and the hooks
    env.update(BRAIN_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("BRAIN_HOOK_BUDGET", None)
    prune = subprocess.Popen([*cmd, "prune", "--ledger", "--before", "100d", "--json"], env=env, stdout=subprocess.PIPE)
    recorded: list[str] = []
    try:
        while _counts_quick(db) == 40_100:  # until the first batch is gone
            assert prune.poll() is None
            time.sleep(0.02)
        while prune.poll() is None and len(recorded) < 8:
            i = len(recorded)
            t = Transcript(tmp_path / f"t{i}.jsonl", session=f"session-{i}")
            t.prompt(f"question {i}")
            t.text(f"answer {i}")
            payload = hook_payload(t.write(), session_id=f"session-{i}")
            hook = subprocess.run(
                [*cmd, "hook", "stop"], input=json.dumps(payload).encode(), env=env, capture_output=True, timeout=60
            )
            assert hook.returncode == 0
            recorded.append(f"question {i}")
        still_pruning = prune.poll() is None
        out, _ = prune.communicate(timeout=300)
    finally:
        prune.kill()
    assert len(recorded) >= 3 and (still_pruning or len(recorded) == 8), "the prune ended before the hooks ran"
    report = json.loads(out)
    # in batches, the hooks' rows written between them (how long each held the lock is a figure,
    # not a property: it was bounded at 1 s of wall time here, which a loaded machine can pass)
    assert report["dropped"]["turns"] == 40_000 and report["batches"] > 1
    conn = sqlite3.connect(db)
    asks = {r[0] for r in conn.execute("SELECT ask FROM turns WHERE ask IS NOT NULL")}
    conn.close()
    assert asks == set(recorded)
    log = tmp_path / "logs" / "hook.log"
    assert not log.exists() or "gave up" not in log.read_text()


def _counts_quick(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return conn.execute("SELECT count(*) FROM turns").fetchone()[0]
    finally:
        conn.close()


def test_a_vacuum_behind_a_reader_does_not_wait_for_it_and_says_so(brain_home, monkeypatch):
    """The vacuum ended with wal_checkpoint(TRUNCATE), which waited out the whole busy timeout
    (a minute) behind a reader of brain.db (brain turns, brain mcp) and then said "the space is
    back on the disk" while VACUUM's pages sat in the WAL; it now waits for no reader and says
    where the space is (--json: wal_folded)."""
    # The old wait made an hour, and the test allows it ten minutes: a fold that waits for the
    # reader cannot pass, and a loaded machine cannot fail it (it was bounded at 2.5 s of wall
    # time for a wait of 3 s).
    monkeypatch.setattr(ledger_prune, "BUSY_TIMEOUT_MS", 3_600_000)
    path = brain_home / "brain.db"
    conn = open_db(path)
    conn.execute("BEGIN")
    for i in range(500):
        _turn(conn, f"t{i}", _iso(CUTOFF - DAY if i else NOW))
        conn.execute("UPDATE turns SET summary = ? WHERE turn_key = ?", ("y" * 3000, f"t{i}"))
    conn.execute("COMMIT")
    conn.close()
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM turns").fetchone()[0] == 500  # holds the state before
    try:
        done: list[Any] = []
        pruning = threading.Thread(
            target=lambda: done.append(
                CliRunner().invoke(cli, ["prune", "--ledger", "--before", "100d", "--vacuum", "--json"])
            ),
            daemon=True,
        )
        pruning.start()
        pruning.join(timeout=600)
        assert done, "waited for the reader"
        data = json.loads(done[0].output)
        assert data["vacuumed"] and data["dropped"]["turns"] == 499 and data["wal_folded"] is False
        for args in (["--before", "100d"], []):
            text = CliRunner().invoke(cli, ["prune", "--ledger", *args, "--vacuum"])
            assert text.exit_code == 0, text.output
            assert "while another process (brain turns, brain mcp) reads it as it was" in text.output, text.output
            assert "back on the disk" not in text.output and "given back" not in text.output
    finally:
        reader.execute("ROLLBACK")
        reader.close()  # the last connection: it folds the WAL in, as said
    wal = path.with_name("brain.db-wal")
    assert not wal.exists() or not wal.stat().st_size
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--vacuum", "--json"])
    assert json.loads(out.output)["wal_folded"] is True


def test_a_proc_file_as_brain_db_is_refused_not_no_database(brain_home, monkeypatch):
    # BRAIN_DB=/proc/self/status (0 bytes to stat, text to read) was "nothing to compact: no brain
    # database at /proc/self/status yet", exit 0, where `brain turns` refuses it as no database
    monkeypatch.setenv("BRAIN_DB", "/proc/self/status")
    for args in (["--vacuum"], ["--before", "30d", "--yes"]):
        out = CliRunner().invoke(cli, ["prune", "--ledger", *args])
        assert out.exit_code == 1 and "no brain database" not in out.output, out.output
        assert "/proc/self/status is not an SQLite database (left as it is)" in out.output
        assert out.output.count("\n") == 1 and "Traceback" not in out.output


def test_a_brain_db_name_with_a_line_break_prints_on_one_line(brain_home, monkeypatch):
    # "no brain database at PATH yet" printed the name raw: its line break split the line in two
    path = brain_home / "led\nger.db"
    monkeypatch.setenv("BRAIN_DB", str(path))
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--vacuum"])
    assert out.exit_code == 0 and out.output.count("\n") == 1, out.output
    assert out.output == f"nothing to compact: no brain database at {brain_home}/led\\nger.db yet\n"
    with open_db(path) as conn:  # one there: "compacted PATH: ..." on one line too
        write_turn(conn, {"turn_key": "k", "session_id": "s", "ask": "x"})
    out = CliRunner().invoke(cli, ["prune", "--ledger", "--vacuum"])
    assert out.exit_code == 0 and out.output.count("\n") == 1, out.output
    assert out.output.startswith(f"compacted {brain_home}/led\\nger.db")
