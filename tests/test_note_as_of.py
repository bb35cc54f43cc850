"""`brain note NAME --as-of WHEN`: a note read as it was then from the command line, by the rule
MCP's get_note (and `brain serve`'s note) reads it by, with `brain ask --as-of`'s errors."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import sqlite3

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import DECISION, as_before_m021, edited_toy_vault, index_then_moment
from serve_helpers import mcp_call, served

from brain import config
from brain.cli import cli


def _iso(moment: float) -> str:
    """A moment as `--as-of` takes it (local time, to the microsecond)."""
    return dt.datetime.fromtimestamp(moment).isoformat()


@pytest.fixture
def edited(toy_vault):
    """The toy vault with a note rewritten, renamed and deleted (``edited_toy_vault``); the moments between."""
    return toy_vault, edited_toy_vault(toy_vault)


def _note(vault, *args: str):
    return CliRunner().invoke(cli, ["note", "--vault", str(vault), *args])


def _mcp_text(result) -> str:
    return "".join(part.text for part in result.content)


@pytest.mark.parametrize(
    "name, when, extra",
    [
        ("Decision - Use Chroma", "first", {}),
        (DECISION, "rewritten", {}),
        ("Graph RAG", "rewritten", {}),  # its name then
        ("GraphRAG", "rewritten", {}),  # its name now, read as it was before the rename
        ("AI/Graph RAG.md", "deleted", {}),  # a name it had only in the past
        ("Knife skills", "renamed", {"heading": "Knife skills"}),  # deleted since
        ("Knife skills", "renamed", {"max_chars": 200}),
    ],
)
@pytest.mark.parametrize("use_server", [False, True])
def test_note_as_of_json_is_what_mcp_get_note_gives(edited, name, when, extra, use_server):
    vault, at = edited
    args = [item for key, value in extra.items() for item in (f"--{key.replace('_', '-')}", str(value))]
    with served(vault, watch=False) if use_server else contextlib.nullcontext():
        out = _note(vault, name, "--as-of", _iso(at[when]), "--json", *args)
        result = mcp_call(vault, "get_note", {"note": name, "as_of": _iso(at[when]), **extra}, use_server=use_server)
    assert out.exit_code == 0, out.output
    assert not result.is_error, _mcp_text(result)
    given = json.loads(_mcp_text(result))
    assert given.pop("headings_total") == len(given["headings"])  # MCP's alone: the headings it listed
    assert json.loads(out.stdout) == given
    assert given["as_of"] is not None and given["version"]["recorded_from"]


def test_note_as_of_prints_the_text_of_then_and_says_which_version_it_is(edited):
    vault, at = edited
    then = _note(vault, "Decision - Use Chroma", "--as-of", _iso(at["first"]))
    assert then.exit_code == 0, then.output
    header, version, blank, *body = then.stdout.splitlines()
    assert header == f"Decision - Use Chroma  ({DECISION})" and blank == "" and body
    moment = dt.datetime.fromtimestamp(at["first"]).isoformat(sep=" ", timespec="minutes")
    said = re.fullmatch(
        rf"as of ({moment}\S*): the version brain saw from (\S+ \S+) to (\S+ \S+), when it was changed", version
    )
    assert said, version
    # milliseconds apart (indexed one after another): told apart, not "from 08:14 to 08:14"
    assert len(set(said.groups())) == 3, version
    assert "Rollout plan" not in then.stdout and "Rollout plan" in _note(vault, "Decision - Use Chroma").stdout
    latest = _note(vault, DECISION, "--as-of", "now").stdout.splitlines()[1]
    assert latest.endswith(", the latest indexed") and "Rollout plan" in _note(vault, DECISION, "--as-of", "now").stdout
    renamed = _note(vault, "GraphRAG", "--as-of", _iso(at["rewritten"])).stdout.splitlines()
    assert renamed[0].endswith("(AI/Graph RAG.md)") and renamed[1].endswith(
        "when it was renamed; now at AI/GraphRAG.md"
    )
    gone = _note(vault, "Knife skills", "--as-of", _iso(at["renamed"])).stdout.splitlines()
    assert gone[1].endswith("when it was deleted; deleted since")
    helped = CliRunner().invoke(cli, ["note", "--help"]).output
    assert "--as-of" in helped and 'brain note "Rollout plan" --as-of 2026-03-01' in " ".join(helped.split())


def test_note_as_of_a_moment_in_a_zone_reads_the_same_instant(edited):
    vault, at = edited
    local = _note(vault, DECISION, "--as-of", _iso(at["first"]), "--json")
    instant = dt.datetime.fromtimestamp(at["first"], dt.timezone.utc)
    for written in (
        instant.replace(tzinfo=None).isoformat() + "Z",
        instant.astimezone(dt.timezone(dt.timedelta(hours=-9, minutes=-30))).isoformat(),
        instant.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=45))).isoformat(),
    ):
        zoned = _note(vault, DECISION, "--as-of", written, "--json")
        assert zoned.exit_code == 0, (written, zoned.output)
        assert json.loads(zoned.stdout) == json.loads(local.stdout), written


def test_note_as_of_the_moment_a_rename_or_deletion_was_recorded(edited):
    """The moment `brain history` gives for a version (what MCP's history says to read it by)
    reads that version: at the rename, the note under its new name; at the deletion, none."""
    vault, at = edited
    versions = json.loads(CliRunner().invoke(cli, ["history", "--vault", str(vault), "--json", "GraphRAG"]).stdout)[
        "versions"
    ]
    renamed = versions[-1]
    assert renamed["event"] == "renamed"
    at_rename = json.loads(_note(vault, "Graph RAG", "--as-of", renamed["recorded_from"], "--json").stdout)
    assert at_rename["path"] == "AI/GraphRAG.md" and at_rename["version"]["recorded_from"] == renamed["recorded_from"]
    knife = json.loads(CliRunner().invoke(cli, ["history", "--vault", str(vault), "--json", "Knife skills"]).stdout)
    deleted_at = knife["versions"][-1]["recorded_to"]
    out = _note(vault, "Knife skills", "--as-of", deleted_at)
    assert out.exit_code == 1 and out.stdout == ""
    assert re.fullmatch(
        r"Error: Cooking/Knife skills.md did not exist as of [^\n]+: it was deleted on [^\n]+\n", out.stderr
    ), out.stderr
    later = _note(vault, "Knife skills", "--as-of", _iso(at["deleted"])).stderr
    then, deleted = re.fullmatch(r"Error: \S+ \S+ did not exist as of (.+): it was deleted on (.+)\n", later).groups()
    assert then != deleted, later  # milliseconds after it: told apart


def test_note_as_of_a_note_made_after_the_moment_says_it_did_not_exist_then(edited):
    vault, at = edited
    write(vault, "New idea.md", "# New idea\n\nnot there before\n")
    index_then_moment(vault)
    out = _note(vault, "New idea", "--as-of", _iso(at["first"]))
    assert out.exit_code == 1 and out.stdout == "" and len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("Error: New idea.md did not exist as of ") and "brain first saw it on" in out.stderr
    then, first = re.fullmatch(
        r"Error: New idea.md did not exist as of (.+): brain first saw it on (.+)\n", out.stderr
    ).groups()
    assert then != first  # seconds apart, said so: not "as of 08:14: brain first saw it on 08:14"
    nothing = _note(vault, "No such note at all", "--as-of", _iso(at["first"]))
    assert nothing.exit_code == 1 and "no note 'No such note at all'" in nothing.stderr
    assert "finds notes by what they say" in nothing.stderr


_NOW_IS = re.compile(r"(?<=; now is )\d{4}-\d\d-\d\d \d\d:\d\d(?=\))")


@pytest.mark.parametrize("kind", ["before history", "in the future", "unreadable", "past the calendar", "blank"])
def test_note_as_of_a_moment_that_cannot_be_answered_is_brain_ask_as_ofs_line(edited, kind):
    vault, at = edited
    moment = {
        "before history": _iso(at["first"] - 3600),
        "in the future": (dt.date.today() + dt.timedelta(days=3)).isoformat(),
        "unreadable": "last tuesday",
        "past the calendar": "99999999999y",
        "blank": " ",
    }[kind]
    out = _note(vault, "Home", "--as-of", moment)
    asked = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--no-server", "--as-of", moment, "rollout"])
    assert out.exit_code == asked.exit_code == 1 and out.stdout == ""
    assert out.stderr.startswith("Error: ") and len(out.stderr.splitlines()) == 1, out.stderr
    assert _NOW_IS.sub("then", out.stderr) == _NOW_IS.sub("then", asked.stderr)
    note = mcp_call(vault, "get_note", {"note": "Home", "as_of": moment})
    if kind != "blank":  # MCP refuses a blank field in its own words, before reading it
        said = out.stderr.strip().removeprefix("Error: ")
        # the same line, naming the tool's argument as_of where the CLI names its option --as-of
        if said.startswith("--as-of "):
            said = "as_of " + said.removeprefix("--as-of ")
        assert note.is_error and _NOW_IS.sub("then", _mcp_text(note)) == _NOW_IS.sub("then", said)


def test_note_as_of_over_an_index_from_before_history_says_its_text_then_was_not_kept(tmp_path):
    """An index built before brain kept history starts it from its present, without the text:
    reading a note as it was then says so, in one line, and how to see the versions there are."""
    root = tmp_path / "v"
    write(root, "A.md", "# A\n\nalpha\n")
    then = index_then_moment(root)
    db = config.index_dir(root) / "index.db"
    as_before_m021(db)
    conn = sqlite3.connect(db)
    conn.executescript(
        "DROP TABLE note_versions; DROP TABLE chunk_history_fts; DROP TABLE chunk_history; DROP TABLE link_history;"
        " DROP TABLE version_chunks; DELETE FROM meta WHERE key = 'history_since';"
        " DELETE FROM _migrations WHERE name IN ('m007_history', 'm018_past_chunks_shared');"
    )
    conn.close()
    write(root, "A.md", "# A\n\nalpha, edited\n")
    index_then_moment(root)  # migrates, and keeps the edited text from here on
    out = _note(root, "A", "--as-of", _iso(then))
    assert out.exit_code == 1 and out.stdout == "" and len(out.stderr.splitlines()) == 1
    assert "its text then was not kept (indexed before brain kept history)" in out.stderr
    assert "`brain history` lists its versions" in out.stderr
    assert "alpha, edited" in _note(root, "A", "--as-of", "now").stdout


@pytest.mark.parametrize("leaves", ["deleted", "renamed to C.md"])
def test_note_as_of_a_path_another_note_took_reads_the_note_there_then_and_says_so(tmp_path, leaves):
    """A.md's note leaves the path, then B.md is moved to A.md: `brain note A.md --as-of` a moment
    the first lived there reads it, and says where it is now and that A.md is another note's now."""
    root = tmp_path / "v"
    write(root, "A.md", "# Old thoughts\n\nWhat I once wrote about the garden shed and its roof.\n")
    write(root, "B.md", "# Budget\n\nNumbers for the quarter: rent, food, travel.\n")
    lived = index_then_moment(root)
    if leaves == "deleted":
        (root / "A.md").unlink()
    else:
        (root / "A.md").rename(root / "C.md")
    index_then_moment(root)
    (root / "B.md").rename(root / "A.md")
    index_then_moment(root)
    out = _note(root, "A.md", "--as-of", _iso(lived))
    assert out.exit_code == 0, out.output
    header, version, _, *body = out.stdout.splitlines()
    assert header == "A  (A.md)" and "garden shed" in "\n".join(body)
    where = "deleted since" if leaves == "deleted" else "now at C.md"
    assert version.endswith(f"when it was {leaves.split()[0]}; {where}; a different note is at A.md now"), version
    assert "Budget" in _note(root, "A.md").stdout


def test_note_as_of_on_a_terminal_says_the_same_lines_as_into_a_pipe(edited, monkeypatch):
    """A terminal gets each field cleaned on its own line; a plain note's lines are the pipe's."""
    import brain.cli as cli_module

    vault, at = edited
    args = ("GraphRAG", "--as-of", _iso(at["rewritten"]))
    piped = _note(vault, *args)
    monkeypatch.setattr(cli_module, "_stdout_is_terminal", lambda: True)
    shown = _note(vault, *args)
    assert shown.exit_code == piped.exit_code == 0, shown.output
    assert shown.stdout == piped.stdout and shown.stdout.splitlines()[1].startswith("as of ")


def test_a_note_gone_or_renamed_since_is_said_with_how_to_read_it(edited):
    """`brain note` (and `neighbours`) of a note deleted or renamed since sent the user to `brain
    ask`, as for a name no note ever had: it says what became of it and the command that reads it."""
    vault, _ = edited
    for command in ("note", "neighbours"):
        out = CliRunner().invoke(cli, [command, "--vault", str(vault), "Knife skills"])
        assert out.exit_code == 1 and len(out.output.splitlines()) == 1, out.output
        assert "Cooking/Knife skills.md was deleted on " in out.output, out.output
        assert '`brain history "Knife skills"` lists its versions' in out.output, out.output
        assert '`brain note "Knife skills" --as-of WHEN` reads it as it was' in out.output, out.output
        assert "brain ask" not in out.output
    out = _note(vault, "AI/Graph RAG.md")
    assert out.exit_code == 1, out.output
    assert 'it is an old name of AI/GraphRAG.md: `brain note "AI/GraphRAG.md"` reads it' in out.output, out.output
    out = _note(vault, "Never a note here")  # no note ever had it: as before
    assert out.exit_code == 1 and '`brain ask "Never a note here"` finds notes by what they say' in out.output
