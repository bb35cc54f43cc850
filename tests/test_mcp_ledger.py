"""`brain mcp`'s ``status`` and ``recent_turns`` say what `brain status` and `brain turns` say of the
turn ledger, through the MCP SDK's client, and write nothing: ``status`` had no ledger figure at
all (an agent could not tell whether its sessions were being recorded), and ``recent_turns`` did
not say that turns the hook kept aside were missing from its list."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into
from serve_helpers import mcp_call, served

from brain import config
from brain.cli import cli
from brain.db import open_db
from brain.db_migrations import MIGRATIONS
from brain.kept_aside import REJECTED, kept_aside_dir
from brain.ledger import deferred
from brain.ledger.state import KEYS
from brain.ledger.store import write_turn

NEWER = "m999_from_a_newer_brain"


def _index(vault: Path) -> None:
    index_into(Path(os.environ["BRAIN_HOME"]), vault, FakeEmbedder())


def _seed(db: Path) -> None:
    """Three turns, the newest one whose prompt was never found (no start: its time is when it was recorded)."""
    conn = open_db(db)
    try:
        for key, started in (("s:1", "2026-11-20T10:00:00.000Z"), ("s:2", "2026-11-28T10:00:00.000Z")):
            write_turn(conn, {"turn_key": key, "session_id": "s", "ask": key, "started_at": started})
        write_turn(conn, {"turn_key": "s:3", "session_id": "s", "summary": "no prompt"}, now="2026-11-29T09:30:00.000Z")
    finally:
        conn.close()


def _keep_aside(db: Path, turns: int, recalls: int = 0) -> None:
    for i in range(turns):
        deferred.keep_aside(db, deferred.TURN, {"turn_key": f"k:{i}", "session_id": "k", "ask": f"kept {i}"})
    for _ in range(recalls):
        deferred.keep_aside(db, deferred.RECALL, {"session_id": "k", "prompt": "why", "prompt_chars": 3})


def _files(db: Path) -> dict[str, bytes]:
    """Every file of the ledger: brain.db, its -wal, the kept-aside folder (SQLite's -shm aside, and
    a -wal it opened empty for a reader: the index of what the -wal holds, no row)."""
    found = {p.name: p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file()}
    found.pop(db.name + "-shm", None)
    if not found.get(db.name + "-wal", b"x"):
        del found[db.name + "-wal"]
    folder = kept_aside_dir(db)
    if folder.is_dir():
        found.update({str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()})
    return found


def _answer(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def _status_json(vault: Path) -> dict:
    result = CliRunner().invoke(cli, ["status", "--vault", str(vault), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _ledger(answer: dict) -> dict:
    return {key: answer[key] for key in answer if key.startswith("ledger_")}


def test_status_gives_brain_status_s_ledger_figures_and_writes_nothing(toy_vault):
    _index(toy_vault)
    db = config.db_path()
    _seed(db)
    _keep_aside(db, turns=2, recalls=1)
    (kept_aside_dir(db) / REJECTED).mkdir()
    (kept_aside_dir(db) / REJECTED / "1-2.json").write_text("not JSON")
    before = _files(db)
    said = _ledger(_answer(mcp_call(toy_vault, "status", {})))
    assert said == {
        "ledger_turns": 3,
        "ledger_last_turn": "2026-11-29T09:30:00.000Z",  # brain turns' first: recorded then, never started
        "ledger_kept_aside": 3,
        "ledger_rejected": 1,
        "ledger_newer": None,
        "ledger_error": None,
    }
    assert _ledger(_status_json(toy_vault)) == said  # the same keys, the same figures
    with served(toy_vault, watch=False):  # the ledger is read in brain mcp's process, server or not
        answer = _answer(mcp_call(toy_vault, "status", {}, use_server=True))
    assert answer["server"] is not None and _ledger(answer) == said
    assert _files(db) == before  # nothing recorded, moved nor written


def _older_ledger(db: Path) -> None:
    """brain.db as the brain before m004 left it (the hooks then keep their rows aside for its
    upgrade), with three turns, the newest one never started; one turn kept aside."""
    names = [name for name, _ in MIGRATIONS.steps]
    steps, MIGRATIONS.steps = MIGRATIONS.steps, MIGRATIONS.steps[: names.index("m004_turns_partial")]
    try:
        open_db(db).close()
    finally:
        MIGRATIONS.steps = steps
    conn = sqlite3.connect(db)
    for key, started, created in (
        ("s:1", "2026-11-20T10:00:00.000Z", "2026-11-20T10:01:00.000Z"),
        ("s:2", None, "2026-11-21T10:00:00.000Z"),
        ("s:3", "2026-11-19T10:00:00.000Z", "2026-11-22T10:00:00.000Z"),
    ):
        conn.execute(
            "INSERT INTO turns (turn_key, session_id, started_at, created_at, updated_at) VALUES (?, 's', ?, ?, ?)",
            (key, started, created, created),
        )
    conn.commit()
    conn.close()
    _keep_aside(db, turns=1)


def _not_upgraded(db: Path) -> bool:
    conn = sqlite3.connect(db)
    try:
        return "m004_turns_partial" not in {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    finally:
        conn.close()


def test_status_neither_creates_nor_upgrades_the_ledger(toy_vault):
    _index(toy_vault)
    db = config.db_path()
    assert _ledger(_answer(mcp_call(toy_vault, "status", {}))) == {
        **dict.fromkeys(KEYS),
        "ledger_turns": 0,
        "ledger_kept_aside": 0,
        "ledger_rejected": 0,
    }
    assert not db.exists()
    _older_ledger(db)
    before = _files(db)
    said = _ledger(_answer(mcp_call(toy_vault, "status", {})))
    assert said["ledger_turns"] == 3 and said["ledger_last_turn"] == "2026-11-21T10:00:00.000Z"
    assert said["ledger_kept_aside"] == 1 and said["ledger_error"] is None
    assert _ledger(_status_json(toy_vault)) == said
    assert _files(db) == before and _not_upgraded(db)


def test_recent_turns_reads_an_older_ledger_as_it_is(toy_vault):
    """It upgraded it, a write (of seconds at 1,000,000 turns) by a server whose tools write nothing."""
    _index(toy_vault)
    db = config.db_path()
    _older_ledger(db)
    before = _files(db)
    listed = _answer(mcp_call(toy_vault, "recent_turns", {}))
    assert [t["turn_key"] for t in listed["turns"]] == ["s:2", "s:1", "s:3"]
    assert _files(db) == before and _not_upgraded(db)


def _make_newer(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("ALTER TABLE turns ADD COLUMN newer_rule TEXT")
    conn.execute("INSERT INTO _migrations (db, name, applied_at) VALUES ('brain', ?, 0)", (NEWER,))
    conn.close()


def test_recent_turns_says_turns_kept_aside_are_not_listed_and_leaves_them_aside(toy_vault, zone):
    zone("Asia/Tokyo")  # UTC+9: local time is not the ledger's UTC
    _index(toy_vault)
    db = config.db_path()
    _seed(db)
    answer = _answer(mcp_call(toy_vault, "recent_turns", {}))
    assert len(answer["turns"]) == 3 and answer["warnings"] == []
    _keep_aside(db, turns=2, recalls=1)  # a prompt's row is no turn: not counted
    first = sorted(kept_aside_dir(db).glob("*.json"))[0].name.split("-")[0]
    before = _files(db)
    answer = _answer(mcp_call(toy_vault, "recent_turns", {}))
    assert len(answer["turns"]) == 3
    (said,) = answer["warnings"]
    assert said.startswith("2 turns the Stop hook recorded (the first at 20") and "\n" not in said, said
    assert said.endswith("`brain turns` applies it and records them"), said
    import time

    # in local time, as `brain turns` lists turns (it was UTC: two clocks for one moment)
    assert f"(the first at {time.strftime('%Y-%m-%d %H:%M', time.localtime(int(first) / 1e9))} local)" in said, said
    with served(toy_vault, watch=False):
        assert _answer(mcp_call(toy_vault, "recent_turns", {"limit": 1}, use_server=True))["warnings"] == [said]
    assert _files(db) == before  # counted, never recorded: `brain turns` does that
    deferred.catch_up(db)
    assert _answer(mcp_call(toy_vault, "recent_turns", {}))["warnings"] == []


def test_a_newer_ledger_is_said_by_status_and_its_kept_turns_wait_for_the_newer_brain(toy_vault):
    _index(toy_vault)
    db = config.db_path()
    _seed(db)
    _make_newer(db)
    _keep_aside(db, turns=1)
    status = _ledger(_answer(mcp_call(toy_vault, "status", {})))
    assert status["ledger_turns"] == 3 and status["ledger_kept_aside"] == 1
    assert f"{db} was upgraded by a newer brain ({NEWER})" in status["ledger_newer"]
    assert "\n" not in status["ledger_newer"] and _ledger(_status_json(toy_vault)) == status
    newer, kept = _answer(mcp_call(toy_vault, "recent_turns", {}))["warnings"]
    assert NEWER in newer and kept.startswith("1 turn the Stop hook recorded (the first at ")
    assert kept.endswith(" is kept aside, not in the ledger yet, so not listed here: the newer brain that upgraded "
                         "the ledger records it"), kept  # fmt: skip


@pytest.mark.parametrize("damage", ["not a database", "a folder"])
def test_status_answers_with_a_ledger_it_cannot_read_saying_why(toy_vault, damage):
    _index(toy_vault)
    db = config.db_path()
    if damage == "a folder":
        db.mkdir(parents=True)
    else:
        db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    answer = _answer(mcp_call(toy_vault, "status", {}))
    assert answer["notes"] > 0 and answer["ledger_turns"] is None
    error = answer["ledger_error"]
    assert str(db) in error and "\n" not in error and "Traceback" not in error, error
    assert _ledger(_status_json(toy_vault)) == _ledger(answer)
    text = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
    assert text.exit_code == 0 and f"ledger: {error}" in text.stdout.splitlines(), text.output


def test_brain_status_counts_the_turns_recorded_and_says_when_the_last_began(toy_vault, zone):
    """In local time, as `brain turns` lists it: `brain status` said the ledger's UTC ("the last
    begun 2026-11-29 09:30 UTC") where `brain turns` showed the same turn at 18:30 in Tokyo."""
    zone("Asia/Tokyo")  # UTC+9, no summer time
    _index(toy_vault)
    assert "ledger:" not in CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)]).stdout  # none yet
    _seed(config.db_path())
    lines = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)]).stdout.splitlines()
    assert "ledger: 3 turns recorded, the last begun 2026-11-29 18:30 local" in lines, lines
    listed = CliRunner().invoke(cli, ["turns"]).stdout
    assert listed.startswith("2026-11-29 18:30  "), listed  # one clock for one moment
    as_json = json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).stdout)
    assert as_json["ledger_last_turn"] == "2026-11-29T09:30:00.000Z"  # the JSON keeps the ledger's UTC


