"""The recalls table and `brain recalls [--stats] [--json]`: what prompts were shown, and whether it was used."""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from ledger_helpers import sqlite_steps

from brain.autorecall import store
from brain.cli import cli
from brain.db import BrainDatabaseError, connection
from brain.ledger.store import write_turn

VAULT = "/home/me/notes"


def _iso(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _local(day: dt.date, at: dt.time) -> dt.datetime:
    """``at`` o'clock on the local date ``day``, in UTC."""
    return dt.datetime.combine(day, at).astimezone().astimezone(dt.timezone.utc)  # naive: read as local


def _clock() -> tuple[dt.datetime, dt.datetime, dt.datetime]:
    """(now, a moment of today, the same hour of the day before). The report groups by local
    date: "today" must be today's date whatever the hour the tests run (half an hour back from
    00:10 is yesterday), with room for the minutes _fill adds after it; "yesterday" is counted
    on the calendar (24 h before 00:10 on the day after a spring-forward is two days before)."""
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    midnight = _local(now.astimezone().date(), dt.time(0))
    today = min(
        max(now - dt.timedelta(minutes=30), midnight + dt.timedelta(minutes=1)), midnight + dt.timedelta(hours=22)
    )
    local = today.astimezone()
    return now, today, _local(local.date() - dt.timedelta(days=1), local.time())


NOW, TODAY, YESTERDAY = _clock()


@pytest.fixture(autouse=True)
def _today_when_the_test_runs():
    """Read the clock when each test starts, not when the module is collected: a run that
    collected before midnight and reached a test after it wrote "today" as yesterday (a
    clean-clone CI run at 23:57 failed test_report_window so)."""
    global NOW, TODAY, YESTERDAY
    NOW, TODAY, YESTERDAY = _clock()


def _recall(
    when: dt.datetime, *, session: str = "s1", reason: str | None = None, notes=(), latency: float = 50.0, asked=True
):
    return {
        "created_at": _iso(when),
        "session_id": session,
        "vault": VAULT,
        "prompt": "how does the launch plan look",
        "prompt_chars": 29,
        "reason": reason,
        "mode": "hybrid+ppr",
        "model": "m",
        "min_cosine": 0.35,
        "notes": [{"path": p, "dense_score": 0.5, "hash": h, "chars": 300, "via": None} for p, h in notes],
        "shown": len(notes),
        "chars": 300 * len(notes),
        "server_ms": 10.0 if asked else None,
        "latency_ms": latency,
    }


def _turn(key: str, session: str, ended: dt.datetime, *, read=(), written=()):
    return {
        "turn_key": key,
        "session_id": session,
        "started_at": _iso(ended - dt.timedelta(seconds=20)),
        "ended_at": _iso(ended),
        "files_read": list(read),
        "files_written": list(written),
    }


def _fill(conn) -> None:
    for latency in (10, 20, 30, 40, 50, 60, 70, 80, 90, 100):  # today: ten prompts that asked
        store.write_recall(conn, _recall(TODAY, reason="below-threshold", latency=latency))
    store.write_recall(conn, _recall(TODAY, reason="slash-command", latency=1, asked=False))
    store.write_recall(conn, _recall(TODAY, reason="slash-command", latency=2, asked=False))
    shown_at = TODAY + dt.timedelta(minutes=1)
    store.write_recall(
        conn, _recall(shown_at, notes=[("Projects/Halyard.md", "h1"), ("People/Priya.md", "h2")], latency=55)
    )
    store.write_recall(conn, _recall(YESTERDAY, session="s0", notes=[("Projects/Halyard.md", "h0")]))
    store.write_recall(conn, _recall(YESTERDAY, session="s0", reason="no-server", asked=False))
    # After the prompt, in the same session: Halyard read and edited. Priya read only in another
    # session, and in a turn that ended before the prompt: neither counts.
    later = shown_at + dt.timedelta(seconds=40)
    write_turn(conn, _turn("t1", "s1", later, read=[f"{VAULT}/Projects/Halyard.md"]))
    write_turn(conn, _turn("t2", "s1", later + dt.timedelta(minutes=1), written=[f"{VAULT}/Projects/Halyard.md"]))
    write_turn(conn, _turn("t3", "s9", later, read=[f"{VAULT}/People/Priya.md"]))
    write_turn(conn, _turn("t4", "s1", shown_at - dt.timedelta(seconds=5), read=[f"{VAULT}/People/Priya.md"]))


def test_report_per_day(tmp_path):
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
        data = store.report(conn, days=7)
    today, yesterday = data["per_day"]
    day = TODAY.astimezone().date()  # the local dates the rows fall on, the day before counted on the calendar
    assert (today["day"], yesterday["day"]) == (day.isoformat(), (day - dt.timedelta(days=1)).isoformat())
    assert (today["prompts"], today["with_notes"], today["without_notes"]) == (13, 1, 12)
    assert today["reasons"] == {"below-threshold": 10, "slash-command": 2}
    assert today["asked"] == 11  # the two slash commands never asked the server
    assert (today["p50_ms"], today["p95_ms"]) == (55, 100)  # nearest rank over 10..100 and 55
    assert (today["notes_shown"], today["notes_read"], today["notes_edited"], today["prompts_used"]) == (2, 1, 1, 1)
    assert (yesterday["prompts"], yesterday["with_notes"], yesterday["notes_read"]) == (2, 1, 0)
    assert yesterday["reasons"] == {"no-server": 1} and yesterday["asked"] == 1
    total = data["all"]
    assert (total["prompts"], total["with_notes"], total["notes_shown"], total["notes_read"]) == (15, 2, 3, 1)
    assert total["reasons"] == {"below-threshold": 10, "slash-command": 2, "no-server": 1}
    assert (total["p50_ms"], total["p95_ms"]) == (50, 100)


def test_report_window(tmp_path):
    # The window counts back from SQLite's 'now', the rows' day from the clock read before them: a
    # local midnight between the two put them on the day before the window. SQLite's date after
    # the report says whether one passed; then it is all done again on the new day.
    global NOW, TODAY, YESTERDAY
    for attempt in range(2):
        with connection(tmp_path / f"brain-{attempt}.db") as conn:
            _fill(conn)
            per_day = [d["prompts"] for d in store.report(conn, days=1)["per_day"]]
            total = store.report(conn, days=1)["all"]["prompts"]
            day = conn.execute("SELECT date('now', 'localtime')").fetchone()[0]
        if day == TODAY.astimezone().date().isoformat():
            break
        NOW, TODAY, YESTERDAY = _clock()
    assert day == TODAY.astimezone().date().isoformat()
    assert per_day == [13] and total == 13


def test_nearest_rank_matches_the_sql():
    assert store._nearest_rank([], 0.5) is None
    assert store._nearest_rank([7.0], 0.95) == 7.0
    assert store._nearest_rank([1, 2, 3, 4], 0.5) == 2 and store._nearest_rank([1, 2, 3, 4], 0.95) == 4


def test_shown_in_session_keeps_the_latest_hash(tmp_path):
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(TODAY, notes=[("A.md", "old"), ("B.md", "b")]))
        store.write_recall(conn, _recall(TODAY + dt.timedelta(seconds=5), notes=[("A.md", "new")]))
        store.write_recall(conn, _recall(TODAY, session="other", notes=[("C.md", "c")]))
        assert store.shown_in_session(conn, "s1") == {"A.md": ("new", None), "B.md": ("b", None)}
        assert store.shown_in_session(conn, "nobody") == {}


