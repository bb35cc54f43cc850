"""The server's `note` and `neighbours` (what `brain mcp`'s get_note and neighbours ask it) answer
what `brain note --json` and `brain neighbours --json` print, as `brain/server/protocol.py`
promises, on the names that are hard to read: an alias, a title, a path without `.md`, a section
by the end of its heading path, a cut, a name that fits no note, one that steps out of the vault.
A refusal is the line the CLI prints."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into
from serve_helpers import request, served

from brain.cli import cli

READS: list[tuple[str, dict[str, Any]]] = [
    ("note", {"note": "Hooks"}),  # an alias
    ("note", {"note": "Graph RAG"}),  # a title
    ("note", {"note": "AI/Graph RAG"}),  # a path without .md
    ("note", {"note": "GraphRAG", "heading": "Microsoft's GraphRAG"}),
    ("note", {"note": "Brain MVP", "max_chars": 200}),
    ("note", {"note": "brain"}),  # an alias in another case than the title
    ("note", {"note": "Grpah RAG"}),  # no such note: the nearest named
    ("note", {"note": "../outside.md"}),
    ("note", {"note": "Graph RAG", "heading": "No such heading"}),
    ("neighbours", {"note": "Graph RAG"}),
    ("neighbours", {"note": "RAG"}),
    ("neighbours", {"note": "Home"}),
    ("neighbours", {"note": "Grpah RAG"}),
]


def _cli_args(op: str, fields: dict[str, Any]) -> list[str]:
    args = [op, fields["note"], "--json"]
    if "heading" in fields:
        args += ["--heading", fields["heading"]]
    if "max_chars" in fields:
        args += ["--max-chars", str(fields["max_chars"])]
    return args


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict[str, Any], Any, Any]]:
    """Each read asked of a server over the toy vault, and the CLI's answer (its JSON, or its
    error line) in-process, with no server running."""
    import shutil

    from conftest import TOY_VAULT

    base = tmp_path_factory.mktemp("reading")
    vault = base / "vault"
    shutil.copytree(TOY_VAULT, vault, symlinks=True)
    home = base / "home"
    old = os.environ.get("BRAIN_HOME")
    os.environ["BRAIN_HOME"] = str(home)
    try:
        index_into(home, vault, FakeEmbedder())
        with served(vault, watch=False) as daemon:
            replies = [request(daemon, op, **fields) for op, fields in READS]
        printed = []
        for op, fields in READS:
            result = CliRunner().invoke(cli, [*_cli_args(op, fields), "--vault", str(vault)])
            printed.append(json.loads(result.stdout) if result.exit_code == 0 else ("error", result.stderr.strip()))
    finally:
        if old is None:
            os.environ.pop("BRAIN_HOME", None)
        else:
            os.environ["BRAIN_HOME"] = old
    return [({"op": op, **fields}, reply, cli_said) for (op, fields), reply, cli_said in zip(READS, replies, printed)]


@pytest.mark.parametrize("n", range(len(READS)), ids=[f"{op}-{f['note']}" for op, f in READS])
def test_the_server_reads_a_note_as_the_cli_prints_it(answers, n):
    asked, reply, cli_said = answers[n]
    if isinstance(cli_said, tuple):
        assert reply["ok"] is False, (asked, reply, cli_said)
        assert cli_said[1] == f"Error: {reply['error']['message']}", (asked, reply, cli_said)
    else:
        assert reply["ok"] is True, (asked, reply, cli_said)
        assert reply["result"] == cli_said, asked
