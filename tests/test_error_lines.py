"""Every error under `brain` is one line: a line break in what it quotes (a path, a library's
message) is written as ``\\n``, never a second line that reads as brain's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner
from serve_helpers import LAUNCHER, brain_env

from brain.cli import cli
from brain.cli_support import BrainGroup, library_errors
from brain.errors import ModelLoadError


def test_a_vault_path_holding_a_line_break_is_one_error_line(tmp_path):
    """It printed "Error: vault not found: /nowhere" and a line "second"."""
    gone = str(tmp_path / "nowhere\nsecond")
    shown = gone.replace("\n", "\\n")
    for args in (["index", "-q"], ["status", "--json"], ["ask", "--json", "what"], ["history", "Note"]):
        out = CliRunner().invoke(cli, [*args, "--vault", gone])
        assert out.exit_code == 1, out.output
        assert out.output.startswith(f"Error: vault not found: {shown}: check the path;"), (args, out.output)
        assert out.output.count("\n") == 1, (args, out.output)


def test_a_library_message_of_several_lines_is_one_error_line():
    """A library's message quoted whole (transformers' is several lines) kept its breaks."""

    @click.command()
    @library_errors
    def load() -> None:
        raise ModelLoadError("cannot load the model x: We couldn't connect.\nCheck your connection\n\tor go offline")

    out = CliRunner().invoke(load)
    assert out.exit_code == 1
    assert (
        out.output
        == "Error: cannot load the model x: We couldn't connect.\\nCheck your connection\\n\\tor go offline\n"
    )


def test_a_click_error_a_command_raises_under_brain_is_one_line():
    @click.group(cls=BrainGroup)
    def group() -> None:
        pass

    @group.command()
    def fail() -> None:
        raise click.ClickException("cannot start for /v\nault\r\u2028")

    out = CliRunner().invoke(group, ["fail"])
    assert out.exit_code == 1 and out.output == "Error: cannot start for /v\\nault\\r\\u2028\n", out.output


def test_a_group_given_no_command_still_prints_its_help():
    """click's error for `brain hook` alone is its help, lines and all (kept: no error of brain's)."""
    out = CliRunner().invoke(cli, ["hook"], prog_name="brain")
    assert out.output.startswith("Usage: brain hook [OPTIONS] COMMAND [ARGS]...\n\n"), out.output
    assert "\n  install " in out.output


def test_a_query_file_s_problems_are_a_line_each_and_none_is_two(toy_vault, tmp_path):
    """The one error that lists: its lines are brain's; a line break an item quotes (a JSON
    string holds one) is written as \\n."""
    queries = tmp_path / "q.jsonl"
    good = {"id": "a\nb", "query": "q", "type": "entity", "relevant": ["no\nsuch.md"]}
    queries.write_text('{"x":\n' + json.dumps(good) + "\n", encoding="utf-8")
    out = CliRunner().invoke(cli, ["eval", str(queries), "--vault", str(toy_vault)])
    assert out.exit_code == 1
    assert out.output.splitlines() == [
        f"Error: {queries}: 1 problem(s) in the query file:",
        "  line 1: not valid JSON (Expecting value at column 6)",
        f"{queries}: 1 relevant path(s) are not notes in the vault {toy_vault}:",
        "  line 2 (a\\nb): 'no\\nsuch.md'",
    ], out.output
    named = tmp_path / "q\nfile.jsonl"
    out = CliRunner().invoke(cli, ["eval", str(named), "--vault", str(toy_vault)])
    shown = str(named).replace("\n", "\\n")
    assert out.exit_code == 1 and out.output == f"Error: query file not found: {shown}\n", out.output


def test_a_usage_error_is_one_line_naming_the_help():
    """click printed a usage error as four lines (the command's usage, "Try ... for help.", a
    blank line, the error); every other error of brain's is one."""
    cases = {
        (
            "ask",
            "-k",
            "0",
            "what",
        ): "Error: Invalid value for '-k': 0 is not in the range 1<=x<=200 (`brain ask --help` explains)",
        ("nosuch",): "Error: No such command 'nosuch' (`brain --help` explains)",
        ("--bogus",): "Error: No such option '--bogus' (`brain --help` explains)",
        (
            "hook",
            "install",
            "--usr",
        ): "Error: No such option '--usr'. Did you mean '--user'? (`brain hook install --help` explains)",
    }
    for args, line in cases.items():
        out = CliRunner().invoke(cli, list(args), prog_name="brain")
        assert out.exit_code == 2, (args, out.output)
        assert out.output == line + "\n", (args, out.output)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["eval", "--help"]])
def test_help_and_version_written_to_a_full_disk_are_one_error_line(monkeypatch, args):
    # `brain --help > /dev/full`: click writes it while parsing, before invoke: Python's traceback.
    with open("/dev/full", "w") as full:
        monkeypatch.setattr("sys.stdout", full)
        with pytest.raises(click.ClickException) as caught:
            cli.main(args, prog_name="brain", standalone_mode=False)
    assert caught.value.message == "cannot write the output: No space left on device"