def _steps(conn, work) -> int:
    return sqlite_steps(conn, work, 100)


def test_what_a_session_was_shown_is_read_without_reading_the_session(tmp_path):
    # The prompt hook asks on every prompt: reading every row of the session (and its JSON)
    # cost 80 ms a prompt at 5,000 prompts, and grew with each one.
    with connection(tmp_path / "brain.db") as conn:
        for _ in range(10):
            store.write_recall(conn, _recall(TODAY, session="short", notes=[("A.md", "a"), ("B.md", "b")]))
        for _ in range(2_000):
            store.write_recall(conn, _recall(TODAY, session="long", notes=[("A.md", "a"), ("B.md", "b")]))
        short = _steps(conn, lambda: store.shown_in_session(conn, "short"))
        long = _steps(conn, lambda: store.shown_in_session(conn, "long"))
        assert store.shown_in_session(conn, "long") == {"A.md": ("a", None), "B.md": ("b", None)}
        assert long <= short + 2, (short, long)
        # A session shown many notes: the prompt's candidates alone are looked up.
        for i in range(2_000):
            store.write_recall(conn, _recall(TODAY, session="wide", notes=[(f"N{i}.md", "n")]))
        few = _steps(conn, lambda: store.shown_in_session(conn, "short", ["A.md", "C.md"]))
        wide = _steps(conn, lambda: store.shown_in_session(conn, "wide", ["N7.md", "C.md"]))
        assert store.shown_in_session(conn, "wide", ["N7.md", "C.md"]) == {"N7.md": ("n", None)}
    assert wide <= few + 2, (few, wide)


