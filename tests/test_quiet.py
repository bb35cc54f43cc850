"""-q and --json: stdout is the output alone; stderr leaves out only the warnings the output (or
`brain status`) holds, and every other warning, which a CLI command keeps in no log, still says
what the user has to fix."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from conftest import write

from brain.cli import cli
from brain.index.store import IndexStore

TYPO = "brain: WARNING: BRAIN_PROMT_K is not a brain setting and is ignored; did you mean BRAIN_PROMPT_K?\n"


def _vault(tmp_path):
    root = tmp_path / "v"
    write(root, "Agent memory.md", "# Agent memory\n\nAn agent remembers through recall over its notes.\n")
    return root


def _denied(self: Path) -> None:
    raise PermissionError(13, "Permission denied", str(self))


def test_quiet_and_json_keep_a_warning_that_has_no_other_trace(tmp_path, monkeypatch):
    """The replaced index that could not be deleted: said on stderr, else a folder the size of the
    index is left behind unseen (-q and --json left the line out: no log, no report held it)."""
    for flag in ("-q", "--json"):
        root = _vault(tmp_path / flag)
        assert CliRunner().invoke(cli, ["index", "-q", "--vault", str(root)]).exit_code == 0
        with monkeypatch.context() as patched:
            patched.setattr(Path, "rmdir", _denied)  # brain's files go, the folder stays
            out = CliRunner().invoke(cli, ["index", "--rebuild", "--yes", flag, "--vault", str(root)])
        assert out.exit_code == 0, out.output
        assert "the replaced index could not be deleted from " in out.stderr, (flag, out.stderr)
        assert out.stderr.endswith("; delete it yourself\n") and out.stderr.count("\n") == 1, out.stderr
        if flag == "--json":
            assert json.loads(out.stdout)["notes"] == 1
        else:
            assert out.stdout == ""


def test_quiet_and_json_leave_out_the_warnings_the_run_reports(tmp_path):
    """A note skipped: counted in the summary and --json's warnings, listed by `brain status`."""
    root = _vault(tmp_path)
    (root / "Broken.md").write_bytes(b"# Broken\n\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05 binary\n")
    out = CliRunner().invoke(cli, ["index", "-q", "--vault", str(root)])
    assert out.exit_code == 0 and out.stdout == "" and out.stderr == "", out.output
    out = CliRunner().invoke(cli, ["index", "--json", "--verify", "--vault", str(root)])
    assert out.exit_code == 0 and out.stderr == "", out.output
    out = CliRunner().invoke(cli, ["status", "--verbose", "--vault", str(root)])
    assert "Broken.md" in out.stdout, out.stdout
    # without -q the run says it where it happens
    (root / "Broken2.md").write_bytes(b"\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05")
    out = CliRunner().invoke(cli, ["index", "--vault", str(root)])
    assert "Broken2.md" in out.stderr, out.output


def test_a_mistyped_setting_is_said_on_stderr_whatever_the_output(tmp_path, monkeypatch):
    """Each of these printed it; -q's help said "no warnings": it is a setup's warning, with no
    other trace, and stdout stays the output alone."""
    root = _vault(tmp_path)
    monkeypatch.setenv("BRAIN_PROMT_K", "3")
    out = CliRunner().invoke(cli, ["index", "-q", "--vault", str(root)])
    assert out.exit_code == 0 and out.stdout == "" and out.stderr == TYPO, out.output
    out = CliRunner().invoke(cli, ["status", "--json", "--vault", str(root)])
    assert out.exit_code == 0 and out.stderr == TYPO and json.loads(out.stdout)["notes"] == 1
    out = CliRunner().invoke(cli, ["ask", "--json", "--vault", str(root), "agent memory"])
    assert out.exit_code == 0 and out.stderr == TYPO and json.loads(out.stdout)["results"]
    out = CliRunner().invoke(cli, ["index", "--help"])
    assert "the warnings a run reports" in " ".join(out.stdout.split())


def test_ask_json_says_a_fallback_on_stderr_as_well(tmp_path, monkeypatch):
    """`brain ask --json` left every warning off stderr: a lane that fell back was said only in
    the JSON, as the README said it was on stderr too (and a warning not in it, nowhere)."""
    root = _vault(tmp_path)
    assert CliRunner().invoke(cli, ["index", "-q", "--vault", str(root)]).exit_code == 0

    def damaged(*args, **kwargs):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(IndexStore, "fts_search", damaged)
    out = CliRunner().invoke(cli, ["ask", "--json", "--mode", "hybrid", "--vault", str(root), "agent memory"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["fallbacks"]["lexical"] and data["warnings"], data
    assert [f"brain: WARNING: {w}" for w in data["warnings"]] == out.stderr.splitlines(), out.stderr


def test_ask_quiet_prints_the_answer_and_the_warnings_only(tmp_path, monkeypatch):
    """`brain ask -q` was no option ("No such option '-q'"), where `brain index -q` is: its notes on
    stderr (what the graph did, the update's notes skipped) are left out as index's are."""
    root = _vault(tmp_path)
    write(root, "Recall.md", "# Recall\n\nRecall links [[Agent memory]] to the agent's questions.\n")
    assert CliRunner().invoke(cli, ["index", "-q", "--vault", str(root)]).exit_code == 0
    (root / "Broken.md").write_bytes(b"# Broken\n\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05 binary\n")
    out = CliRunner().invoke(cli, ["ask", "-q", "--vault", str(root), "agent memory"])
    assert out.exit_code == 0 and out.stderr == "", out.output
    assert out.stdout.startswith(" 1.") and "Agent memory" in out.stdout
    monkeypatch.setenv("BRAIN_PROMT_K", "3")
    out = CliRunner().invoke(cli, ["ask", "--quiet", "--vault", str(root), "agent memory"])
    assert out.exit_code == 0 and out.stderr == TYPO, out.output
    monkeypatch.delenv("BRAIN_PROMT_K")
    (root / "Broken.md").unlink()
    (root / "Broken2.md").write_bytes(b"# Broken\n\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05 binary\n")
    out = CliRunner().invoke(cli, ["ask", "--vault", str(root), "agent memory"])  # what -q left out
    assert "Broken2.md: skipped (binary)" in out.stderr and "\n(graph: " in out.stderr, out.stderr