@pytest.mark.slow  # subprocesses
def test_output_to_a_closed_stdout_is_an_error_and_no_output_is_none(tmp_path):
    # `brain status >&-` printed nothing and exited 0, as if all was written.
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(LAUNCHER), *args],
            env=brain_env(BRAIN_HOME=str(tmp_path / "home")),
            stdin=subprocess.DEVNULL,
            stdout=None,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(),
            preexec_fn=lambda: os.close(1),
            timeout=120,
        )

    for args in (["--version"], ["--help"], ["status", "--help"]):
        done = run(*args)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr == "Error: cannot write the output: standard output is closed\n", (args, done.stderr)
    done = run("status", "--vault", str(tmp_path / "nowhere"))  # its error goes to stderr, as before
    assert done.returncode == 1 and done.stderr.startswith("Error: vault not found"), done.stderr
    (tmp_path / "vault").mkdir()  # brain mcp has no stdout to talk over: it says so, as it did
    done = run("mcp", "--vault", str(tmp_path / "vault"))
    assert done.returncode == 1 and "one of them is closed" in done.stderr, done.stderr


# A name pasted by mistake (a whole note): a line break near its start, 3,002 characters.
LONG = "a\nb" + "x" * 2_999


@pytest.mark.parametrize(
    "args",
    [
        ["history", LONG],
        ["history", "--as-of", LONG, "Home"],
        ["note", LONG],
        ["note", "Home", "--heading", LONG],
        ["neighbours", LONG],
        ["ask", "--as-of", LONG, "memory"],
        ["ask", "--valid-at", LONG, "memory"],
        ["ask", "--mode", LONG, "memory"],
        ["ask", "-k", LONG, "memory"],
        ["eval", "QUERIES", "--explain", LONG],
    ],
)
def test_a_long_name_or_moment_is_quoted_by_its_start_and_its_length(toy_vault, tmp_path, args):
    """`brain history <5,000-character name>` printed the whole name in its one-line error: now
    its first 56 and last 24 characters (escaped: one line) and how long it was."""
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "query": "agent memory", "type": "theme", "relevant": ["Home.md"]}\n')
    assert CliRunner().invoke(cli, ["index", "-q", "--vault", str(toy_vault)]).exit_code == 0
    args = [str(queries) if a == "QUERIES" else a for a in args]
    out = CliRunner().invoke(cli, [*args, "--vault", str(toy_vault)])
    assert out.exit_code in (1, 2), out.output
    assert out.output.startswith("Error: ") and out.output.count("\n") == 1, out.output
    assert "'a\\nbxxx" in out.output and "'…'" + "x" * 24 + "' (3,002 characters)" in out.output, out.output
    assert len(out.output) < 400, out.output


def test_a_long_note_name_given_to_mcp_is_quoted_by_its_start_and_its_length(toy_vault):
    from serve_helpers import mcp_call

    assert CliRunner().invoke(cli, ["index", "-q", "--vault", str(toy_vault)]).exit_code == 0
    for tool, arguments in (("get_note", {"note": LONG}), ("history", {"note": LONG})):
        result = mcp_call(toy_vault, tool, arguments)
        text = "".join(c.text for c in result.content)
        assert result.is_error and "'…'" + "x" * 24 + "' (3,002 characters)" in text and len(text) < 400, text


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def test_every_helps_examples_are_one_a_line():
    """`brain note`, `brain neighbours` and `brain ab report` showed their examples run together
    into one paragraph (`Examples:   brain ab report   brain ab report --since 30d …`): click
    rewraps a paragraph not marked \\b. Each example is a line of its own, as in `brain ask`."""
    shown = 0
    for path, _command in _commands(cli):
        out = CliRunner().invoke(cli, [*path, "--help"], terminal_width=80).output
        if "Examples:" not in out:
            continue
        shown += 1
        after = out.split("Examples:", 1)[1].split("\n")
        assert after[0] == "", (path, out)  # nothing after the heading on its line
        assert after[1].strip().startswith("brain "), (path, out)
    assert shown >= 10


def test_every_help_names_a_moment_and_the_user_scope_alike():
    """A newcomer reading the helps side by side: `ab report --since` took TEXT where every other
    moment (--as-of, --before) is WHEN, `hook install --user` said "all projects" where `mcp
    install --user` says "every project", and `ab report` and `neighbours` showed no example."""
    moments, scopes = [], []
    for path, command in _commands(cli):
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            if param.name in ("since", "before", "as_of"):
                moments.append((path, param.name, param.metavar))
            if param.name == "user":
                scopes.append((path, param.help))
    assert moments and all(metavar == "WHEN" for _path, _name, metavar in moments), moments
    assert scopes and all("every project" in (text or "") for _path, text in scopes), scopes
    for args in (["ab", "report"], ["neighbours"]):
        out = CliRunner().invoke(cli, [*args, "--help"]).output
        assert f"brain {' '.join(args)} " in out.split("Options:")[0], out


