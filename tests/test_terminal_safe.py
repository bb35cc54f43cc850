"""What reaches a terminal cannot disguise a name: bidi overrides and invisible characters
shown as escapes (Trojan Source), escape sequences in an error or warning shown as escapes, and
a reader that closes the pipe early (`brain turns | head -1`) ends brain quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import write
from serve_helpers import LAUNCHER, brain_env

from brain.cli import cli
from brain.cli_support import BrainGroup, library_errors
from brain.errors import ConfigError
from brain.index.indexer import index_vault
from brain.text import escaped, log_record, terminal_safe

RLO = "\u202e"
# The embeddings, overrides and isolates the Trojan Source paper lists, and the invisible
# characters no script's words hold.
REORDERING = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
HIDING = ["\u2060", "\ufeff", "\u2062"]


@pytest.mark.parametrize("char", REORDERING + HIDING)
def test_a_reordering_or_hiding_character_is_shown_as_its_escape(char):
    shown = terminal_safe(f"invoice{char}txt.exe")
    assert shown == f"invoice\\u{ord(char):04x}txt.exe"


@pytest.mark.parametrize(
    "text",
    [
        "می\u200cخواهم",  # Persian: ZWNJ inside a word
        "क्\u200dष",  # Devanagari: ZWJ after a virama
        "ഭൗതികവാദമാണ്\u200c എന്ന് പറയാ",  # Malayalam: ZWNJ after the virama ends a word
        "👩\u200d💻",  # an emoji sequence
        "🏳\ufe0f\u200d🌈",  # ... after a variation selector
        "שלום\u200f!",  # Hebrew: RLM placing the punctuation
        "مرحبا\u061c 2026",  # Arabic: ALM
        "Привет, мир",  # Cyrillic
        "東京の会議メモ",  # CJK
    ],
)
def test_text_of_a_script_that_needs_its_joiners_and_marks_is_shown_as_it_is(text):
    assert terminal_safe(text) == text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Roll\u200bout plan", "Roll\\u200bout plan"),  # looks like "Rollout plan"
        ("Roll\u200dout", "Roll\\u200dout"),
        ("\u200cplan", "\\u200cplan"),
        ("ش\u200d\u200dک", "ش\u200d\\u200dک"),  # two: the second hides behind the first
        ("plan\u200e.md", "plan\\u200e.md"),  # a mark on a line with no right-to-left letter
        ("שלום\nplan\u200f.md", "שלום\nplan\\u200f.md"),  # ... judged by its own line
    ],
)
def test_a_joiner_or_mark_outside_the_text_it_serves_is_shown_as_its_escape(text, shown):
    assert terminal_safe(text) == shown


def test_logs_and_messages_escape_every_invisible_character_the_joiners_too():
    name = "می\u200cخواهم \u202e 👩\u200d💻 \U000e0041"
    want = "می\\u200cخواهم \\u202e 👩\\u200d💻 \\U000e0041"
    assert log_record(name) == want and escaped(name) == want
    assert escaped("one\x1b[2J\ntwo\t") == "one\\x1b[2J\ntwo\\t"  # a message keeps its own lines


@pytest.fixture
def disguised_vault(tmp_path) -> Path:
    root = tmp_path / "vault"
    write(root, f"invoice{RLO}txt.exe.md", f"# invoice{RLO}exe.txt\n\nThe invoice for the march payments.\n")
    write(root, "می\u200cخواهم.md", "# می\u200cخواهم\n\nPersian notes about the march payments.\n")
    index_vault(root, progress=False)
    return root


def test_ask_history_and_status_show_a_bidi_override_in_a_name_as_its_escape(disguised_vault):
    vault = str(disguised_vault)
    out = CliRunner().invoke(cli, ["ask", "--no-server", "--vault", vault, "invoice march payments"])
    assert out.exit_code == 0, out.output
    assert "invoice\\u202etxt.exe" in out.output and RLO not in out.output
    assert "می\u200cخواهم" in out.output  # a Persian title as it is
    out = CliRunner().invoke(cli, ["history", "--vault", vault, f"invoice{RLO}txt.exe"])
    assert out.exit_code == 0, out.output
    assert "invoice\\u202etxt.exe.md" in out.output and RLO not in out.output
    write(disguised_vault, f"pending{RLO}dm.md", "# pending\n")
    out = CliRunner().invoke(cli, ["status", "-v", "--vault", vault])
    assert out.exit_code == 0, out.output
    assert "pending\\u202edm.md" in out.output and RLO not in out.output


def test_json_keeps_a_name_exactly(disguised_vault):
    out = CliRunner().invoke(cli, ["ask", "--no-server", "--json", "--vault", str(disguised_vault), "invoice"])
    paths = [r["path"] for r in json.loads(out.output)["results"]]
    assert f"invoice{RLO}txt.exe.md" in paths


def test_a_library_error_shows_a_name_s_escape_sequence_as_its_escape():
    @click.command()
    @library_errors
    def command() -> None:
        raise ConfigError("no note 'Esc\x1b]0;pwned\x07ape' here;\nsecond line\r")

    out = CliRunner().invoke(command, color=True)
    assert out.exit_code == 1 and out.output == "Error: no note 'Esc\\x1b]0;pwned\\x07ape' here;\\nsecond line\\r\n"
    # a vault's path that holds ESC[2J (clear the screen): it was "vault not found: /nowhere"
    out = CliRunner().invoke(cli, ["index", "--vault", "/nowhere\x1b[2J"], color=True)
    assert out.exit_code == 1 and "vault not found: /nowhere\\x1b[2J: check" in out.output, out.output


def test_any_click_error_under_brain_shows_escapes():
    @click.group(cls=BrainGroup)
    def group() -> None:
        pass

    @group.command()
    def fail() -> None:
        raise click.ClickException(f"cannot start for /v\x1b]0;t\x07ault{RLO}")

    out = CliRunner().invoke(group, ["fail"], color=True)
    assert out.exit_code == 1 and out.output == "Error: cannot start for /v\\x1b]0;t\\x07ault\\u202e\n"


def test_a_warning_shows_a_file_name_s_escape_sequence_as_its_escape():
    import logging

    from brain.cli_support import setup_logging

    setup_logging()
    (handler,) = [h for h in logging.getLogger("brain").handlers if getattr(h, "_brain", False)]
    record = logging.LogRecord("brain", logging.WARNING, __file__, 1, "%s: skipped", (f"Bin\x1b[31m{RLO}.md",), None)
    assert handler.format(record) == "brain: WARNING: Bin\\x1b[31m\\u202e.md: skipped"


def test_a_warning_the_cli_prints_shows_escapes_on_one_line(capsys):
    from brain.cli_support import warn

    warn(f"skipped Bin\x1b[31m{RLO}.md\nbrain: WARNING: forged")
    assert capsys.readouterr().err == "brain: WARNING: skipped Bin\\x1b[31m\\u202e.md\\nbrain: WARNING: forged\n"


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("stderr", [subprocess.PIPE, subprocess.STDOUT])
def test_a_reader_that_closes_the_pipe_early_ends_brain_quietly(tmp_path, stderr):
    root = tmp_path / "vault"
    # more than a pipe holds (64 KB): brain is still writing when the reader goes
    write(root, "big.md", "# big\n\n" + "".join(f"line {i} of a long note\n" for i in range(20_000)))
    write(root, "small.md", "# small\n\nA line.\n")
    index_vault(root, progress=False)
    env = brain_env()
    env.pop("PYTHONUNBUFFERED", None)  # unbuffered, Python drops what a closed pipe refused without a word
    # read a little and closed, brain still writing; closed before brain wrote a line, which it
    # then still buffered at exit (a small note)
    for args, reads in (
        (["note", "big", "--max-chars", "1000000"], True),
        (["note", "big", "--max-chars", "1000000", "--json"], True),
        (["note", "small"], False),
    ):
        proc = subprocess.Popen(
            [sys.executable, str(LAUNCHER), *args, "--vault", str(root)], env=env, stdout=subprocess.PIPE, stderr=stderr
        )
        assert proc.stdout is not None
        if reads:
            assert os.read(proc.stdout.fileno(), 100)
        proc.stdout.close()
        said = proc.stderr.read().decode() if proc.stderr else ""
        assert proc.wait(timeout=60) == 0, said
        assert said == ""


CONTROL = ("\x1b", "\x07", "\x9b", "\r")
ODD = "y\x1b[31mred"  # a folder a user can make: `mkdir $'y\e[31mred'`


def test_a_backup_names_its_folder_as_it_is(disguised_vault, tmp_path):
    """`brain backup '/tmp/y'$'\\e''[31mred'` said "backed up to /tmp/yred", a folder that does
    not exist: the escape sequence was dropped, not shown."""
    dest = tmp_path / ODD
    out = CliRunner().invoke(cli, ["backup", str(dest), "--vault", str(disguised_vault)], color=True)
    assert out.exit_code == 0, out.output
    assert out.output.startswith(f"backed up to {tmp_path}/y\\x1b[31mred: "), out.output
    assert dest.is_dir() and not any(c in out.output for c in CONTROL)


def test_hook_install_and_uninstall_name_the_settings_file_as_it_is(tmp_path):
    """The settings file's name went out raw: a line break in it split the message's line, and
    an escape sequence reached the terminal (ESC[2J cleared the screen)."""
    settings = tmp_path / "a\nb\x1b[2Jc" / "settings.json"
    shown = f"{tmp_path}/a\\nb\\x1b[2Jc/settings.json"
    out = CliRunner().invoke(cli, ["hook", "install", "--settings", str(settings)], color=True)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == f"added a Stop hook to {shown}:", out.output
    assert settings.exists() and not any(c in out.output for c in CONTROL)
    out = CliRunner().invoke(cli, ["hook", "install", "--settings", str(settings)], color=True)
    assert out.stdout.startswith(f"Stop hook already installed in {shown}: "), out.output
    out = CliRunner().invoke(cli, ["hook", "uninstall", "--settings", str(settings)], color=True)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == f"removed the Stop hook from {shown}:", out.output
    assert not any(c in out.output for c in CONTROL)


def test_mcp_install_and_uninstall_name_the_config_file_as_it_is(tmp_path, toy_vault):
    """`brain mcp install` printed its config file's name raw, as hook install did: a line break
    split the message's line, and an escape sequence reached the terminal."""
    config_file = tmp_path / "a\nb\x1b[2Jc" / "mcp.json"
    shown = f"{tmp_path}/a\\nb\\x1b[2Jc/mcp.json"
    args = ["mcp", "install", "--vault", str(toy_vault), "--config", str(config_file)]
    out = CliRunner().invoke(cli, args, color=True)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == f"added the MCP server 'brain' to {shown}:", out.output
    assert config_file.exists() and not any(c in out.output for c in CONTROL)
    out = CliRunner().invoke(cli, args, color=True)
    assert out.stdout.startswith(f"already installed in {shown}: "), out.output
    out = CliRunner().invoke(cli, ["mcp", "uninstall", "--config", str(config_file)], color=True)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[0] == f"removed the MCP server 'brain' from {shown}:", out.output
    assert not any(c in out.output for c in CONTROL)


def test_ask_and_note_show_a_name_s_tab_and_escape_sequence_as_escapes(tmp_path, monkeypatch):
    """A note `Tab<TAB>here<ESC>[31mred.md` was listed as `Tab\\tthererred.md`: the tab shown,
    the ESC dropped, a file that does not exist."""
    import brain.cli

    root = tmp_path / "vault"
    write(root, "Tab\there\x1b[31mred.md", "# Tab\there\x1b[31mred\n\nThe platypus lays eggs.\n")
    index_vault(root, progress=False)
    out = CliRunner().invoke(cli, ["ask", "--no-server", "--vault", str(root), "platypus eggs"], color=True)
    assert out.exit_code == 0, out.output
    assert "Tab\\there\\x1b[31mred.md › Tab here\\x1b[31mred" in out.output, out.output
    assert not any(c in out.output for c in CONTROL)
    monkeypatch.setattr(brain.cli, "_stdout_is_terminal", lambda: True)
    out = CliRunner().invoke(cli, ["note", "--vault", str(root), "Tab\there\x1b[31mred"], color=True)
    assert out.exit_code == 0, out.output
    assert out.output.startswith("Tab here\\x1b[31mred  (Tab\\there\\x1b[31mred.md)\n"), out.output
    assert "# Tab\there\\x1b[31mred\n" in out.output  # the note's own text keeps its tab
    out = CliRunner().invoke(cli, ["ask", "--no-server", "--json", "--vault", str(root), "platypus eggs"])
    assert json.loads(out.output)["results"][0]["path"] == "Tab\there\x1b[31mred.md"  # --json: exactly
