"""The README's "Turn ledger" section, run as written: its outputs and its SQL on the real
transcripts it was made from."""

from __future__ import annotations

import json
import re
import sqlite3
import time

import pytest
from click.testing import CliRunner
from ledger_helpers import ROOT, Transcript, fixture, hook_payload

from brain.cli import cli
from brain.config import db_path
from brain.ledger.hook import record_stop

# The README's section says: recorded from a project folder named `shop`, in this order.
FIXTURES = (
    "ccviewer_v1.0.98_orchestrator_inline_sidechains.jsonl",
    "agentlogs_v2.0.14_crud_write_read_edit_bash.jsonl",
    "spotter_v2.1.38_plan_web_task_bash.jsonl",
)


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    return text[start : text.index("\n### ", start + 1)]


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


def _session(path) -> str:
    with open(path, encoding="utf-8") as f:
        for line in f:
            session = json.loads(line).get("sessionId")
            if session:
                return session
    raise AssertionError(f"no sessionId in {path}")


@pytest.fixture
def ledger(tmp_path, utc):
    """The README's ledger: the three real transcripts stopped in a folder named shop (UTC)."""
    shop = tmp_path / "shop"
    shop.mkdir()
    for name in FIXTURES:
        path = fixture(name)
        record_stop(hook_payload(path, session_id=_session(path), cwd=str(shop)))
    return db_path()


def test_read_it_back_outputs_are_what_brain_turns_prints(ledger):
    (console,) = _blocks(_section("Read it back"), "console")
    commands = re.split(r"^\$ brain (.*)\n", console, flags=re.M)[1:]
    assert len(commands) == 4  # -n 2, --stats
    for args, shown in zip(commands[::2], commands[1::2], strict=True):
        result = CliRunner().invoke(cli, ["turns", *args.split()[1:]])
        assert result.exit_code == 0, result.output
        assert result.output.rstrip("\n") == shown.rstrip("\n"), args


def test_plain_sql_runs_on_the_schema_and_gives_what_it_shows(ledger):
    # One synthetic turn with a tool error and a decision, so every query has a row to give.
    # Today's, for the last week's query.
    t = Transcript(ledger.parent / "t.jsonl")
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    t.prompt("fix the build", timestamp=now)
    t.tool("Bash", "exit 1", error=True, command="make")
    t.text("We decided to pin the compiler instead of upgrading.")
    record_stop(hook_payload(t.write(), cwd=str(ledger.parent / "shop")))
    section = _section("Plain SQL")
    (sql,) = _blocks(section, "sql")
    conn = sqlite3.connect(ledger)
    statement, checked, ran = "", 0, 0
    rows: list[str] = []  # what the last query gave
    for line in sql.splitlines(keepends=True):
        if line.startswith("-- ") and not statement.strip():
            expected = line[3:].rstrip("\n")
            if ran and "|" in expected:  # a result line under the query before it
                assert expected in rows, (expected, rows)
                checked += 1
            continue
        statement += line
        if sqlite3.complete_statement(statement):
            result = conn.execute(statement).fetchall()
            assert result, statement  # every query finds the rows it is about
            rows = ["|".join(str(v) for v in row) for row in result]
            statement, ran = "", ran + 1
    assert ran == 6 and checked == 1 and not statement.strip()
    (console,) = [b for b in _blocks(section, "console") if "sqlite3" in b]
    query = re.search(r'sqlite3 \S+ "(.*)"', console).group(1)
    assert conn.execute(query).fetchall() == [("fix the build",)]  # the last turn recorded


def test_install_outputs_are_what_brain_hook_prints(tmp_path, monkeypatch):
    (console,) = _blocks(_section("Install the hook"), "console")
    steps = re.split(r"^\$ brain (.*?) *(?:#.*)?\n", console, flags=re.M)[1:]
    shown_project = re.search(r"to (\S+)/\.claude/settings\.json:", console).group(1)
    shown_command = re.search(r"^  \+ (.*)$", console, re.M).group(1)
    project = tmp_path / "proj" / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"model": "opus"}\n')  # the user's
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    command = None
    for args, shown in zip(steps[::2], steps[1::2], strict=True):
        result = CliRunner().invoke(cli, args.split())
        assert result.exit_code == 0, result.output
        command = command or re.search(r"^  \+ (.*)$", result.output, re.M).group(1)
        if not shown.strip():  # shown without its output (--user): it went to HOME's file
            assert str(tmp_path / "home" / ".claude" / "settings.json") in result.output
            continue
        expected = shown.replace(shown_project, str(project)).replace(shown_command, command)
        stamp = r"bak-\d{8}-\d{6}"
        assert re.sub(stamp, "bak-*", result.output.rstrip("\n")) == re.sub(stamp, "bak-*", expected.rstrip("\n")), args
    assert (project / ".claude" / "settings.json").read_text() == '{"model": "opus"}\n'


def test_what_a_row_holds_names_every_column_of_the_table(tmp_path):
    from brain.db import open_db

    conn = open_db(tmp_path / "brain.db")
    columns = {r[1] for r in conn.execute("PRAGMA table_info(turns)")}
    conn.close()
    table = [line.split("|")[1] for line in _section("What a row holds").splitlines() if line.startswith("| `")]
    named = set(re.findall(r"`(\w+)`", "".join(table)))
    assert named == columns