@pytest.mark.parametrize(
    ("prompt", "forgets"),
    [
        ("/compact", True),
        ("  /clear\n", True),
        ("/compact\u3000keep the Kafka parts", True),  # any space str.split() splits on
        ("/compact\tkeep", True),
        ("/compactor", False),
        ("/clearly", False),
        ("/model opus", False),
    ],
)
def test_which_slash_commands_take_what_was_shown_out_of_the_conversation(tmp_path, prompt, forgets):
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(TODAY, notes=[("A.md", "a")]))
        command = _recall(TODAY, reason="slash-command", asked=False)
        command["prompt"] = prompt
        store.write_recall(conn, command)
        assert store.shown_in_session(conn, "s1") == ({} if forgets else {"A.md": ("a", None)})


def test_pruned_or_edited_rows_no_longer_count_as_shown(tmp_path):
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(TODAY, notes=[("A.md", "a"), ("B.md", "b")]))
        store.write_recall(conn, _recall(TODAY, notes=[("C.md", "c")]))
        conn.execute("DELETE FROM recalls WHERE notes LIKE '%C.md%'")
        conn.execute("UPDATE recalls SET notes = '[]' WHERE notes LIKE '%A.md%'")
        assert store.shown_in_session(conn, "s1") == {}
        assert conn.execute("SELECT count(*) FROM recall_shown").fetchone()[0] == 0


def test_the_upgrade_reads_what_live_sessions_were_shown(tmp_path):
    """A database of the migrations before recall_shown: the sessions of the last two days are
    read into it (after their last /compact), the older ones are not (a hook may be applying it)."""
    from brain.db_migrations import MIGRATIONS

    names = [name for name, _ in MIGRATIONS.steps]
    old = MIGRATIONS.steps[: names.index("m005_recall_shown")]
    path = tmp_path / "brain.db"
    conn = sqlite3.connect(path, isolation_level=None)
    steps, MIGRATIONS.steps = MIGRATIONS.steps, old
    try:
        MIGRATIONS.apply(conn)
    finally:
        MIGRATIONS.steps = steps
    week_ago = NOW - dt.timedelta(days=7)
    for row in (
        _recall(week_ago, session="old", notes=[("Old.md", "o")]),
        _recall(week_ago, notes=[("Before.md", "x")]),
        _recall(week_ago + dt.timedelta(seconds=1), reason="slash-command", asked=False) | {"prompt": "/compact"},
        _recall(TODAY, notes=[("A.md", "a1"), ("B.md", "b")]),
        _recall(TODAY + dt.timedelta(seconds=1), notes=[("A.md", "a2")]),
    ):
        store.write_recall(conn, row)
    conn.close()
    with connection(path) as conn:
        assert store.shown_in_session(conn, "s1") == {"A.md": ("a2", None), "B.md": ("b", None)}
        assert store.shown_in_session(conn, "old") == {}


