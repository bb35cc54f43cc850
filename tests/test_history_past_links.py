"""A link or backlink row of `brain history` that names a note no longer there: Alpha links
[[Beta]]; Beta.md is deleted (or renamed to Delta.md), then Gamma.md is moved to Beta.md. The
row of the link while it led to the first Beta must not read as a link to the note at Beta.md
today. Fake embedder throughout."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import index_then_moment, note_ids
from serve_helpers import mcp_call, served

from brain.cli import cli
from brain.recall.timeline import note_history

ALPHA = "# Alpha\n\nSee [[Beta]] for the plan.\n"
BETA = "# Beta\n\nThe old plan about boats, back to [[Alpha]].\n"
GAMMA = "# Gamma\n\nA separate note about trains.\n"


@pytest.fixture(params=["deleted", "renamed away"])
def taken(request, tmp_path):
    """Returns the vault, the variant, a moment Beta lived at Beta.md, and the ids of Alpha,
    the first Beta and Gamma (at Beta.md now)."""
    root = tmp_path / "v"
    write(root, "Alpha.md", ALPHA)
    write(root, "Beta.md", BETA)
    write(root, "Gamma.md", GAMMA)
    lived = index_then_moment(root)
    ids = note_ids(root, "Alpha.md", "Beta.md", "Gamma.md")
    if request.param == "deleted":
        (root / "Beta.md").unlink()
    else:
        (root / "Beta.md").rename(root / "Delta.md")
    index_then_moment(root)
    (root / "Gamma.md").rename(root / "Beta.md")
    index_then_moment(root)
    return root, request.param, lived, ids


def _json(root, *args: str) -> dict:
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "--json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _text(root, *args: str) -> list[str]:
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), *args])
    assert out.exit_code == 0, out.output
    return out.output.splitlines()


def test_each_link_row_says_which_note_it_led_to_and_where_that_note_is_now(taken):
    root, variant, _, (_, beta, gamma) = taken
    links = _json(root, "Alpha.md")["links"]
    assert [s["note_id"] for s in links] == [beta, None, gamma]  # then, dangling, the note there now
    first, _, last = links
    assert last | {"path": "Beta.md", "now": "Beta.md", "ended": None, "ended_at": None, "other_at_path": None} == last
    assert first["then"] == last["then"] == "Beta.md"  # each at Beta.md when Alpha's link led to it
    if variant == "deleted":
        assert first["path"] == "Beta.md" and first["now"] is None and first["ended"] == "deleted"
        # deleted in the run that closed the link (which re-resolved it a moment later)
        assert first["gained"] < first["ended_at"] <= first["lost"] and first["other_at_path"] == gamma
    else:  # the first Beta lives on at Delta.md: named there, as before
        assert first["path"] == first["now"] == "Delta.md" and first["ended"] is None
        assert first["other_at_path"] is None


def test_the_text_row_of_a_deleted_note_says_so_and_that_another_note_holds_its_path(taken):
    root, variant, _, (_, beta, _) = taken
    rows = [line for line in _text(root, "Alpha.md") if "[[Beta]] →" in line]
    assert len(rows) == 3, rows
    if variant == "deleted":
        assert f"→ Beta.md (note {beta}, deleted " in rows[0] and "a different note is there now" in rows[0]
    else:
        assert "→ Delta.md (then at Beta.md)  " in rows[0] and "deleted" not in rows[0]
    assert "→ Beta.md  " in rows[2] and "deleted" not in rows[2] and "different note" not in rows[2]


def test_a_backlink_from_a_deleted_note_at_a_taken_path_says_so(taken):
    root, variant, _, (_, beta, _) = taken
    backlinks = _json(root, "Alpha.md")["backlinks"]
    assert [s["note_id"] for s in backlinks] == [beta]
    row = [line for line in _text(root, "Alpha.md") if "[[Alpha]] ←" in line]
    if variant == "deleted":
        assert backlinks[0]["now"] is None and backlinks[0]["ended"] == "deleted"
        assert f"← Beta.md (note {beta}, deleted " in row[0] and "a different note is there now" in row[0]
    else:
        assert backlinks[0]["now"] == "Delta.md" and "← Delta.md (then at Beta.md)  " in row[0]


def test_as_of_and_mcp_name_the_same_rows(taken):
    root, variant, _, (alpha, beta, gamma) = taken
    now = _json(root, "--last", "20", "Alpha.md")
    then = _json(root, "--last", "20", "--as-of", note_history(root, "Beta.md").others_at_path[0]["as_of"], "Beta.md")
    assert then["note_id"] == beta
    # the first Beta's backlink from Alpha, and Alpha's link to it, name the same note the same way
    assert [s["note_id"] for s in then["backlinks"]] == [alpha] and then["backlinks"][0]["now"] == "Alpha.md"
    assert then["links"][0]["note_id"] == alpha
    result = mcp_call(root, "history", {"note": "Alpha.md"})
    assert not result.is_error and json.loads("".join(p.text for p in result.content)) == now
    assert now["links"][0]["other_at_path"] == (gamma if variant == "deleted" else None)


def _ask(root, *args: str) -> str:
    out = CliRunner().invoke(cli, ["ask", "--vault", str(root), "--no-server", "-k", "5", *args, "plan about boats"])
    assert out.exit_code == 0, out.output
    return out.stdout


def test_ask_as_of_says_where_each_note_it_names_by_its_path_then_is_now(taken):
    root, variant, lived, _ = taken
    when = dt.datetime.fromtimestamp(lived).isoformat(timespec="microseconds")
    results = {r["title"]: r for r in json.loads(_ask(root, "--json", "--as-of", when))["results"]}
    beta, gamma = results["Beta"], results["Gamma"]
    assert beta["path"] == "Beta.md" and gamma["path"] == "Gamma.md"  # their paths then
    assert gamma["now"] == "Beta.md" and not gamma["path_reused"]
    assert beta["path_reused"] and beta["now"] == (None if variant == "deleted" else "Delta.md")
    assert results["Alpha"]["now"] == "Alpha.md" and not results["Alpha"]["path_reused"]
    rows = _ask(root, "--as-of", when).splitlines()
    told = [rows[i + 1] for i, row in enumerate(rows) if row.strip() == "Beta.md › Beta"]
    assert len(told) == 1, rows
    gone = "deleted since" if variant == "deleted" else "now at Delta.md"
    assert told[0].endswith(f" · {gone}; a different note is at Beta.md now"), told
    assert any(row.endswith(" · now at Beta.md") for row in rows), rows
    # the present names each note where it is
    present = json.loads(_ask(root, "--json"))["results"]
    assert all(r["now"] == r["path"] and not r["path_reused"] for r in present)


def test_get_note_as_of_says_where_the_note_read_is_now(taken):
    root, variant, lived, _ = taken
    when = dt.datetime.fromtimestamp(lived).isoformat(timespec="microseconds")
    result = mcp_call(root, "get_note", {"note": "Beta.md", "as_of": when})
    assert not result.is_error, result.content
    then = json.loads("".join(p.text for p in result.content))
    assert then["path"] == "Beta.md" and "boats" in then["text"]
    assert then["now"] == (None if variant == "deleted" else "Delta.md") and then["path_reused"] is True
    result = mcp_call(root, "get_note", {"note": "Gamma.md", "as_of": when})
    then = json.loads("".join(p.text for p in result.content))
    assert then["path"] == "Gamma.md" and then["now"] == "Beta.md" and then["path_reused"] is False


def test_a_path_three_notes_held_in_turn_tells_the_two_deleted_ones_apart(tmp_path):
    """A.md deleted, X.md moved there and deleted, Y.md moved there: Ref's rows of the first two,
    and the lines naming them under `brain history A.md`, differed only by a minute or nothing."""
    root = tmp_path / "v"
    for name, text in (("A", "first tenant"), ("X", "second tenant"), ("Y", "third tenant")):
        write(root, f"{name}.md", f"# {name}\n\n{text}\n")
    write(root, "Ref.md", "# Ref\n\nsee [[A]]\n")
    index_then_moment(root)
    first, second, third = note_ids(root, "A.md", "X.md", "Y.md")
    for moved in ("X.md", "Y.md"):
        (root / "A.md").unlink()
        index_then_moment(root)
        (root / moved).rename(root / "A.md")
        index_then_moment(root)
    rows = [line for line in _text(root, "Ref.md") if "→ A.md" in line]
    assert len(rows) == 3 and f"→ A.md (note {first}, deleted " in rows[0], rows
    assert f"→ A.md (note {second}, deleted " in rows[1] and "(note" not in rows[2], rows
    lines = [line for line in _text(root, "A.md") if line.startswith("a different note lived at A.md")]
    assert [f"note {first}, deleted since" in lines[0], f"note {second}, deleted since" in lines[1]] == [True, True]
    assert _json(root, "A.md")["note_id"] == third
    hinted = _json(root, "A.md")["others_at_path"][0]["as_of"]
    assert f"a different note lives at A.md now (A, note {third}): " in "\n".join(
        _text(root, "A.md", "--as-of", hinted)
    )


def test_a_supersession_entry_of_then_says_where_that_note_is_now(tmp_path):
    """ADR-1 (superseded by [[ADR-2]]) deleted; ADR-2.md then renamed to ADR-2 Kafka.md and another
    note moved to ADR-2.md: ADR-1's history, as its notes said it when it was last seen, named
    its successor "ADR-2.md", today the other note's path."""
    root = tmp_path / "v"
    write(root, "ADR-1.md", "---\ndate: 2024-05-01\nsuperseded_by: '[[ADR-2]]'\n---\n# ADR-1\n\nRabbitMQ.\n")
    write(root, "ADR-2.md", "---\ndate: 2025-03-11\n---\n# ADR-2\n\nKafka.\n")
    write(root, "Notes.md", "# Notes\n\nunrelated\n")
    index_then_moment(root)
    second, other = note_ids(root, "ADR-2.md", "Notes.md")
    (root / "ADR-1.md").unlink()
    index_then_moment(root)
    (root / "ADR-2.md").rename(root / "ADR-2 Kafka.md")
    index_then_moment(root)
    (root / "Notes.md").rename(root / "ADR-2.md")
    index_then_moment(root)
    entry = _json(root, "ADR-1.md")["replaced_by"]
    assert entry == [
        {"path": "ADR-2.md", "title": "ADR-2", "date": "2025-03-11", "note_id": second, "now": "ADR-2 Kafka.md"}
    ]
    told = [line for line in _text(root, "ADR-1.md") if line.strip().startswith("replaced by")]
    assert told == ["  replaced by  ADR-2  (ADR-2.md, dated 2025-03-11; now at ADR-2 Kafka.md)"], told
    assert other != second


def test_brain_serve_answers_ask_as_of_with_the_same_whereabouts(taken):
    root, variant, lived, _ = taken
    when = dt.datetime.fromtimestamp(lived).isoformat(timespec="microseconds")
    args = ["ask", "--vault", str(root), "-k", "5", "--json", "--as-of", when, "plan about boats"]
    with served(root, watch=False) as daemon:
        out = CliRunner().invoke(cli, args)
        assert out.exit_code == 0 and daemon.service.queries == 1, out.output
    results = {r["title"]: r for r in json.loads(out.stdout)["results"]}
    assert results["Beta"]["path_reused"] and results["Gamma"]["now"] == "Beta.md"
    assert results["Beta"]["now"] == (None if variant == "deleted" else "Delta.md")