# Undecodable bytes in a name come in as surrogates (os.fsdecode): printed to a standard output
# that writes UTF-8 strictly (a UTF-8 locale other than C, macOS; CliRunner's), each was a
# UnicodeEncodeError and its traceback. Now written as their escape, as an error line writes them.
BAD = os.fsdecode(b"bad-\xff-name")


@pytest.mark.parametrize(
    "args, env",
    [
        (["status", "--vault", "BAD_VAULT"], {}),
        (["status", "--json", "--vault", "BAD_VAULT"], {}),
        (["serve", "--stop", "--vault", "BAD_VAULT"], {}),
        (["status", "--vault", "VAULT"], {"BRAIN_DB": BAD}),
        (["status", "--vault", "VAULT"], {"BRAIN_PPR_METHOD": BAD}),
        (["status", "--vault", "VAULT"], {"BRAIN_EMBED_MODEL": BAD}),
    ],
    ids=["status", "status-json", "serve-stop", "BRAIN_DB", "BRAIN_PPR_METHOD", "BRAIN_EMBED_MODEL"],
)
def test_a_name_that_is_not_utf8_is_printed_as_its_escape(tmp_path, monkeypatch, args, env):
    vault = tmp_path / "vault"
    bad_vault = tmp_path / BAD
    for folder in (vault, bad_vault):
        folder.mkdir()
        (folder / "Note.md").write_text("# Note\n\nText.\n", encoding="utf-8")
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    args = [str(bad_vault) if a == "BAD_VAULT" else str(vault) if a == "VAULT" else a for a in args]
    out = CliRunner().invoke(cli, args, env=env)
    assert not isinstance(out.exception, UnicodeEncodeError), out.exception
    assert "Traceback" not in out.output
    assert "bad-\\udcff-name" in out.output, out.output


@pytest.mark.slow  # a subprocess
def test_a_vault_whose_name_is_not_utf8_is_shown_by_status_where_output_is_strict(tmp_path):
    """As a terminal in an en_US.UTF-8 locale has it (PYTHONIOENCODING: this machine has only C)."""
    bad_vault = tmp_path / BAD
    bad_vault.mkdir()
    done = subprocess.run(
        [sys.executable, str(LAUNCHER), "status", "--vault", str(bad_vault)],
        env=brain_env(BRAIN_HOME=str(tmp_path / "home"), PYTHONIOENCODING="utf-8:strict"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert b"bad-\\udcff-name" in done.stdout, done.stdout


def test_a_fence_language_that_is_not_utf8_is_one_error_line(toy_vault):
    """BRAIN_LINK_FENCES with undecodable bytes passed the check and failed the index's write of
    the setting: `brain index` and `brain ask` printed a UnicodeEncodeError's traceback."""
    # ``ask`` over an index there (a first index that failed leaves none: "no index yet")
    assert CliRunner().invoke(cli, ["index", "-q", "--vault", str(toy_vault)]).exit_code == 0
    for args in (["index", "-q"], ["ask", "--no-server", "memory"]):
        out = CliRunner().invoke(cli, [*args, "--vault", str(toy_vault)], env={"BRAIN_LINK_FENCES": BAD})
        assert out.exit_code == 1, (args, out.output, out.exception)
        assert out.output.startswith("Error: BRAIN_LINK_FENCES must be code-fence languages"), out.output
        assert out.output.count("\n") == 1, out.output


@pytest.mark.parametrize(
    "args, env",
    [
        (["hook", "install", "--prompt", "--vault", "BAD_VAULT"], {}),
        (["mcp", "install", "--vault", "BAD_VAULT"], {}),
        (["hook", "install"], {"BRAIN_HOME": "BAD_HOME"}),
        (["mcp", "install", "--vault", "VAULT"], {"BRAIN_DB": "BAD_HOME/ledger.db"}),
    ],
    ids=["hook-vault", "mcp-vault", "hook-BRAIN_HOME", "mcp-BRAIN_DB"],
)
def test_a_path_that_is_not_utf8_is_not_written_into_claude_codes_settings(tmp_path, monkeypatch, args, env):
    """`brain hook install --prompt` and `brain mcp install` wrote such a path into the JSON as
    ``\\udcff``: Claude Code reads that as another path, and the hook or the server it started
    found no vault, with nothing said. Now refused, one line, nothing written."""
    vault, bad_vault = tmp_path / "vault", tmp_path / BAD
    for folder in (vault, bad_vault):
        folder.mkdir()
        (folder / "Note.md").write_text("# Note\n\nText.\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    named = {"BAD_VAULT": str(bad_vault), "VAULT": str(vault), "BAD_HOME": str(tmp_path / BAD)}
    args = [named.get(a, a) for a in args]
    env = {name: value.replace("BAD_HOME", named["BAD_HOME"]) for name, value in env.items()}
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 1, (out.output, out.exception)
    assert out.output.startswith("Error: ") and out.output.count("\n") == 1, out.output
    assert "is not valid UTF-8, and Claude Code's settings (JSON) cannot name it" in out.output, out.output
    assert os.listdir(project) == []