def test_write_recall_masks_every_text(tmp_path):
    row = _recall(TODAY, reason="server-error")
    row["detail"] = "refused: password=hunter2-correct-horse"
    row["cwd"] = "/home/me/api_key=sk-ant-api03-Zq8xW2vN7pL4kR9tY6uB3mC1dF5gH0jKaS"
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, row)
        (stored,) = store.recent_recalls(conn)
    assert "hunter2" not in stored["detail"] and "Zq8xW2" not in stored["cwd"]


def test_cli_lists_recent_prompts(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    empty = CliRunner().invoke(cli, ["recalls"])
    assert empty.exit_code == 0 and "no prompts recorded yet" in empty.output
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
    other = CliRunner().invoke(cli, ["recalls", "--session", "zzz"])
    assert other.exit_code == 0 and other.output == "no prompts recorded for session 'zzz'\n"
    result = CliRunner().invoke(cli, ["recalls", "-n", "3"])
    assert result.exit_code == 0, result.output
    blocks = result.output.strip().split("\n\n")
    assert len(blocks) == 3
    assert "2 notes, 600 chars (55 ms)" in blocks[0] and "shown   Projects/Halyard.md  (cosine 0.50)" in blocks[0]
    assert "nothing: slash-command" in blocks[1]
    data = json.loads(CliRunner().invoke(cli, ["recalls", "--json", "--session", "s0"]).output)
    assert [r["session_id"] for r in data] == ["s0", "s0"] and data[1]["notes"][0]["path"] == "Projects/Halyard.md"


def test_cli_since_lists_the_prompts_recorded_since_as_turns_since_does(tmp_path, monkeypatch):
    """`brain turns --since` listed the turns since a moment; `brain recalls` had no --since, and
    what the agent was shown this morning took a --limit guessed large enough."""
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(dt.datetime(2026, 1, 1, 9, tzinfo=dt.timezone.utc), session="old"))
        store.write_recall(conn, _recall(NOW, session="new"))
    for since in ("1d", "today", "2026-06-01", "30m", "2h ago"):
        result = CliRunner().invoke(cli, ["recalls", "--since", since, "--json"])
        assert result.exit_code == 0, result.output
        assert [row["session_id"] for row in json.loads(result.output)] == ["new"], since
    result = CliRunner().invoke(cli, ["recalls", "--since", "2025-12-31", "--json"])
    assert [row["session_id"] for row in json.loads(result.output)] == ["new", "old"]
    result = CliRunner().invoke(cli, ["recalls", "--since", "2025-12-31", "--session", "ol", "--json"])
    assert [row["session_id"] for row in json.loads(result.output)] == ["old"]
    result = CliRunner().invoke(cli, ["recalls", "--since", "2100-01-01", "--session", "new"])
    assert result.output == "no prompts recorded for session 'new' since '2100-01-01'\n"
    result = CliRunner().invoke(cli, ["recalls", "--since", "2100-01-01"])
    assert result.output == "no prompts recorded since '2100-01-01'\n"
    result = CliRunner().invoke(cli, ["recalls", "--since", "last tuesday"])
    assert result.exit_code == 1 and result.output.startswith("Error: --since takes a date (2026-03-01)")
    result = CliRunner().invoke(cli, ["recalls", "--stats", "--since", "1d"])
    assert result.exit_code == 2 and "--since goes with the list; --stats takes --days" in result.output


