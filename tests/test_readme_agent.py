"""The README's sections an agent's user meets first, run as written: "Quickstart", "Automatic
recall" (its install, what the agent sees, `brain recalls`) and "`brain mcp`" (its config, the
tools as the server advertises them, its example answers). What a model decides (which notes,
their cosines) is left out; the commands, options, shapes, names and texts brain prints are not."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into
from serve_helpers import mcp_call

from brain import config
from brain.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _between(start: str, end: str) -> str:
    begin = README.index(start)
    return README[begin : README.index(end, begin + len(start))]


def _section(title: str) -> str:
    """A ``###`` section, up to the next heading of its level or above outside a code block."""
    start = README.index(f"\n### {title}\n")
    text, fenced = [], False
    for line in README[start + 1 :].splitlines(keepends=True)[1:]:
        fenced ^= line.startswith("```")
        if not fenced and re.match(r"#{1,3} ", line):
            break
        text.append(line)
    return "".join(text)


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)


# ----- `brain mcp`: the memory as MCP tools --------------------------------------------------

MCP = _section("`brain mcp`: the memory as MCP tools")


def _advertised(vault: Path) -> dict[str, dict]:
    """Each tool's input schema as ``tools/list`` gives it to a client."""
    from mcp import Client

    from brain.mcp.backend import Backend
    from brain.mcp.server import build_server

    backend = Backend(vault.resolve(), embedder=FakeEmbedder(), use_server=False, watch=False)

    async def go():
        async with Client(build_server(vault.resolve(), backend)) as session:
            return (await session.list_tools()).tools

    try:
        return {tool.name: tool.input_schema for tool in asyncio.run(go())}
    finally:
        backend.close()


def test_the_tools_table_names_each_tool_and_argument_the_server_advertises(toy_vault):
    # `name(a, b?)`: `?` marks an argument the tool does not require
    table = re.findall(r"^\| `(\w+)\(([^)]*)\)` \| (.*) \|$", MCP, re.M)
    schemas = _advertised(toy_vault)
    assert [name for name, _, _ in table] == list(schemas)
    for name, arguments, said in table:
        listed = [a.strip() for a in arguments.split(",") if a.strip()]
        properties, required = schemas[name]["properties"], set(schemas[name].get("required", []))
        assert [a.rstrip("?") for a in listed] == list(properties), name
        assert {a for a in listed if not a.endswith("?")} == required, name
        # a default the table gives in parentheses, e.g. "`limit` (100)", is the schema's
        for argument, default in re.findall(r"`(\w+)`,? \(?([\d,]+)\)?", said):
            if argument in properties and default.replace(",", "").isdigit():
                assert properties[argument]["default"] == int(default.replace(",", "")), (name, argument)


def _quoted_error(phrase: str) -> str:
    """The backquoted example answer that follows ``phrase`` in the section's prose."""
    flat = " ".join(MCP.split())
    return re.search(re.escape(phrase) + r".*?`([^`]+)`", flat).group(1)


@pytest.mark.parametrize(
    "phrase, name, arguments",
    [
        ('brain note ""` print (', "search", {"query": ""}),
        ("a long one e.g.", "search", {"query": "a " * 6000}),
        ("one line too (", "search", {"query": "memory", "k": 51}),
        ("for a number is refused,", "search", {"query": "memory", "k": True}),
        ("argument the tool does not take (", "search", {"query": "memory", "asof": "2026-01-01"}),
    ],
)
def test_the_example_answers_are_what_the_tools_answer(toy_vault, phrase, name, arguments):
    shown = _quoted_error(phrase)
    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    result = mcp_call(toy_vault, name, arguments)
    answer = "".join(part.text for part in result.content)
    assert result.is_error and answer == shown, (shown, answer)


def test_claude_mcp_add_runs_brain_mcp_with_options_it_takes(tmp_path):
    (bash,) = [b for b in _blocks(MCP, "bash") if "claude mcp add" in b]
    command = bash.split(' -- "$(which brain)" ', 1)[1].split()
    assert command[0] == "mcp"
    result = CliRunner().invoke(cli, [*command, "--help"])  # parsed as written, an unknown option refused
    assert result.exit_code == 0, result.output


def test_mcp_install_outputs_are_what_brain_mcp_install_prints(tmp_path, monkeypatch):
    (console,) = [b for b in _blocks(MCP, "console") if "mcp install" in b]
    steps = re.split(r"^\$ brain (.*)\n", console, flags=re.M)[1:]
    shown_project = re.search(r"to (\S+)/\.mcp\.json:", console).group(1)
    shown_command = re.search(r"^  \+ (.*)$", console, re.M).group(1)
    vault_arg = re.search(r"--vault (\S+)", steps[0]).group(1)
    project = tmp_path / "readme" / Path(shown_project).name
    project.mkdir(parents=True)
    shutil.copytree(ROOT / "toy_vault", (project / vault_arg).resolve())
    (project / ".mcp.json").write_text('{"mcpServers": {}}\n')  # the user's, so that install backs it up
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BRAIN_EMBED_MODEL")  # the README's shell pins nothing beyond the vault
    monkeypatch.delenv("BRAIN_HOME")
    monkeypatch.setattr(config, "brain_home", lambda: tmp_path / "brain")
    command = None
    for args, shown in zip(steps[::2], steps[1::2], strict=True):
        result = CliRunner().invoke(cli, args.split())
        assert result.exit_code == 0, result.output
        command = command or re.search(r"^  \+ (.*)$", result.output, re.M).group(1)
        expected = shown.replace(shown_project, str(project)).replace(shown_command, command)
        stamp = r"bak-\d{8}-\d{6}"
        assert re.sub(stamp, "bak-*", result.output.rstrip("\n")) == re.sub(stamp, "bak-*", expected.rstrip("\n"))
    assert command.endswith(f"mcp --vault {(project / vault_arg).resolve()}")