def test_a_kept_aside_file_whose_name_no_clock_reads_is_counted_without_a_time(toy_vault, zone):
    """A kept-aside turn whose file's name began "²-" (a digit to ``isdigit``, not to ``int``) or
    with more digits than a clock reads failed `recent_turns` (ValueError, OverflowError); it is
    counted, no time said."""
    from brain.ledger.state import kept_aside_warning

    zone("Asia/Tokyo")
    _index(toy_vault)
    db = config.db_path()
    _seed(db)
    _keep_aside(db, turns=1)
    (kept,) = kept_aside_dir(db).glob("*.json")
    for name in ("\u00b2-1.json", "9" * 30 + "-1.json", "9" * 240 + "-1.json"):
        kept = kept.rename(kept.with_name(name))
        said = kept_aside_warning()
        assert said and said.startswith("1 turn the Stop hook recorded is kept aside, not in "), said
        (warning,) = _answer(mcp_call(toy_vault, "recent_turns", {}))["warnings"]
        assert warning == said


def test_status_says_whether_there_is_an_index_as_brain_status_json_does(toy_vault):
    # an agent told the vault has no index yet by a key, not by reading nulls and zeros
    before = _answer(mcp_call(toy_vault, "status", {}))
    assert before["indexed"] is False and _status_json(toy_vault)["indexed"] is False
    _index(toy_vault)
    after = _answer(mcp_call(toy_vault, "status", {}))
    assert after["indexed"] is True and _status_json(toy_vault)["indexed"] is True