def test_cli_stats(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    result = CliRunner().invoke(cli, ["recalls", "--stats"])
    assert result.exit_code == 0 and "0 prompts reached the prompt hook" in result.output
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
    one = CliRunner().invoke(cli, ["recalls", "--stats", "--days", "1"])
    assert one.output.startswith("last day: ")  # not "last 1 days"
    result = CliRunner().invoke(cli, ["recalls", "--stats", "--days", "7"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "last 7 days: 15 prompts reached the prompt hook" in out
    assert "with notes 2, without 13 (below-threshold 10, slash-command 2, no-server 1)" in out
    assert "latency over the 12 prompts that asked the server: p50 50 ms, p95 100 ms" in out
    assert "notes shown 3: then read 1 (33%), edited 1; prompts whose notes were used 1 of 2" in out
    assert re.search(r"\n\d{4}-\d\d-\d\d\s+13\s+1\s+12\s+55\s+100\s+2\s+1\s+1\n", out)
    data = json.loads(CliRunner().invoke(cli, ["recalls", "--stats", "--json"]).output)
    assert data["all"]["prompts"] == 15 and len(data["per_day"]) == 2


def test_cli_counts_of_one_read_as_one(tmp_path, monkeypatch):
    # "1 notes, 300 chars", "1 prompts reached the prompt hook", "latency over the 1 prompts"
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(TODAY, notes=[("A.md", "a")]))
    listed = CliRunner().invoke(cli, ["recalls"]).output
    assert "session s1  1 note, 300 chars (50 ms)" in listed, listed
    stats = CliRunner().invoke(cli, ["recalls", "--stats"]).output
    assert "last 14 days: 1 prompt reached the prompt hook" in stats, stats
    assert "latency over the 1 prompt that asked the server" in stats


def _flat(sql: str) -> str:
    return " ".join(sql.split())


def test_the_readme_shows_the_report_sql():
    readme = _flat((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8"))
    for sql in (store.PER_DAY_SQL, store.REASONS_SQL, store.LATENCY_SQL, store.USE_SQL):
        assert _flat(sql) in readme


def _odd_rows(conn) -> None:
    """Rows `brain recalls` did not write: hand-edited, or from another version."""
    store.write_recall(conn, _recall(TODAY, session="odd-1", notes=[("A.md", "a")]))
    conn.execute(
        "UPDATE recalls SET notes = ?, latency_ms = 'abc', prompt = 7, session_id = 5 WHERE session_id = 'odd-1'",
        (json.dumps([1, None, "x", {"path": 5, "dense_score": "high", "via": ["v"]}, {"path": "B.md"}]),),
    )
    store.write_recall(conn, _recall(TODAY, session="odd-2", reason="no-server"))
    conn.execute("UPDATE recalls SET server_ms = 1, latency_ms = 'slow' WHERE session_id = 'odd-2'")


def test_cli_reads_odd_rows_without_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
        _odd_rows(conn)
    result = CliRunner().invoke(cli, ["recalls", "-n", "50"])
    assert result.exit_code == 0 and result.exception is None, result.output
    odd = next(b for b in result.output.split("\n\n") if "session 5 " in b)
    assert "(? ms)" in odd and "prompt  7" in odd
    assert "  shown   5  (cosine ?, via ['v'])" in odd and "  shown   B.md  (cosine ?)" in odd
    stats = CliRunner().invoke(cli, ["recalls", "--stats"])
    assert stats.exit_code == 0 and stats.exception is None, stats.output
    assert "p50 50 ms, p95 100 ms" in stats.output  # the numbers, without "abc" and "slow"


def test_cli_shows_no_terminal_control_from_a_prompt_or_a_path(tmp_path, monkeypatch):
    """A pasted prompt may carry coloured output or an OSC sequence (it sets the window title even
    through a pipe); a file name may too: `brain recalls` prints them as text, not commands."""
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    row = _recall(TODAY, notes=[("Evil/a\x1b[2Jb.md", "h")])
    row["prompt"] = "see \x1b]0;PWNED\x07\x1b[31mred\x1b[0m output"
    row["notes"][0]["via"] = "Hub\x9b2J"
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, row)
    out = CliRunner().invoke(cli, ["recalls"], color=True).output
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "prompt  see \\x1b]0;PWNED\\x07\\x1b[31mred\\x1b[0m output" in out
    assert "shown   Evil/a\\x1b[2Jb.md  (cosine 0.50, via Hub\\x9b2J)" in out  # the file as it is named


def test_a_row_with_json_that_is_not_valid_is_passed_over(tmp_path, monkeypatch):
    """A hand-edited notes column costs that row, not the session's dedupe nor the report, and is
    never called a damaged database to move aside (with every turn and prompt in it)."""
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
        store.write_recall(conn, _recall(TODAY, notes=[("Bad.md", "b")]))
        conn.execute("UPDATE recalls SET notes = '[{\"path\": oops' WHERE notes LIKE '%Bad.md%'")
        store.write_recall(conn, _recall(TODAY, notes=[("Scalar.md", "s")]))
        conn.execute("UPDATE recalls SET notes = '\"Scalar.md\"' WHERE notes LIKE '%Scalar.md%'")
        conn.execute("UPDATE turns SET files_read = 'not json' WHERE turn_key = 't4'")
        assert store.shown_in_session(conn, "s1") == {
            "Projects/Halyard.md": ("h1", None),
            "People/Priya.md": ("h2", None),
        }
        assert store.report(conn, days=7)["all"]["notes_read"] == 1
    stats = CliRunner().invoke(cli, ["recalls", "--stats", "--days", "7"])
    assert stats.exit_code == 0, stats.output
    assert re.search(r"notes shown \d+: then read 1 \(\d+%\), edited 1;", stats.output)


def test_json_that_is_not_valid_is_not_called_a_damaged_database(tmp_path):
    db = tmp_path / "brain.db"
    try:
        with connection(db) as conn:
            conn.execute("SELECT json_extract('[{\"path\": oops', '$.path')").fetchall()
    except BrainDatabaseError as exc:
        message = str(exc)
    assert "is damaged" not in message and "move it aside" not in message
    assert (
        f"{db} has a row whose JSON is not valid (malformed JSON" in message and "the file itself is sound" in message
    )


def _strict_json(text: str):
    def refuse(constant: str):
        raise ValueError(f"{constant} is no JSON")

    return json.loads(text, parse_constant=refuse)


def test_json_output_is_json_when_a_row_holds_an_infinity(tmp_path, monkeypatch):
    """SQLite keeps 1e999 as an infinity; Python's json writes it as Infinity, which jq refuses."""
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
        conn.execute("UPDATE recalls SET latency_ms = 1e999, min_cosine = -1e999")
        conn.execute('UPDATE recalls SET notes = \'[{"path": "a.md", "dense_score": 1e999}]\' WHERE shown > 0')
    rows = _strict_json(CliRunner().invoke(cli, ["recalls", "--json", "-n", "1"]).output)
    assert rows[0]["latency_ms"] is None and rows[0]["min_cosine"] is None
    assert rows[0]["notes"] == [{"path": "a.md", "dense_score": None}]
    stats = _strict_json(CliRunner().invoke(cli, ["recalls", "--stats", "--json"]).output)
    assert stats["all"]["prompts"] == 15 and stats["all"]["p50_ms"] is None


def test_notes_shown_before_a_compact_may_be_shown_again(tmp_path):
    """/compact (and /clear) keep the session's id but take the notes shown so far out of the
    conversation: withheld as "shown", the agent had them neither in its context nor again."""
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(TODAY, notes=[("A.md", "a")]))
        compact = _recall(TODAY + dt.timedelta(seconds=1), reason="slash-command", asked=False)
        compact["prompt"] = "/compact keep the Kafka parts"
        store.write_recall(conn, compact)
        store.write_recall(conn, _recall(TODAY + dt.timedelta(seconds=2), notes=[("B.md", "b")]))
        assert store.shown_in_session(conn, "s1") == {"B.md": ("b", None)}
        other = _recall(TODAY + dt.timedelta(seconds=3), reason="slash-command", asked=False)
        other["prompt"] = "/compactor is not /compact"
        store.write_recall(conn, other)
        assert store.shown_in_session(conn, "s1") == {"B.md": ("b", None)}
        clear = _recall(TODAY + dt.timedelta(seconds=4), reason="slash-command", asked=False)
        clear["prompt"] = "/clear"
        store.write_recall(conn, clear)
        assert store.shown_in_session(conn, "s1") == {}


def test_stats_for_one_session_is_refused_not_ignored(tmp_path, monkeypatch):
    """The report covers every session: with --session it printed everyone's figures as if they
    were that session's."""
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
    result = CliRunner().invoke(cli, ["recalls", "--stats", "--session", "s0"])
    assert result.exit_code == 2 and "--stats covers every session" in result.output
    assert "prompts reached the prompt hook" not in result.output


# ----- the report over a long history ------------------------------------------------------------


def _steps(conn, work) -> int:
    """SQLite's steps (in thousands) that ``work`` costs."""
    return sqlite_steps(conn, work, 1000)


def _past(conn, prompts: int, *, days_ago: int = 60, per_session: int = 20) -> None:
    """``prompts`` prompts of long ago, each showing two notes, and a turn after each reading them."""
    when = NOW - dt.timedelta(days=days_ago)
    for i in range(prompts):
        session = f"old-{i // per_session}"
        notes = [(f"Old/{i}.md", "h"), (f"Old/{i + 1}.md", "h")]
        store.write_recall(conn, _recall(when, session=session, notes=notes))
        read = [f"{VAULT}/Old/{i}.md", f"{VAULT}/Old/{i + 1}.md"]
        write_turn(conn, _turn(f"old-{i}", session, when + dt.timedelta(seconds=30), read=read))


def test_a_report_of_the_last_days_does_not_read_the_years_before():
    # 500,000 prompts recorded: the 14 days' report read them all (3.5 s), not those days' alone.
    def cost(prompts: int) -> int:
        with connection() as conn:
            conn.execute("DELETE FROM recalls")
            conn.execute("DELETE FROM turns")
            _past(conn, prompts)
            _fill(conn)
            return _steps(conn, lambda: store.report(conn, days=7))

    assert cost(2000) < 2 * cost(100) + 20


def test_a_report_reads_each_turn_once_not_once_per_note_shown():
    # A session's turns were read again for each note shown in it: a year's report took 81 s,
    # and a long session's cost grew with the square of its prompts.
    def cost(prompts: int) -> int:
        with connection() as conn:
            conn.execute("DELETE FROM recalls")
            conn.execute("DELETE FROM turns")
            _past(conn, prompts, days_ago=2, per_session=prompts)
            data = store.report(conn, days=7)
            assert data["all"]["notes_shown"] == data["all"]["notes_read"] == 2 * prompts
            return _steps(conn, lambda: store.report(conn, days=7))

    assert cost(600) < 3 * cost(300), "the report grows faster than the history it reads"


def test_the_readmes_report_sql_pastes_into_sqlite(tmp_path):
    """The README's four queries had no `;`: pasted into the sqlite3 shell, they ran as one
    statement (a syntax error) or waited for more. Each is now complete, and gives the report's figures."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("plain SQL (`:days` is the window", 1)[1].split("```sql\n", 1)[1].split("```", 1)[0]
    statements, pending = [], ""
    for line in block.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending)
            pending = ""
    assert len(statements) == 4 and not pending.strip(), pending
    with connection(tmp_path / "brain.db") as conn:
        _fill(conn)
        figures = store.report(conn, days=7)["all"]
        rows = []
        for sql in statements:
            cursor = conn.execute(sql, {"days": 7})
            names = [column[0] for column in cursor.description]
            rows.append([dict(zip(names, row)) for row in cursor])
    per_day, reasons, latency, use = rows
    assert sum(day["prompts"] for day in per_day) == figures["prompts"] and reasons and latency
    assert sum(day["notes_read"] for day in use) == figures["notes_read"]


def test_cli_shows_when_each_prompt_was_recorded_in_local_time(tmp_path, monkeypatch, zone):
    """`brain recalls` printed created_at's UTC as stored ("2026-02-12 16:02", no zone said) where
    --since and --stats read local days: in Tokyo a prompt listed by `--since 2026-02-13` was shown
    on the 12th."""
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "brain.db"))
    zone("Asia/Tokyo")  # UTC+9, no summer time
    with connection(tmp_path / "brain.db") as conn:
        store.write_recall(conn, _recall(dt.datetime(2026, 2, 12, 16, 2, 31, tzinfo=dt.timezone.utc), session="late"))
    result = CliRunner().invoke(cli, ["recalls", "--since", "2026-02-13"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2026-02-13 01:02  session late  0 notes"), result.output
    (row,) = json.loads(CliRunner().invoke(cli, ["recalls", "--json"]).output)
    assert row["created_at"] == "2026-02-12T16:02:31.000Z"  # the JSON keeps the ledger's UTC
