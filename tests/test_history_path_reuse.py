"""A path another note takes: the note that lived there before must stay reachable by that path
(`brain history A.md` says an earlier, different note lived there and how to see it; `--as-of` a
moment it lived there names it). Fake embedder throughout."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import index_then_moment, note_ids
from serve_helpers import mcp_call, served

from brain.cli import cli
from brain.errors import BrainError
from brain.recall.timeline import note_history
from brain.server import client

OLD = "# Old thoughts\n\nWhat I once wrote about the garden shed and its roof.\n"
OTHER = "# Budget\n\nNumbers for the quarter: rent, food, travel.\n"


def _ids(root):
    paths = ("A.md", "B.md", "C.md")
    return dict(zip(paths, note_ids(root, *paths)))


@pytest.fixture(params=["deleted, then B moved to A", "renamed to C, then B moved to A"])
def reused(request, tmp_path):
    """A.md's note leaves the path (deleted, or renamed to C.md); B.md is then moved to A.md.
    Returns the vault, the first note's id, the present note's id and a moment A lived at A.md."""
    root = tmp_path / "v"
    write(root, "A.md", OLD)
    write(root, "B.md", OTHER)
    lived = index_then_moment(root)
    ids = _ids(root)
    if request.param.startswith("deleted"):
        (root / "A.md").unlink()
    else:
        (root / "A.md").rename(root / "C.md")
    index_then_moment(root)
    (root / "B.md").rename(root / "A.md")
    index_then_moment(root)
    return root, ids["A.md"], ids["B.md"], lived


def test_the_present_note_says_an_earlier_note_lived_at_its_path(reused):
    root, first, present, _ = reused
    found = note_history(root, "A.md")
    assert found.note_id == present
    assert [o["note_id"] for o in found.others_at_path] == [first]
    other = found.others_at_path[0]
    assert other["path"] == "A.md" and other["until"] is not None and other["as_of"] < other["until"]


def test_the_earlier_note_is_read_by_its_path_as_of_a_moment_it_lived_there(reused):
    root, first, present, lived = reused
    then = note_history(root, "A.md", as_of=lived)
    assert then.note_id == first and "garden shed" not in json.dumps(then.as_dict())  # its history, not its text
    assert then.versions[0].path == "A.md" and then.versions[0].event == "created"
    assert [o["note_id"] for o in then.others_at_path] == [present]
    # the moment the hint names reads it too
    hinted = note_history(root, "A.md").others_at_path[0]["as_of"]
    runner = CliRunner()
    out = runner.invoke(cli, ["history", "--vault", str(root), "A.md", "--as-of", hinted, "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["note_id"] == first


def test_brain_history_says_it_in_one_line_naming_the_command(reused):
    root, first, _, _ = reused
    runner = CliRunner()
    text = runner.invoke(cli, ["history", "--vault", str(root), "A.md"])
    assert text.exit_code == 0, text.output
    said = [line for line in text.output.splitlines() if "a different note lived at A.md" in line]
    assert len(said) == 1, text.output
    hinted = note_history(root, "A.md").others_at_path[0]["as_of"]
    assert f"brain history A.md --as-of {hinted}" in said[0]
    data = json.loads(runner.invoke(cli, ["history", "--vault", str(root), "A", "--json"]).output)
    assert [o["note_id"] for o in data["others_at_path"]] == [first]


def test_a_new_file_where_a_deleted_note_was_continues_it_and_names_no_other(tmp_path):
    root = tmp_path / "v"
    write(root, "A.md", OLD)
    index_then_moment(root)
    (root / "A.md").unlink()
    index_then_moment(root)
    write(root, "A.md", OTHER)
    index_then_moment(root)
    found = note_history(root, "A.md")
    assert [v.event for v in found.versions] == ["created", "restored"] and found.others_at_path == []


def test_as_of_a_moment_no_note_had_that_name_is_one_line(reused):
    root, _, _, lived = reused
    with pytest.raises(BrainError, match="no note 'Nothing here' in this index or its history"):
        note_history(root, "Nothing here", as_of=lived)
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "A.md", "--as-of", "the day before"])
    assert out.exit_code != 0 and "--as-of takes a date" in out.output and "Traceback" not in out.output


def _cli_json(root, *args: str) -> dict:
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "--json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_mcp_history_and_the_serve_op_answer_what_brain_history_prints(reused):
    root, first, present, _ = reused
    hinted = note_history(root, "A.md").others_at_path[0]["as_of"]
    for extra, wanted in (({}, present), ({"as_of": hinted}, first)):
        flags = ["--as-of", extra["as_of"]] if extra else []
        printed = _cli_json(root, "--last", "20", *flags, "A.md")
        assert printed["note_id"] == wanted
        result = mcp_call(root, "history", {"note": "A.md", **extra})
        assert not result.is_error and json.loads("".join(p.text for p in result.content)) == printed
    with served(root, watch=False):
        for extra, wanted in (({}, present), ({"as_of": hinted}, first)):
            flags = ["--as-of", extra["as_of"]] if extra else []
            reply = client.call(root, "history", note="A.md", last=0, timeout=30, **extra)
            assert reply == _cli_json(root, "--last", "0", *flags, "A.md") and reply["note_id"] == wanted


def test_a_server_that_does_not_read_history_as_of_is_not_asked_it():
    """A server from before would ignore `as_of` and answer about the note at the path now."""
    assert "history_as_of" in client._features_needed("history", {"note": "A.md", "as_of": "2026-03-01"})
    assert "history_as_of" not in client._features_needed("history", {"note": "A.md"})


def test_a_path_many_notes_left_names_the_latest_few_and_counts_the_rest(tmp_path):
    """Obsidian makes each new note as `Untitled.md`; renamed away, each lived there."""
    root = tmp_path / "v"
    for i in range(5):
        write(root, "Untitled.md", f"# Note {i}\n\nthought number {i}\n")
        index_then_moment(root)
        (root / "Untitled.md").rename(root / f"Note {i}.md")
        index_then_moment(root)
    write(root, "Untitled.md", "# Fresh\n\nthe newest thought\n")
    index_then_moment(root)
    found = note_history(root, "Untitled.md")
    assert [o["now"] for o in found.others_at_path] == [f"Note {i}.md" for i in range(5)]
    text = CliRunner().invoke(cli, ["history", "--vault", str(root), "Untitled.md"]).output
    assert [line.split(", now at ")[1][:10] for line in text.splitlines() if "now at" in line] == [
        "Note 2.md)",
        "Note 3.md)",
        "Note 4.md)",
    ]
    assert "… and 2 more before them" in text


def test_a_deleted_notes_exact_path_that_a_note_elsewhere_answers_to_names_it_too(tmp_path):
    """Plan.md deleted, Proj/Plan.md there: `Plan.md` names Proj/Plan.md (by its file name, as a
    wikilink resolves), and the note whose path it was exactly was out of reach."""
    root = tmp_path / "v"
    write(root, "Plan.md", OLD)
    write(root, "Proj/Plan.md", OTHER)
    index_then_moment(root)
    first, present = note_ids(root, "Plan.md", "Proj/Plan.md")
    (root / "Plan.md").unlink()
    index_then_moment(root)
    for name in ("Plan.md", "Plan"):
        found = note_history(root, name)
        assert found.note_id == present
        assert [(o["note_id"], o["path"], o["now"]) for o in found.others_at_path] == [(first, "Plan.md", None)]
    assert note_history(root, "Proj/Plan.md").others_at_path == []  # named by its own path: no other
    hinted = note_history(root, "Plan.md").others_at_path[0]["as_of"]
    assert _cli_json(root, "--as-of", hinted, "Plan.md")["note_id"] == first
    text = CliRunner().invoke(cli, ["history", "--vault", str(root), "Plan.md"]).output
    assert "a different note lived at Plan.md until " in text and f"--as-of {hinted}" in text
