"""`brain turns` and `brain hook install/uninstall` through click."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner
from ledger_helpers import Transcript, fixture, hook_payload

from brain.cli import cli
from brain.ledger.hook import record_stop

SPOTTER = "spotter_v2.1.38_plan_web_task_bash.jsonl"


def _record(tmp_path, session="sess-one-0001", ask="add a cache", cwd=None):
    t = Transcript(tmp_path / f"{session}.jsonl", session=session)
    t.prompt(ask)
    t.tool("Read", file_path="/home/dev/proj/src/app.py")
    t.tool("Edit", file_path="/home/dev/proj/src/app.py")
    t.tool("Bash", command="pytest -q")
    t.text("Added an LRU cache. We decided to keep it in memory instead of Redis.")
    record_stop(hook_payload(t.write(), session_id=session, cwd=cwd or str(tmp_path)))


def test_turns_empty():
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0
    assert "no turns recorded yet" in result.output


def test_turns_text(tmp_path):
    _record(tmp_path)
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "session sess-one" in out and f"{tmp_path.name}@feature/x" in out
    assert "ask      add a cache" in out
    assert "wrote    /home/dev/proj/src/app.py" in out
    assert "tools    Read×1, Edit×1, Bash×1" in out
    assert "$        pytest -q" in out
    assert "decided  Added an LRU cache. We decided to keep it in memory instead of Redis." in out


def test_turns_json_and_filters(tmp_path):
    _record(tmp_path, session="aaaa-1", ask="first")
    _record(tmp_path, session="bbbb-2", ask="second")
    result = CliRunner().invoke(cli, ["turns", "--session", "bbbb", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["ask"] == "second" and row["session_id"] == "bbbb-2"
    assert row["tools"] == {"Read": 1, "Edit": 1, "Bash": 1}
    assert row["commands"] == ["pytest -q"]
    result = CliRunner().invoke(cli, ["turns", "--json", "--limit", "1"])
    assert len(json.loads(result.output)) == 1
    result = CliRunner().invoke(cli, ["turns", "--json", "--project", "no-such-project"])
    assert json.loads(result.output) == []
    # Turns there are, none of that session or project: not "no turns recorded yet".
    result = CliRunner().invoke(cli, ["turns", "--session", "zzz"])
    assert result.exit_code == 0 and result.output == "no turns recorded for session 'zzz'\n"
    result = CliRunner().invoke(cli, ["turns", "--session", "aaaa", "--project", "nope"])
    assert result.output == "no turns recorded for session 'aaaa' and project 'nope'\n"


def test_turns_real_transcript(tmp_path):
    record_stop(hook_payload(fixture(SPOTTER), cwd=str(tmp_path)))
    result = CliRunner().invoke(cli, ["turns"])
    assert "ask      create the beads" in result.output
    assert "tools    Bash×4" in result.output
    assert "$        bd dep add spotter-0p7.2 spotter-0p7.1" in result.output


def test_turns_stats(tmp_path):
    _record(tmp_path, session="aaaa-1", ask="first")
    _record(tmp_path, session="bbbb-2", ask="second")
    result = CliRunner().invoke(cli, ["turns", "--stats"])
    assert result.exit_code == 0, result.output
    assert "2 turns recorded" in result.output
    assert f"2  {tmp_path.name}" in result.output
    assert "/home/dev/proj/src/app.py" in result.output
    data = json.loads(CliRunner().invoke(cli, ["turns", "--stats", "--json"]).output)
    assert data["turns"] == 2
    assert {"tool": "Bash", "uses": 2, "turns": 2} in data["top_tools"]
    assert data["top_files"] == [{"file": "/home/dev/proj/src/app.py", "turns": 2}]
    one = CliRunner().invoke(cli, ["turns", "--stats", "--days", "1"])
    assert "(last day with turns):" in one.output and "1 days" not in one.output


def test_hook_install_and_uninstall_commands(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "opus"}')
    runner = CliRunner()
    result = runner.invoke(cli, ["hook", "install", "--settings", str(settings)])
    assert result.exit_code == 0, result.output
    assert "added a Stop hook" in result.output and "backup:" in result.output
    result = runner.invoke(cli, ["hook", "install", "--settings", str(settings)])
    assert "already installed" in result.output
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("hook stop")
    result = runner.invoke(cli, ["hook", "uninstall", "--settings", str(settings)])
    assert result.exit_code == 0 and "removed the Stop hook" in result.output
    assert json.loads(settings.read_text()) == {"model": "opus"}


def test_hook_install_project_default_and_dry_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["hook", "install", "--dry-run"])
    assert "would write to" in result.output and not (tmp_path / ".claude").exists()
    result = CliRunner().invoke(cli, ["hook", "install"])
    assert result.exit_code == 0
    assert (tmp_path / ".claude" / "settings.json").is_file()


def test_broken_settings_is_a_clean_error(tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text("{oops")
    result = CliRunner().invoke(cli, ["hook", "install", "--settings", str(settings)])
    assert result.exit_code == 1
    assert "is not valid JSON" in result.output and "Traceback" not in result.output


def test_turns_says_which_rows_are_partial(tmp_path):
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("run the long job")
    t.text("The job finished.")
    record_stop(hook_payload(t.write(), last_assistant_message="The job finished."), deadline=0.0)
    out = CliRunner().invoke(cli, ["turns"]).output
    assert "ask      (no prompt found)" in out and "summary  The job finished." in out
    assert "partial  the hook ran out of time reading this turn: only what its input said" in out
    (row,) = json.loads(CliRunner().invoke(cli, ["turns", "--json"]).output)
    assert row["partial"] == 1


def test_turns_show_no_terminal_control_from_what_was_recorded(tmp_path):
    # A prompt with pasted coloured output, a path and a command holding escape sequences: OSC 52
    # would write the clipboard, OSC 0 the window title, CSI 2J clear the screen.
    control = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    t = Transcript(tmp_path / "t.jsonl", session="sess\x1b]0;own\x07")
    t.prompt("fix \x1b[31mred\x1b[0m this \x1b]52;c;ZXZpbA==\x07 output")
    t.tool("Write", file_path="/p/\x1b[2Jfile.py")
    t.tool("Bash", command="echo \x1b]0;title\x07 done")
    t.text("I'll use \x1b[5mblink\x1b[0m instead of it")
    record_stop(hook_payload(t.write(), session_id="sess\x1b]0;own\x07", cwd=str(tmp_path / "pro\x1b[1mj")))
    for args in (["turns"], ["turns", "--stats"]):
        out = CliRunner().invoke(cli, args, color=True)  # color: click strips no CSI on its own
        assert out.exit_code == 0, out.output
        assert control.search(out.output) is None, repr(out.output)
        assert "\\x1b[2Jfile.py" in out.output and "pro\\x1b[1mj" in out.output  # shown, not acted on
    out = CliRunner().invoke(cli, ["turns"], color=True).output
    assert "session sess\\x1b" in out and "ask      fix \\x1b[31mred\\x1b[0m this \\x1b]52;c;" in out
    assert "$        echo \\x1b]0;title\\x07 done" in out
    (row,) = json.loads(CliRunner().invoke(cli, ["turns", "--json"]).output)
    assert row["ask"] == "fix \x1b[31mred\x1b[0m this \x1b]52;c;ZXZpbA==\x07 output"  # --json: as recorded


def test_turns_read_hand_edited_rows_without_a_traceback(tmp_path):
    import sqlite3

    from brain import config

    _record(tmp_path)
    conn = sqlite3.connect(config.db_path())
    conn.execute(  # valid JSON of the wrong shapes, and values that are not text
        "UPDATE turns SET tools = '[1, 2]', commands = '\"one\"', files_written = '{\"a\": 1}', "
        "files_read = '{oops', decisions = '5', subagents = '[1, null]', tool_errors = '\"e\"', "
        "ask = 42, started_at = 20260101, project = 7, cwd = 9"
    )
    conn.commit()
    conn.close()
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0, result.output
    assert "ask      42" in result.output and result.output.startswith("20260101  7@")


def test_a_flag_of_the_other_mode_is_a_usage_error_not_ignored(tmp_path):
    # `brain turns --days 1` listed a turn of months ago: --days shapes only --stats.
    _record(tmp_path)
    for command in ("turns", "recalls"):
        for args, message in (
            (["--days", "1"], "--days goes with --stats; the list takes --limit"),
            (["--stats", "-n", "3"], "--limit goes with the list; --stats takes --days"),
        ):
            result = CliRunner().invoke(cli, [command, *args])
            assert result.exit_code == 2 and message in result.output, result.output
        assert CliRunner().invoke(cli, [command, "--stats", "--days", "3"]).exit_code == 0
        assert CliRunner().invoke(cli, [command, "-n", "3"]).exit_code == 0


def test_a_brain_db_that_is_a_fifo_or_device_says_so(tmp_path, monkeypatch):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/null"):  # both were "disk I/O error"
        monkeypatch.setenv("BRAIN_DB", str(path))
        result = CliRunner().invoke(cli, ["turns"])
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {path} is not a regular file (a device, FIFO or socket), so not a database: "
            "set BRAIN_DB to a file\n"
        )


def test_turns_says_why_a_row_is_partial(tmp_path):
    """Every partial row read "the hook ran out of time", a transcript that was missing too."""
    record_stop(hook_payload(tmp_path / "gone.jsonl", last_assistant_message="Done."))
    out = CliRunner().invoke(cli, ["turns"]).output
    assert "partial  its transcript could not be read (hook.log says why)" in out
    assert "ran out of time" not in out


def test_turns_says_a_row_cut_at_the_read_cap_is_partial(tmp_path):
    from brain.db import connection
    from brain.ledger.store import write_turn

    row = {"turn_key": "s:text:1", "session_id": "s", "summary": "Done.", "byte_start": 10, "byte_end": 20}
    with connection() as conn:
        write_turn(conn, row, cut=True)
    out = CliRunner().invoke(cli, ["turns"]).output
    assert "partial  its prompt lies more than 16 MB back in the transcript" in out


def test_turns_since_lists_the_turns_begun_since_as_recent_turns_does(tmp_path):
    """MCP recent_turns(since=…) listed the turns since a moment; `brain turns` had no --since,
    and the person driving the agent could not ask the ledger what the agent could."""
    import sqlite3

    from brain import config

    _record(tmp_path, session="aaaa-1", ask="old work")
    _record(tmp_path, session="bbbb-2", ask="new work")
    conn = sqlite3.connect(config.db_path())
    conn.execute("UPDATE turns SET started_at = '2026-01-01T09:00:00.000Z' WHERE session_id = 'aaaa-1'")
    conn.execute("UPDATE turns SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE session_id = 'bbbb-2'")
    conn.commit()
    conn.close()
    for since in ("1d", "today", "2026-06-01", "30m"):
        result = CliRunner().invoke(cli, ["turns", "--since", since, "--json"])
        assert result.exit_code == 0, result.output
        assert [row["ask"] for row in json.loads(result.output)] == ["new work"], since
    result = CliRunner().invoke(cli, ["turns", "--since", "2025-12-31", "--json"])
    assert [row["ask"] for row in json.loads(result.output)] == ["new work", "old work"]
    result = CliRunner().invoke(cli, ["turns", "--since", "0m", "--project", "nowhere"])
    assert result.output == "no turns recorded for project 'nowhere' since '0m'\n"
    result = CliRunner().invoke(cli, ["turns", "--since", "last tuesday"])
    assert result.exit_code == 1 and result.output.startswith("Error: --since takes a date (2026-03-01)")
    result = CliRunner().invoke(cli, ["turns", "--stats", "--since", "1d"])
    assert result.exit_code == 2 and "--since goes with the list; --stats takes --days" in result.output


def test_turns_show_when_each_began_in_local_time_as_since_and_stats_read_it(tmp_path, zone):
    """`brain turns` printed started_at's UTC as it is stored ("2026-02-12 16:02", no zone said),
    where --since and --stats read local days: in Tokyo, `--since 2026-02-13` listed a turn shown
    as begun on the 12th, which --stats counted on the 13th."""
    import sqlite3

    from brain import config

    zone("Asia/Tokyo")  # UTC+9, no summer time
    _record(tmp_path, session="aaaa-1", ask="late work")
    conn = sqlite3.connect(config.db_path())
    conn.execute("UPDATE turns SET started_at = '2026-02-12T16:02:31.000Z'")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(cli, ["turns", "--since", "2026-02-13"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"2026-02-13 01:02  {tmp_path.name}@feature/x  session aaaa-1"), result.output
    stats = json.loads(CliRunner().invoke(cli, ["turns", "--stats", "--json"]).output)
    assert [d["day"] for d in stats["per_day"]] == ["2026-02-13"]
    # the JSON keeps the ledger's UTC; a hand-edited value no clock reads is shown as it is
    (row,) = json.loads(CliRunner().invoke(cli, ["turns", "--json"]).output)
    assert row["started_at"] == "2026-02-12T16:02:31.000Z"
    conn = sqlite3.connect(config.db_path())
    conn.execute("UPDATE turns SET started_at = 'late on tuesday'")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0 and result.output.startswith("late on tuesday  "), result.output


def test_a_transcript_time_in_another_form_is_stored_in_utc_as_the_others(tmp_path, utc):
    """A transcript line's timestamp was stored as written, and the ledger compares them as text:
    "2026-12-07T10:00:00+14:00" (20:00 UTC the day before) sorted above a turn begun at 09:00 UTC
    and --since the 7th listed it, and a "garbage" one sorted above every turn, the newest day
    --stats counted back from: the 14 days with turns listed one turn of three."""

    def stop(session: str, stamp: str) -> None:
        path = tmp_path / f"{session}.jsonl"
        lines = [
            {"type": "user", "message": {"role": "user", "content": f"ask {session}"}, "uuid": f"u-{session}"},
            {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]}},
        ]
        path.write_text(
            "".join(json.dumps({**line, "timestamp": stamp, "sessionId": session}) + "\n" for line in lines)
        )
        record_stop(hook_payload(path, session_id=session, cwd=str(tmp_path)))

    stop("offset", "2026-12-07T10:00:00+14:00")
    stop("zulu", "2026-12-07T09:00:00Z")
    stop("naive", "2026-12-07 08:00:00.5")  # no zone: UTC, as SQLite's date() reads it
    stop("garbage", "garbage")
    rows = json.loads(CliRunner().invoke(cli, ["turns", "--json"]).output)
    started = {row["session_id"]: row["started_at"] for row in rows}
    assert started["offset"] == "2026-12-06T20:00:00.000Z"
    assert started["zulu"] == "2026-12-07T09:00:00.000Z" and started["naive"] == "2026-12-07T08:00:00.500Z"
    assert started["garbage"] is None  # its time of recording stands in
    assert [row["session_id"] for row in rows][1:] == ["zulu", "naive", "offset"]
    since = json.loads(CliRunner().invoke(cli, ["turns", "--since", "2026-12-07", "--json"]).output)
    assert {row["session_id"] for row in since} == {"garbage", "zulu", "naive"}
    stats = json.loads(CliRunner().invoke(cli, ["turns", "--stats", "--json"]).output)
    assert sum(day["turns"] for day in stats["per_day"]) == 4, stats["per_day"]


def test_hook_install_dry_run_prints_a_settings_name_with_a_line_break_on_one_line(tmp_path):
    # "would write to PATH:" printed the --settings name raw: its line break split the line
    settings = tmp_path / "set\ntings.json"
    result = CliRunner().invoke(cli, ["hook", "install", "--dry-run", "--settings", str(settings)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"would write to {tmp_path}/set\\ntings.json:"
    assert not settings.exists()


def test_a_hand_edited_time_holding_a_line_break_stays_on_its_line(tmp_path):
    """A started_at no clock reads is shown as it is: one holding a line break (hand-edited)
    split `brain turns`' row and `brain status`' ledger line in two, an escape sequence in it
    reached the terminal; now the break is written \\n and the sequence's ESC \\x1b."""
    import sqlite3

    from brain import config

    _record(tmp_path, session="aaaa-1", ask="late work")
    conn = sqlite3.connect(config.db_path())
    conn.execute("UPDATE turns SET started_at = 'late\non \x1b[2Jtuesday'")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(cli, ["turns"])
    assert result.exit_code == 0 and result.output.startswith("late\\non \\x1b[2Jtues"), result.output
    assert "\x1b" not in result.output
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    status = CliRunner().invoke(cli, ["status", "--vault", str(vault)])
    assert status.exit_code == 0, status.output
    assert "ledger: 1 turn recorded, the last begun late\\non \\x1b[2Jtues" in status.output.splitlines(), status.output
