"""The README (Output): "Output that cannot be written is one error line, exit 1, for every
command" ... "a command with nothing to print still exits 0". `test_error_lines.py` holds it for
`--help`, `--version` and a closed stdout, `test_hardening_eval.py` for `brain eval`,
`test_serve_process.py` for `brain serve`: here every command brain has, each doing its work
with standard output on a full disk (`> /dev/full`), and a new command fails the test until it
is given a line here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest

from brain.cli import cli

FULL = "cannot write the output: No space left on device"

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _commands(vault: Path, tmp: Path) -> list[list[str]]:
    """One run of each command (and each subcommand that prints), with something to print."""
    v = ["--vault", str(vault)]
    queries = tmp / "q.jsonl"
    queries.write_text(
        json.dumps({"id": "q", "query": "graph rag", "type": "entity", "relevant": ["AI/Graph RAG.md"]}) + "\n"
    )
    settings = tmp / "claude" / "settings.json"
    settings.parent.mkdir()
    return [
        ["index", "--verify", *v],
        ["status", *v],
        ["status", "--json", *v],
        ["ask", "graph rag", "--no-server", *v],
        ["ask", "graph rag", "--json", "--no-server", *v],
        ["ask", "graph rag", "--context", "--no-server", *v],
        ["note", "Graph RAG", *v],
        ["neighbours", "Graph RAG", *v],
        ["history", "Graph RAG", *v],
        ["history", "Graph RAG", "--json", *v],
        ["eval", str(queries), *v],
        ["ab", "report"],
        ["turns"],
        ["turns", "--stats"],
        ["recalls"],
        ["prune", "--before", "1d", *v],
        ["hook", "install", "--settings", str(settings)],
        ["hook", "uninstall", "--settings", str(settings)],
        ["mcp", "install", "--vault", str(vault)],
        ["mcp", "uninstall"],
        ["serve", "--stop", *v],
        ["backup", str(tmp / "copy")],
    ]


def _run_into_full_disk(args: list[str]) -> str | None:
    """``brain ARGS > /dev/full``: the ClickException's message, or None when it ended well."""
    with open("/dev/full", "w") as full, pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", full)
        try:
            cli.main(args, prog_name="brain", standalone_mode=False)
        except click.ClickException as caught:
            return caught.message
    return None


def test_every_command_whose_output_cannot_be_written_says_so_in_one_line(toy_vault, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `brain mcp install` writes ./.mcp.json
    first = _run_into_full_disk(["index", "--vault", str(toy_vault)])
    assert first == FULL, first  # the index is made all the same: what follows reads it
    commands = _commands(toy_vault, tmp_path)
    covered = {args[0] for args in commands} | {"index"}
    # `brain hook stop` and `brain hook prompt` print nothing by design (test_ledger_hook.py,
    # test_prompt_hook.py); every other command is here
    assert covered == set(cli.commands), sorted(set(cli.commands) - covered)
    for args in commands:
        said = _run_into_full_disk(args)
        assert said is not None and said.startswith(FULL) and "\n" not in said, (args, said)
    assert (tmp_path / "copy").is_dir()  # the work is done; only its report was lost


def test_a_command_with_nothing_to_print_still_exits_0_on_a_full_disk(toy_vault):
    assert _run_into_full_disk(["index", "--vault", str(toy_vault)]) == FULL
    assert _run_into_full_disk(["index", "-q", "--vault", str(toy_vault)]) is None
