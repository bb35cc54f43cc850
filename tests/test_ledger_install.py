"""`brain hook install/uninstall`: merge into settings.json without losing anything."""

from __future__ import annotations

import concurrent.futures
import json
import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from ledger_helpers import Transcript, brain_command, hook_payload

from brain.cli import cli
from brain.errors import ConfigError
from brain.ledger import install as setup
from brain.mcp import install as mcp_setup

CMD = "/opt/brain/bin/brain hook stop"

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def _settings(tmp_path: Path, data: dict | None = USER_SETTINGS) -> Path:
    path = tmp_path / ".claude" / "settings.json"
    if data is not None:
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(data, indent=2))
    return path


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob("settings.json.bak-*"))


def test_install_into_a_fresh_project(tmp_path):
    path = _settings(tmp_path, None)
    change = setup.install(path, CMD)
    assert change.changed and change.backup is None
    assert "added a Stop hook" in change.message and CMD in change.message
    assert json.loads(path.read_text()) == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": CMD}]}]}}


def test_install_merges_and_keeps_everything_else(tmp_path):
    path = _settings(tmp_path)
    original = path.read_text()
    change = setup.install(path, CMD)
    data = json.loads(path.read_text())
    assert data["model"] == "opus" and data["permissions"] == USER_SETTINGS["permissions"]
    assert data["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert data["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "notify-send done"}]},
        {"hooks": [{"type": "command", "command": CMD}]},
    ]
    (backup,) = _backups(path)
    assert backup.read_text() == original and change.backup == backup
    assert str(backup) in change.message


def test_install_is_idempotent(tmp_path):
    path = _settings(tmp_path)
    setup.install(path, CMD)
    after_first = path.read_text()
    change = setup.install(path, CMD)
    assert not change.changed and "already installed" in change.message
    assert path.read_text() == after_first
    assert len(_backups(path)) == 1


def test_install_updates_a_stale_entry_instead_of_adding_one(tmp_path):
    path = _settings(tmp_path)
    setup.install(path, "/old/venv/bin/brain hook stop")
    change = setup.install(path, CMD)
    assert change.changed and "updated" in change.message and "/old/venv/bin/brain" in change.message
    commands = [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ["notify-send done", CMD]


def test_install_names_every_entry_it_replaces(tmp_path):
    # Two of brain's entries (installs with two homes): install keeps one and dropped the other
    # without a word.
    path = tmp_path / "settings.json"
    old = ["/old/venv/bin/brain hook stop", "BRAIN_HOME=/elsewhere /old2/bin/brain hook stop"]
    groups = [{"hooks": [{"type": "command", "command": c}]} for c in old]
    path.write_text(json.dumps({"hooks": {"Stop": groups}}), encoding="utf-8")
    change = setup.install(path, CMD)
    assert change.message.splitlines()[1:3] == [f"  - {old[0]}", f"  - {old[1]}"]
    commands = [h["command"] for g in json.loads(path.read_text())["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == [CMD]


def test_uninstall_removes_only_ours(tmp_path):
    path = _settings(tmp_path)
    setup.install(path, CMD)
    change = setup.uninstall(path)
    assert change.changed and CMD in change.message
    assert json.loads(path.read_text()) == USER_SETTINGS
    again = setup.uninstall(path)
    assert not again.changed and "not installed" in again.message


def test_uninstall_leaves_no_empty_containers(tmp_path):
    path = _settings(tmp_path, {"model": "opus"})
    setup.install(path, CMD)
    setup.uninstall(path)
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_uninstall_without_a_file(tmp_path):
    change = setup.uninstall(tmp_path / "nope.json")
    assert not change.changed


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_a_broken_settings_file_is_left_alone(tmp_path, text):
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ConfigError):
        setup.install(path, CMD)
    assert path.read_text() == text and not _backups(path)


@pytest.mark.parametrize(
    "text, why",
    [
        ('{"model": "opus", "model": "sonnet"}', 'the key "model" twice'),
        ('{"env": {"A": "1", "A": "2"}}', 'the key "A" twice'),
        ('{"cleanupPeriodDays": 1e400}', "too large to keep"),
        ('{"x": NaN}', "NaN, which is not JSON"),
        ('{"x": [-Infinity]}', "-Infinity, which is not JSON"),
    ],
)
def test_settings_the_rewrite_would_change_are_refused_in_one_line(tmp_path, text, why):
    # json.loads takes all of these; written back, a duplicate key loses its first value and
    # 1e400 becomes Infinity, which Claude Code cannot read.
    path = tmp_path / "settings.json"
    path.write_text(text)
    for command in (["hook", "install"], ["hook", "uninstall"], ["mcp", "install", "--vault", str(tmp_path)]):
        option = "--config" if command[0] == "mcp" else "--settings"
        result = CliRunner().invoke(cli, [*command, option, str(path)])
        assert result.exit_code == 1, result.output
        assert result.output.count("\n") == 1 and why in result.output and "Traceback" not in result.output
    assert path.read_text() == text and not list(tmp_path.glob("*.bak-*"))


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "model": "opus",\n  "hooks": {\n    "PreToolUse": []\n  }\n}',  # Claude Code's: no last newline
        '{\n    "model": "opus",\n    "env": {\n        "A": "é"\n    }\n}\n',
        '{\n\t"model": "opus"\n}\n',
        '{"model":"opus","n":[1,2]}',
        '{"model": "opus", "n": [1, 2]}\n',
        # came back as {}, and as "é", 1.5 and {"a": 1}: the backup's bytes are put back now
        "",
        '{\n  "name": "caf\\u00e9",\n  "ratio": 1.50,\n  "x": {"a":1}\n}\n',
    ],
    ids=["claude-code", "four-spaces", "tab", "compact", "one-line", "empty", "escapes"],
)
def test_install_then_uninstall_gives_back_the_same_bytes(tmp_path, text):
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    setup.install(path, CMD)
    setup.install(path, "BRAIN_VAULT=/v /opt/brain/bin/brain hook prompt", "prompt")
    setup.uninstall(path)
    assert path.read_text(encoding="utf-8") == text and not list(tmp_path.glob("settings.json.bak-*"))


@pytest.mark.parametrize(
    "raw",
    [
        b'{\r\n  "model": "opus",\r\n  "env": {\r\n    "A": "1\\n2"\r\n  }\r\n}\r\n',
        b'\xef\xbb\xbf{\n  "model": "opus"\n}\n',
        b'\xef\xbb\xbf{\r\n    "model": "opus"\r\n}',
    ],
    ids=["crlf", "bom", "bom-crlf"],
)
@pytest.mark.parametrize("kind", ["hook", "mcp"])
def test_a_windows_editors_crlf_and_bom_are_kept(tmp_path, raw, kind):
    # A file with CRLF line endings came back with LF ones, every line of it changed, and one
    # starting with a BOM was refused as "not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig) …)".
    path = tmp_path / "settings.json"
    path.write_bytes(raw)
    if kind == "hook":
        setup.install_hooks(path, {"stop": CMD, "prompt": PROMPT_CMD})
    else:
        mcp_setup.install(path, {"type": "stdio", "command": "/opt/brain/bin/brain", "args": ["mcp", "--vault", "/v"]})
    installed = path.read_bytes()
    assert installed.startswith(b"\xef\xbb\xbf") == raw.startswith(b"\xef\xbb\xbf")
    if b"\r\n" in raw:
        assert installed.count(b"\n") == installed.count(b"\r\n") > raw.count(b"\r\n")
    else:
        assert b"\r" not in installed
    assert json.loads(installed.decode("utf-8-sig"))["model"] == "opus"
    (setup if kind == "hook" else mcp_setup).uninstall(path)
    assert path.read_bytes() == raw


@pytest.mark.parametrize(
    "text, spaced",
    [('{"model": "opus"}', '"opus", "hooks": {"Stop": [{"hooks": '), ('{"model":"opus"}', '"opus","hooks":{')],
)
def test_a_one_line_file_of_one_key_is_spaced_as_its_colon(tmp_path, text, spaced):
    # {"model": "opus"} became {"model": "opus","hooks": {"Stop": [{"hooks": …: no comma to go by, none spaced
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    setup.install(path, CMD)
    assert spaced in path.read_text(encoding="utf-8") and "\n" not in path.read_text(encoding="utf-8")


def test_settings_nested_too_deeply_are_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    before = path.read_bytes()
    for command in (
        ["hook", "install", "--settings"],
        ["hook", "uninstall", "--settings"],
        ["mcp", "uninstall", "--config"],
    ):
        result = CliRunner().invoke(cli, [*command, str(path)])
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert "too deeply" in result.output
    assert path.read_bytes() == before and list(tmp_path.iterdir()) == [path]


def test_a_lone_surrogate_escape_is_written_back_as_it_was(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text('{"statusLine": "\\ud83d half \\ud83d\\ude00 whole", "model": "opus"}')
    before = json.loads(path.read_text())
    setup.install(path, CMD)
    assert '"\\ud83d half' in path.read_text()  # escaped again: a raw surrogate is not UTF-8
    setup.uninstall(path)
    assert json.loads(path.read_text()) == before


@pytest.mark.parametrize(
    "command",
    [
        "cd ~/proj && brain hook stop",
        "echo brain hook stop",
        "notify-send done; /usr/bin/brain hook stop",
        "/usr/bin/python3 tidy.py && python3 -m brain hook stop",
        "brain hook stop # and mine",
    ],
)
def test_a_users_command_that_only_ends_like_ours_is_theirs(tmp_path, command):
    path = _settings(tmp_path, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}})
    before = path.read_bytes()
    assert not setup.uninstall(path).changed and path.read_bytes() == before
    setup.install(path, CMD)
    assert _commands(path, "Stop") == [command, CMD]
    setup.uninstall(path)
    assert _commands(path, "Stop") == [command]


def test_concurrent_installs_each_keep_the_others_change(tmp_path, monkeypatch):
    """Ten installs at once (threads that read, wait, then write): every change is kept."""
    path = _settings(tmp_path, {"model": "opus"})
    mcp_path = tmp_path / ".mcp.json"
    mcp_path.write_text('{"mcpServers": {"mine": {"command": "x"}}}')
    load = setup.load_settings

    def slow_load(p: Path):
        data = load(p)
        time.sleep(0.05)  # the window in which another install reads the same file
        return data

    monkeypatch.setattr(setup, "load_settings", slow_load)
    monkeypatch.setattr(mcp_setup, "load_settings", slow_load)
    jobs = [lambda: setup.install(path, "/opt/brain/bin/brain hook stop", "stop")] * 5
    jobs += [lambda: setup.install(path, "BRAIN_VAULT=/v /opt/brain/bin/brain hook prompt", "prompt")] * 5
    jobs += [lambda i=i: mcp_setup.install(mcp_path, {"command": f"s{i}"}, f"s{i}") for i in range(5)]
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()
    data = json.loads(path.read_text())
    assert data["model"] == "opus"
    assert len(_commands(path, "Stop")) == 1 and len(_commands(path, "UserPromptSubmit")) == 1
    servers = json.loads(mcp_path.read_text())["mcpServers"]
    assert sorted(servers) == ["mine", "s0", "s1", "s2", "s3", "s4"]


def test_an_install_that_waited_for_an_uninstall_removing_the_folder_makes_it_again(tmp_path, monkeypatch):
    # The uninstall it waited for removed the folder brain had made: the lock it then held was on
    # a folder gone, and the file it wrote went in a folder it made again without knowing, which
    # its own uninstall then left.
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()  # there when it looked
    lock, removed = setup._lock, []

    def removed_while_waiting(folder):
        fd = lock(folder)
        if not removed:
            removed.append(folder.rmdir())
        return fd

    monkeypatch.setattr(setup, "_lock", removed_while_waiting)
    setup.install(path, CMD)
    monkeypatch.setattr(setup, "_lock", lock)
    setup.uninstall(path)
    assert not path.parent.exists()


def test_settings_path(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert setup.settings_path(cwd=tmp_path) == tmp_path / ".claude" / "settings.json"
    assert setup.settings_path(user=True) == tmp_path / "home" / ".claude" / "settings.json"
    assert setup.settings_path(settings=tmp_path / "x.json") == tmp_path / "x.json"


def _fake_env(tmp_path: Path, monkeypatch, *, with_script: bool) -> Path:
    bindir = tmp_path / "my venv" / "bin"  # a space, as in many real home folders
    bindir.mkdir(parents=True)
    python = bindir / "python"
    python.write_text("")
    if with_script:
        script = bindir / "brain"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setattr(setup.shutil, "which", lambda name: None)
    return bindir


def test_hook_command_is_absolute_and_quoted(tmp_path, monkeypatch):
    bindir = _fake_env(tmp_path, monkeypatch, with_script=True)
    monkeypatch.delenv("BRAIN_DB", raising=False)
    monkeypatch.delenv("BRAIN_HOME", raising=False)
    command = setup.hook_command()
    assert shlex.split(command) == [str(bindir / "brain"), "hook", "stop"]
    assert setup.is_ours(command)


def test_hook_command_falls_back_to_the_interpreter(tmp_path, monkeypatch):
    bindir = _fake_env(tmp_path, monkeypatch, with_script=False)
    monkeypatch.delenv("BRAIN_DB", raising=False)
    monkeypatch.delenv("BRAIN_HOME", raising=False)
    command = setup.hook_command()
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    assert shlex.split(command) == [str(bindir / "python"), *safe, "-m", "brain", "hook", "stop"]
    assert setup.is_ours(command)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is 3.11+")
def test_the_interpreter_fallback_never_runs_a_brain_package_in_the_working_directory(tmp_path, monkeypatch):
    """Claude Code runs the hook in the user's project; a `brain` package there (another
    version's clone, a downloaded project) must not be what `python -m brain` imports."""
    real_python = sys.executable
    bindir = _fake_env(tmp_path, monkeypatch, with_script=False)  # no brain script: the fallback
    project = tmp_path / "project"
    (project / "brain").mkdir(parents=True)
    marker = tmp_path / "ran the impostor"
    impostor = f"open({str(marker)!r}, 'w').close()\n"
    (project / "brain" / "__init__.py").write_text(impostor)
    (project / "brain" / "__main__.py").write_text(impostor)
    words = setup.brain_executable()
    assert words[0] == str(bindir / "python") and words[-2:] == ["-m", "brain"]
    words[0] = real_python  # the fake environment's python is an empty file
    done = subprocess.run([*words, "--version"], cwd=project, capture_output=True, text=True, timeout=60)
    assert not marker.exists()
    assert done.returncode == 0 and "brain" in done.stdout.lower()


def test_hook_command_carries_brain_home_and_db(tmp_path, monkeypatch):
    _fake_env(tmp_path, monkeypatch, with_script=True)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "brain home"))
    monkeypatch.setenv("BRAIN_DB", str(tmp_path / "db dir" / "b.db"))
    words = shlex.split(setup.hook_command())
    assert words[0] == f"BRAIN_HOME={tmp_path / 'brain home'}"
    assert words[1] == f"BRAIN_DB={tmp_path / 'db dir' / 'b.db'}"
    assert words[-2:] == ["hook", "stop"]


@pytest.mark.slow
def test_installed_command_runs_from_a_bare_shell(tmp_path, monkeypatch):
    """What Claude Code does: run the written command through a shell, no venv, short PATH."""
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BRAIN_DB", raising=False)
    cmd, _ = brain_command()
    if cmd[0] == sys.executable:
        pytest.skip("brain is not installed as a script")
    path = tmp_path / "settings.json"
    setup.install(path)
    command = json.loads(path.read_text())["hooks"]["Stop"][0]["hooks"][0]["command"]
    t = Transcript(tmp_path / "t.jsonl")
    t.prompt("from a bare shell")
    t.text("ok")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no venv, no BRAIN_* variables
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(hook_payload(t.write())).encode(),
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and proc.stdout == b""
    conn = sqlite3.connect(tmp_path / "home" / "brain.db")
    assert conn.execute("SELECT ask FROM turns").fetchall() == [("from a bare shell",)]
    conn.close()
    assert os.environ["BRAIN_HOME"] in command  # baked in, since the installer had it


# ----- the prompt hook (UserPromptSubmit) beside the Stop hook ------------------------------------

PROMPT_CMD = "BRAIN_VAULT=/home/me/notes /opt/brain/bin/brain hook prompt"

SETTINGS_WITH_HOOKS = {
    "model": "opus",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/remind-me-of-tests.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def _commands(path: Path, event: str) -> list[str]:
    return [h["command"] for g in json.loads(path.read_text())["hooks"].get(event, []) for h in g["hooks"]]


def test_install_prompt_merges_beside_other_hooks(tmp_path):
    path = _settings(tmp_path, SETTINGS_WITH_HOOKS)
    original = path.read_text()
    change = setup.install(path, PROMPT_CMD, "prompt")
    assert change.changed and "added a prompt hook" in change.message
    data = json.loads(path.read_text())
    assert data["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": "~/bin/remind-me-of-tests.sh"}]},
        {"hooks": [{"type": "command", "command": PROMPT_CMD, "timeout": setup.PROMPT_TIMEOUT}]},
    ]
    for event in ("PreToolUse", "Stop"):
        assert data["hooks"][event] == SETTINGS_WITH_HOOKS["hooks"][event]
    assert data["model"] == "opus"
    (backup,) = _backups(path)
    assert backup.read_text() == original


def test_install_prompt_is_idempotent_and_updates_a_stale_vault(tmp_path):
    path = _settings(tmp_path, SETTINGS_WITH_HOOKS)
    setup.install(path, PROMPT_CMD, "prompt")
    after = path.read_text()
    again = setup.install(path, PROMPT_CMD, "prompt")
    assert not again.changed and "already installed" in again.message and path.read_text() == after
    moved = PROMPT_CMD.replace("/home/me/notes", "/home/me/vault")
    change = setup.install(path, moved, "prompt")
    assert change.changed and "updated the prompt hook" in change.message
    assert _commands(path, "UserPromptSubmit") == ["~/bin/remind-me-of-tests.sh", moved]


def test_install_prompt_keeps_a_timeout_the_user_raised(tmp_path):
    path = _settings(tmp_path, {})
    setup.install(path, "BRAIN_VAULT=/v /opt/brain/bin/brain hook prompt", "prompt")
    data = json.loads(path.read_text())
    data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["timeout"] = 30  # a slow machine
    path.write_text(json.dumps(data))
    again = setup.install(path, "BRAIN_VAULT=/v /opt/brain/bin/brain hook prompt", "prompt")
    assert not again.changed and "already installed" in again.message
    setup.install(path, "BRAIN_VAULT=/w /opt/brain/bin/brain hook prompt", "prompt")  # another vault
    hook = json.loads(path.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert hook["timeout"] == 30 and hook["command"].startswith("BRAIN_VAULT=/w")


def test_stop_and_prompt_hooks_live_side_by_side(tmp_path):
    path = _settings(tmp_path, SETTINGS_WITH_HOOKS)
    setup.install(path, CMD)
    setup.install(path, PROMPT_CMD, "prompt")
    assert not setup.install(path, CMD).changed  # the prompt hook is not mistaken for the Stop hook
    assert _commands(path, "Stop") == ["notify-send done", CMD]
    assert _commands(path, "UserPromptSubmit") == ["~/bin/remind-me-of-tests.sh", PROMPT_CMD]
    only_prompt = setup.uninstall(path, ("prompt",))
    assert only_prompt.changed and PROMPT_CMD in only_prompt.message and CMD not in only_prompt.message
    assert _commands(path, "UserPromptSubmit") == ["~/bin/remind-me-of-tests.sh"]
    assert _commands(path, "Stop") == ["notify-send done", CMD]


def test_uninstall_removes_both_kinds_and_only_them(tmp_path):
    path = _settings(tmp_path, SETTINGS_WITH_HOOKS)
    setup.install(path, CMD)
    setup.install(path, PROMPT_CMD, "prompt")
    change = setup.uninstall(path)
    assert change.changed and CMD in change.message and PROMPT_CMD in change.message
    assert json.loads(path.read_text()) == SETTINGS_WITH_HOOKS
    assert not setup.uninstall(path).changed


def test_uninstall_leaves_no_empty_prompt_event(tmp_path):
    path = _settings(tmp_path, {"model": "opus"})
    setup.install(path, PROMPT_CMD, "prompt")
    setup.uninstall(path)
    assert json.loads(path.read_text()) == {"model": "opus"}


@pytest.mark.parametrize(
    "command, kind",
    [
        ("/opt/brain/bin/brain hook prompt", "prompt"),
        ("BRAIN_VAULT='/my notes' '/my venv/bin/brain' hook prompt", "prompt"),
        ("/usr/bin/python3 -m brain hook prompt", "prompt"),
        ("/opt/brain/bin/brain hook stop", "stop"),
    ],
)
def test_is_ours_tells_the_kinds_apart(command, kind):
    other = "stop" if kind == "prompt" else "prompt"
    assert setup.is_ours(command, kind) and not setup.is_ours(command, other)
    assert not setup.is_ours(command.replace("/brain", "/mybrain").replace("m brain", "m mybrain"), kind)


def test_prompt_hook_command_pins_the_vault(tmp_path, monkeypatch):
    bindir = _fake_env(tmp_path, monkeypatch, with_script=True)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "brain home"))
    monkeypatch.delenv("BRAIN_DB", raising=False)
    vault = tmp_path / "my notes"
    words = shlex.split(setup.hook_command("prompt", vault))
    assert words == [
        f"BRAIN_HOME={tmp_path / 'brain home'}",
        f"BRAIN_VAULT={vault}",
        str(bindir / "brain"),
        "hook",
        "prompt",
    ]
    assert setup.is_ours(setup.hook_command("prompt", vault), "prompt")


def test_cli_install_prompt(tmp_path, toy_vault):
    from click.testing import CliRunner

    from brain.cli import cli

    path = _settings(tmp_path, SETTINGS_WITH_HOOKS)
    result = CliRunner().invoke(
        cli, ["hook", "install", "--prompt", "--vault", str(toy_vault), "--settings", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert "added a prompt hook" in result.stdout
    assert "no index yet" in result.stderr and "brain serve --vault" in result.stderr
    (command,) = [c for c in _commands(path, "UserPromptSubmit") if setup.is_ours(c, "prompt")]
    assert f"BRAIN_VAULT={shlex.quote(str(toy_vault.resolve()))}" in command
    assert _commands(path, "Stop") == ["notify-send done"]  # --prompt alone leaves the Stop hook out

    both = CliRunner().invoke(
        cli, ["hook", "install", "--stop", "--prompt", "--vault", str(toy_vault), "--settings", str(path)]
    )
    assert both.exit_code == 0 and "added a Stop hook" in both.stdout and "prompt hook already installed" in both.stdout

    dry = CliRunner().invoke(
        cli,
        ["hook", "install", "--prompt", "--vault", str(toy_vault), "--dry-run", "--settings", str(tmp_path / "x.json")],
    )
    assert dry.exit_code == 0 and "UserPromptSubmit: " in dry.stdout and not (tmp_path / "x.json").exists()

    result = CliRunner().invoke(cli, ["hook", "uninstall", "--settings", str(path)])
    assert result.exit_code == 0 and json.loads(path.read_text()) == SETTINGS_WITH_HOOKS


def test_cli_install_both_hooks_is_one_edit_with_one_backup(tmp_path, toy_vault):
    """`--stop --prompt` was two installs in a row: a second backup held the first one's half-done
    file, and a settings file that did not exist got a "backup" of a state it never had."""
    args = ["hook", "install", "--stop", "--prompt", "--vault", str(toy_vault), "--settings"]
    fresh = tmp_path / "new" / "settings.json"
    result = CliRunner().invoke(cli, [*args, str(fresh)])
    assert result.exit_code == 0, result.output
    assert "added a Stop hook" in result.stdout and "added a prompt hook" in result.stdout
    assert "backup:" not in result.stdout and [p.name for p in fresh.parent.iterdir()] == ["settings.json"]

    path = _settings(tmp_path, SETTINGS_WITH_HOOKS)
    before = path.read_bytes()
    result = CliRunner().invoke(cli, [*args, str(path)])
    assert result.exit_code == 0, result.output
    backups = sorted(path.parent.glob("settings.json.bak-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == before
    lines = result.stdout.splitlines()
    assert lines[-1] == f"backup: {backups[0]}" and sum(line.startswith("backup:") for line in lines) == 1
    assert _commands(path, "Stop")[-1].endswith("hook stop") and any(
        setup.is_ours(c, "prompt") for c in _commands(path, "UserPromptSubmit")
    )


def test_cli_install_prompt_advice_quotes_a_vault_with_a_space(tmp_path):
    vault = tmp_path / "Obsidian Vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    path = tmp_path / "settings.json"
    result = CliRunner().invoke(cli, ["hook", "install", "--prompt", "--vault", str(vault), "--settings", str(path)])
    assert result.exit_code == 0, result.output
    quoted = shlex.quote(str(vault.resolve()))
    assert f"`brain index --vault {quoted}`" in result.stderr
    assert f"`brain serve --vault {quoted} --detach`" in result.stderr  # pasted, it runs as said


def test_cli_install_prompt_needs_a_vault(tmp_path, toy_vault):
    from click.testing import CliRunner

    from brain.cli import cli

    path = tmp_path / "settings.json"
    result = CliRunner().invoke(cli, ["hook", "install", "--prompt", "--settings", str(path)])
    assert result.exit_code == 1 and result.output.count("\n") == 1 and "BRAIN_VAULT" in result.output
    result = CliRunner().invoke(cli, ["hook", "install", "--vault", str(toy_vault), "--settings", str(path)])
    assert result.exit_code == 2 and "--prompt" in result.output
    assert not path.exists()


@pytest.mark.slow
def test_installed_prompt_command_runs_from_a_bare_shell(tmp_path, monkeypatch, toy_vault):
    """The written command finds its brain home and vault with no venv and no BRAIN_* variables."""
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BRAIN_DB", raising=False)
    cmd, _ = brain_command()
    if cmd[0] == sys.executable:
        pytest.skip("brain is not installed as a script")
    path = tmp_path / "settings.json"
    setup.install(path, setup.hook_command("prompt", toy_vault.resolve()), "prompt")
    command = json.loads(path.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = {"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "how should agent memory work"}
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload).encode(),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""  # no server: nothing added
    conn = sqlite3.connect(tmp_path / "home" / "brain.db")
    rows = conn.execute("SELECT vault, reason FROM recalls").fetchall()
    conn.close()
    assert rows == [(str(toy_vault.resolve()), "no-server")]


@pytest.mark.parametrize(
    "args",
    [["hook", "install"], ["hook", "uninstall"], ["mcp", "uninstall"], ["hook", "install", "--settings", "s.json"]],
)
def test_a_deleted_working_directory_is_one_line(tmp_path, monkeypatch, args):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # the project folder removed under the shell
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "working directory no longer exists" in result.output


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_user_files_brain_creates_are_the_users_alone_and_a_projects_shared(tmp_path, monkeypatch, umask_022):
    """~/.claude.json and ~/.claude/settings.json were created 0644 (the umask's), and Claude Code
    later keeps its OAuth and session state in ~/.claude.json. A project's files are committed
    and shared: they keep the umask's mode, and an existing file keeps its own."""
    home, project, vault = tmp_path / "home", tmp_path / "project", tmp_path / "vault"
    for folder in (home, project, vault):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    (vault / "a.md").write_text("# A\n")
    for args in (["hook", "install", "--user"], ["mcp", "install", "--user", "--vault", str(vault)],
                 ["hook", "install"], ["mcp", "install", "--vault", str(vault)]):  # fmt: skip
        out = CliRunner().invoke(cli, args)
        assert out.exit_code == 0, out.output
    assert stat.S_IMODE((home / ".claude" / "settings.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((project / ".claude" / "settings.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((project / ".mcp.json").stat().st_mode) == 0o644

    assert stat.S_IMODE((project / ".claude").stat().st_mode) == 0o755  # a project's: the umask's

    (home / ".claude.json").unlink()
    (home / ".claude.json").write_text("{}")  # the user's own, 0644: kept so
    out = CliRunner().invoke(cli, ["mcp", "install", "--user", "--vault", str(vault)])
    assert out.exit_code == 0, out.output
    assert "brain" in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o644


@pytest.mark.parametrize("args", [["hook", "install", "--user"], ["hook", "install", "--prompt", "--user"]])
def test_the_claude_folder_brain_makes_is_the_users_alone(tmp_path, monkeypatch, umask_022, args):
    """~/.claude/, where Claude Code keeps its settings and every session's transcript, was made
    by brain's user-scope install with the umask's mode (0755): readable by every user of the
    machine. Made by brain it is 0700; one already there keeps its own mode."""
    home, vault = tmp_path / "home", tmp_path / "vault"
    home.mkdir()
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    args = [*args, "--vault", str(vault)] if "--prompt" in args else args
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert stat.S_IMODE((home / ".claude").stat().st_mode) == 0o700
    assert (home / ".claude" / "settings.json").is_file()

    shutil.rmtree(home / ".claude")
    (home / ".claude").mkdir(mode=0o755)  # the user's own: left as it is
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    assert stat.S_IMODE((home / ".claude").stat().st_mode) == 0o755


@pytest.mark.parametrize(
    "args",
    [
        ["hook", "install", "--user", "--settings"],
        ["hook", "uninstall", "--user", "--settings"],
        ["mcp", "install", "--user", "--config"],
        ["mcp", "uninstall", "--user", "--config"],
    ],
)
def test_user_and_an_explicit_file_together_are_a_usage_error(toy_vault, tmp_path, monkeypatch, args):
    # --settings won and --user was dropped in silence: "added a Stop hook to s.json", the
    # user's ~/.claude/settings.json untouched though --user asked for it.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    extra = ["--vault", str(toy_vault)] if args[:2] == ["mcp", "install"] else []
    result = CliRunner().invoke(cli, [*args, str(tmp_path / "s.json"), *extra])
    assert result.exit_code == 2, result.output
    assert f"--user and {args[3]} each name the file to edit: give one" in result.output
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "home").exists()


STOP_IN = "BRAIN_HOME={} /opt/brain/bin/brain hook stop".format
PROMPT_IN = "BRAIN_HOME={} BRAIN_VAULT=/home/me/notes /opt/brain/bin/brain hook prompt".format


@pytest.mark.parametrize(
    "first, then",
    [
        ({"prompt": PROMPT_IN("/h1")}, {"stop": STOP_IN("/h2")}),
        ({"stop": STOP_IN("/h1")}, {"prompt": PROMPT_IN("/h2")}),
        ({"prompt": PROMPT_IN("/h1")}, {"stop": "/opt/brain/bin/brain hook stop"}),  # the default home
        ({"stop": "BRAIN_DB=/d/brain.db /opt/brain/bin/brain hook stop"}, {"prompt": PROMPT_IN("/h1")}),
    ],
)
def test_a_hook_recording_to_another_database_than_the_other_kind_is_refused(tmp_path, first, then):
    # It was accepted silently: the turns and the recalls went to two databases, and `brain
    # recalls`' read and edited columns, which join them, stayed 0.
    path = _settings(tmp_path)
    setup.install_hooks(path, first)
    before = path.read_bytes()
    with pytest.raises(ConfigError) as refused:
        setup.install_hooks(path, then)
    message = str(refused.value)
    assert "\n" not in message and "two databases" in message and "the file is unchanged" in message
    assert "brain hook install --stop --prompt --vault /home/me/notes" in message
    assert path.read_bytes() == before
    # both at once, from one shell, replace the other: accepted
    both = setup.install_hooks(path, {"stop": STOP_IN("/h3"), "prompt": PROMPT_IN("/h3")})
    assert both.changed and setup.mismatched(json.loads(path.read_text()), {"stop": STOP_IN("/h3")}) is None


def test_hooks_recording_to_one_database_are_accepted_however_it_is_named(tmp_path):
    path = _settings(tmp_path)
    setup.install_hooks(path, {"prompt": PROMPT_IN("/h1")})
    assert setup.install_hooks(path, {"stop": STOP_IN("/h1/")}).changed  # the same folder
    assert setup.install_hooks(path, {"prompt": PROMPT_IN("/h1").replace("HOME=/h1", "DB=/h1/brain.db")}).changed
    assert len(_commands(path, "Stop")) == 2 and len(_commands(path, "UserPromptSubmit")) == 1


def test_cli_install_notes_a_hook_of_the_other_scope_recording_elsewhere(tmp_path, monkeypatch, toy_vault):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "h1"))
    assert CliRunner().invoke(cli, ["hook", "install", "--user"]).exit_code == 0
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "h2"))
    result = CliRunner().invoke(cli, ["hook", "install", "--prompt", "--vault", str(toy_vault)])
    assert result.exit_code == 0, result.output  # another file: said, not refused
    assert f"note: the Stop hook in {home / '.claude' / 'settings.json'} runs with BRAIN_HOME={tmp_path / 'h1'}" in (
        result.stderr
    )
    assert "cannot join rows in two databases" in result.stderr
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "h1"))
    same = CliRunner().invoke(cli, ["hook", "install", "--prompt", "--vault", str(toy_vault)])
    assert same.exit_code == 0 and "two databases" not in same.stderr


@pytest.mark.parametrize(
    "text, hint",
    [
        ('{\n  // mine\n  "model": "opus"\n}\n', "a comment there"),
        ('{"a": 1 /* x */}', "a comment there"),
        ('{\n  "model": "opus",\n}\n', "a comma before the end there"),
        ('{"permissions": {"allow": ["Bash(ls:*)",]}}', "a comma before the end there"),
    ],
)
def test_comments_and_trailing_commas_are_named_and_the_file_left_alone(tmp_path, text, hint):
    # "Expecting property name enclosed in double quotes" alone did not say what was wrong with
    # a settings file an editor that takes JSONC had let through.
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        setup.install(path, CMD)
    assert f"{hint}, and JSON allows none; fix it" in str(refused.value) and "\n" not in str(refused.value)
    assert path.read_text() == text and not _backups(path)


@pytest.mark.parametrize(
    "text, comma, kind",
    [('{\n  "model": "opus",\n}\n', 19, "object"), ('{"permissions": {"allow": ["Bash(ls:*)",]}}', 39, "array")],
)
def test_a_trailing_comma_is_named_where_python_3_13_reports_it(tmp_path, monkeypatch, text, comma, kind):
    # Python 3.13's json says "Illegal trailing comma before end of object" at the comma itself
    # (3.11: "Expecting property name" at the brace after it): the hint looked at the brace only
    # and said nothing there. 3.13's decoder, as it fails, on the 3.11 CI runs.
    def as_3_13(doc: str, **_: object) -> object:
        raise json.JSONDecodeError(f"Illegal trailing comma before end of {kind}", doc, comma)

    monkeypatch.setattr(setup.json, "loads", as_3_13)
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        setup.install(path, CMD)
    assert "a comma before the end there, and JSON allows none; fix it" in str(refused.value)
    assert path.read_text() == text and not _backups(path)


# ----- uninstall gives back what the user had -------------------------------------------------

OTHER_TOOLS = (
    '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n          {\n            "type": "command",\n'
    '            "command": "other-tool --on-stop",\n            "timeout": 5\n          }\n        ]\n      }\n'
    '    ],\n    "UserPromptSubmit": [\n      {\n        "matcher": "",\n        "hooks": [\n          {\n'
    '            "type": "command",\n            "command": "other-tool --on-prompt"\n          }\n        ]\n'
    "      }\n    ]\n  }\n}"
)


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "model": "opus"\n}',  # no hooks key
        '{\n  "model": "opus",\n  "hooks": {}\n}',  # the user's own, empty
        '{\n  "hooks": {\n    "Stop": [],\n    "UserPromptSubmit": []\n  }\n}\n',  # the user's own empty lists
        OTHER_TOOLS,  # another tool's hooks in the same events
    ],
    ids=["no-hooks", "own-empty-hooks", "own-empty-lists", "other-tools"],
)
def test_hook_uninstall_gives_back_the_same_bytes(tmp_path, text):
    # An empty "hooks" (or event list) of the user's own was deleted by uninstall, as if
    # install had made it.
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    runner = CliRunner()
    install = ["hook", "install", "--stop", "--prompt", "--vault", str(tmp_path), "--settings", str(path)]
    assert runner.invoke(cli, install).exit_code == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    # Claude Code's form: event → matcher groups → hooks; brain's group goes last, each tool's stays first
    stop, prompt = data["hooks"]["Stop"][-1], data["hooks"]["UserPromptSubmit"][-1]
    assert stop == {"hooks": [{"type": "command", "command": setup.hook_command("stop")}]}
    assert prompt == {"hooks": [{"type": "command", "command": setup.hook_command("prompt", tmp_path), "timeout": 10}]}
    if text == OTHER_TOOLS:
        assert [len(groups) for groups in data["hooks"].values()] == [2, 2]
    result = runner.invoke(cli, ["hook", "uninstall", "--settings", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_text(encoding="utf-8") == text


def test_another_tools_hook_in_brains_group_stays_in_its_place(tmp_path):
    path = tmp_path / "settings.json"
    setup.install(path, CMD)  # install makes the file
    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"] += [{"type": "command", "command": "other-tool --on-stop"}]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    setup.uninstall(path)
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other-tool --on-stop"}]}]}
    }
    setup.install(path, CMD)
    setup.uninstall(path)  # the list is the user's now: emptied, it would stay
    assert _commands(path, "Stop") == ["other-tool --on-stop"]


def test_a_project_settings_file_install_made_is_removed_by_uninstall(tmp_path, monkeypatch):
    # It came back as "{}": a file the project never had, left to be committed.
    monkeypatch.chdir(tmp_path)
    path = tmp_path / ".claude" / "settings.json"
    runner = CliRunner()
    assert runner.invoke(cli, ["hook", "install", "--stop", "--prompt", "--vault", str(tmp_path)]).exit_code == 0
    out = runner.invoke(cli, ["hook", "uninstall", "--stop"])  # the prompt hook stays, and the file
    assert out.exit_code == 0 and "removed the Stop hook" in out.output, out.output
    assert list(json.loads(path.read_text())["hooks"]) == ["UserPromptSubmit"]
    assert _commands(path, "UserPromptSubmit") == [setup.hook_command("prompt", tmp_path)]
    out = runner.invoke(cli, ["hook", "uninstall"])
    assert out.exit_code == 0 and f"removed {path}: brain hook install had made it" in out.output, out.output
    assert not path.exists()


def test_a_settings_file_install_made_that_the_user_filled_since_stays(tmp_path):
    path = tmp_path / "settings.json"
    setup.install(path, CMD)
    data = json.loads(path.read_text())
    data["model"] = "opus"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    setup.uninstall(path)
    assert json.loads(path.read_text()) == {"model": "opus"}


def test_a_symlinked_settings_file_stays_a_link_with_the_same_bytes(tmp_path):
    target = tmp_path / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    text = '{\n  "model": "opus",\n  "hooks": {}\n}\n'
    target.write_text(text, encoding="utf-8")
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    setup.install_hooks(link, {"stop": CMD, "prompt": PROMPT_CMD})
    setup.uninstall(link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == text


def test_without_the_record_of_what_install_made_hook_uninstall_removes_the_hooks_alone(tmp_path, monkeypatch):
    # Another BRAIN_HOME at uninstall (or an older brain's install, which kept no record): what
    # install made is not known, and with no backup of brain's to show it, nothing but brain's hooks go.
    path = tmp_path / "settings.json"
    path.write_text('{\n  "model": "opus"\n}\n', encoding="utf-8")
    (backup,) = [setup.install(path, CMD).backup]
    backup.unlink()  # the user cleared the backups away
    monkeypatch.setenv("BRAIN_HOME", str(tmp_path / "another home"))
    assert setup.uninstall(path).changed
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": {"Stop": []}}


# What an older brain (before the install record, f5738ef) left: the same files, no record.
OLD_BRAIN = [
    (None, None),  # a new project: install made the file (and no backup of it)
    ('{\n  "model": "opus"\n}\n', None),
    ('{\n  "model": "opus",\n  "hooks": {}\n}', None),  # the user's own empty "hooks"
    ('{\r\n  "hooks": {\r\n    "Stop": []\r\n  }\r\n}\r\n', None),  # and an empty list of theirs
    ("", None),  # an empty file
    ('{\n  "model": "opus"\n}\n', '{\n  "model": "opus",\n  "env": {"A": "1"}\n}\n'),  # edited since
]


@pytest.mark.parametrize(
    "before, edited", OLD_BRAIN, ids=["new", "no-hooks", "own-hooks", "own-list", "empty", "edited"]
)
def test_an_older_brains_install_uninstalls_to_the_file_as_it_was(tmp_path, monkeypatch, before, edited):
    # An install without a record uninstalled to {"hooks": {"Stop": []}} (or the user's settings
    # with it), the .bak files and a file brain had made left behind.
    path = tmp_path / ".claude" / "settings.json"
    if before is not None:
        path.parent.mkdir()
        path.write_bytes(before.encode())
    setup.install_hooks(path, {"stop": CMD, "prompt": PROMPT_CMD})
    for record in Path(os.environ["BRAIN_HOME"]).glob("hook-installs.json"):
        record.unlink()  # as an older brain left it
    if edited is not None:
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**json.loads(edited), "hooks": data["hooks"]}, indent=2), encoding="utf-8")
    change = setup.uninstall(path)
    assert change.changed
    if before is None:
        assert not path.exists() and not _backups(path) and "brain hook install had made it" in change.message
    elif edited is None:
        assert path.read_bytes() == before.encode() and not _backups(path)
        assert (
            "is back as it was before brain hook install; brain's backups of it, holding nothing more, are removed"
            in change.message
        )
    else:  # the user's edit stays, and so does every backup: none holds the file as it is now
        assert json.loads(path.read_text()) == json.loads(edited)  # install's backup had no "hooks"
        assert len(_backups(path)) == 2 and change.backup in _backups(path)


def test_an_older_brains_installs_one_by_one_then_an_edit_uninstall_to_the_users_settings(tmp_path):
    # Without a record, the newest backup without a hook of brain's in a list is the file before
    # the install that put it there: the prompt hook's list it lacks was install's, "hooks" not.
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [NOTIFY]}]}}, indent=2))
    setup.install(path, CMD)
    setup.install(path, PROMPT_CMD, "prompt")
    (Path(os.environ["BRAIN_HOME"]) / "hook-installs.json").unlink()
    path.write_text(path.read_text().replace('"opus"', '"sonnet"'))  # the user's edit since
    setup.uninstall(path)
    assert json.loads(path.read_text()) == {"model": "sonnet", "hooks": {"Stop": [{"hooks": [NOTIFY]}]}}


NOTIFY = {"type": "command", "command": "notify-send done"}


def test_a_claude_folder_install_made_goes_with_the_file_and_no_other(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude"
    setup.install(folder / "settings.json", CMD)
    setup.uninstall(folder / "settings.json")
    assert not folder.exists()
    folder.mkdir()  # the user's own, empty: it stays
    setup.install(folder / "settings.json", CMD)
    setup.uninstall(folder / "settings.json")
    assert folder.is_dir() and not list(folder.iterdir())
    folder.rmdir()
    setup.install(folder / "settings.json", CMD)
    (folder / "settings.local.json").write_text("{}")  # Claude Code put a file of its own there since
    setup.uninstall(folder / "settings.json")
    assert [each.name for each in folder.iterdir()] == ["settings.local.json"]


def _as_an_older_brain_recorded_it(path: Path, *, record: bool) -> None:
    """The install record as a brain before the folder was recorded left it: what install made in
    the file, and no word of the folder (``record``: False, a brain before the record: none)."""
    from brain import config

    kept = config.brain_home() / "hook-installs.json"
    known = json.loads(kept.read_text())
    assert "folder" in known[str(path)]
    known[str(path)] = [each for each in known[str(path)] if each != "folder"]
    if record:
        kept.write_text(json.dumps(known))
    else:
        kept.unlink()


@pytest.mark.parametrize("record", [True, False])
def test_the_claude_folder_an_older_install_made_goes_when_uninstall_leaves_it_empty(tmp_path, monkeypatch, record):
    """An older brain's install made .claude/ and recorded the file alone (or nothing): uninstall
    removed the file and left the empty folder. That folder goes; one holding anything stays."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude"
    for kept in (None, "settings.local.json"):
        assert CliRunner().invoke(cli, ["hook", "install"]).exit_code == 0
        _as_an_older_brain_recorded_it(folder / "settings.json", record=record)
        if kept:
            (folder / kept).write_text("{}")  # Claude Code's own file since
        out = CliRunner().invoke(cli, ["hook", "uninstall"])
        assert out.exit_code == 0, out.output
        assert "brain hook install had made it" in out.output
        if kept is None:
            assert not folder.exists() and f"and its folder {folder}" in out.output, out.output
        else:
            assert [each.name for each in folder.iterdir()] == [kept], out.output


def test_a_file_an_older_brain_made_and_updated_goes_with_its_backups_and_folder(tmp_path, monkeypatch):
    """Installed twice by a brain before the record, the second install backing up the file the
    first had made (brain's hook in it): uninstall left {"hooks": {"Stop": []}}, both backups and
    .claude/. No backup without brain's hook: install made the file; it goes, with them."""
    from brain import config

    monkeypatch.chdir(tmp_path)
    path = tmp_path / ".claude" / "settings.json"
    setup.install(path, CMD)
    assert setup.install(path, "BRAIN_HOME=/h " + CMD).backup is not None
    (config.brain_home() / "hook-installs.json").unlink()
    out = CliRunner().invoke(cli, ["hook", "uninstall"])
    assert out.exit_code == 0 and f"and its folder {path.parent}" in out.output, out.output
    assert not path.parent.exists()
    # a backup without brain's hook is the file before install: the user's, which stays
    path.parent.mkdir()
    path.write_text("{}")
    setup.install(path, CMD)
    setup.install(path, "BRAIN_HOME=/h " + CMD)
    (config.brain_home() / "hook-installs.json").unlink(missing_ok=True)
    assert CliRunner().invoke(cli, ["hook", "uninstall"]).exit_code == 0
    assert json.loads(path.read_text()) == {}


def test_a_claude_folder_there_before_install_stays_empty_after_uninstall(tmp_path, monkeypatch):
    """The record says the folder was there (the user's): uninstall leaves it, empty, as it was."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / ".claude"
    folder.mkdir()
    assert CliRunner().invoke(cli, ["hook", "install"]).exit_code == 0
    out = CliRunner().invoke(cli, ["hook", "uninstall"])
    assert out.exit_code == 0 and "brain hook install had made it" in out.output, out.output
    assert folder.is_dir() and not list(folder.iterdir()) and "its folder" not in out.output


def test_a_file_install_made_goes_with_the_backups_of_brains_updates_and_no_other(tmp_path, monkeypatch):
    # An install that updated brain's hook (another BRAIN_HOME) backed up the file holding brain's
    # hook alone; it stayed, with the folder, when uninstall removed the file install had made.
    monkeypatch.chdir(tmp_path)
    path = tmp_path / ".claude" / "settings.json"
    setup.install(path, CMD)
    assert setup.install(path, "BRAIN_HOME=/h " + CMD).backup is not None
    setup.uninstall(path)
    assert not path.parent.exists()
    path.parent.mkdir()
    mine = path.with_name("settings.json.bak-20200101-000000")
    mine.write_text('{"model": "opus"}')  # a backup of a state with something of the user's in it
    setup.install(path, CMD)
    setup.install(path, "BRAIN_HOME=/h " + CMD)
    setup.uninstall(path)
    assert [each.name for each in path.parent.iterdir()] == [mine.name]


def test_a_link_to_a_file_install_made_is_left_as_it_was(tmp_path):
    # A link to a dotfiles file not yet there: install made the file; uninstall left it, holding {}.
    target = tmp_path / "dotfiles" / "claude" / "settings.json"
    link = tmp_path / "settings.json"
    link.symlink_to(target)
    setup.install(link, CMD)
    assert link.is_symlink() and target.is_file()
    setup.uninstall(link)
    assert link.is_symlink() and not target.exists() and not (tmp_path / "dotfiles" / "claude").exists()


@pytest.mark.parametrize("what", ["file", "fifo", "under a file", "db a folder"])
@pytest.mark.parametrize("command", [["hook", "install"], ["mcp", "install"]])
def test_install_refuses_a_brain_home_or_db_that_cannot_be_one(tmp_path, monkeypatch, what, command):
    """BRAIN_HOME a file or a FIFO (or under a file), BRAIN_DB a folder: written into the
    settings, the hook or the server failed at every start. Refused in one line, nothing written."""
    monkeypatch.delenv("BRAIN_DB", raising=False)
    monkeypatch.delenv("BRAIN_HOME", raising=False)
    place = tmp_path / "place"
    if what == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(place)
    elif what == "db a folder":
        place.mkdir()
    else:
        place.write_text("")
    name = "BRAIN_DB" if what == "db a folder" else "BRAIN_HOME"
    monkeypatch.setenv(name, str(place / "sub" if what == "under a file" else place))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    args = [*command, "--vault", str(tmp_path)] if command[0] == "mcp" else command
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert name in line and ("not a folder" in line or "not a file" in line), line
    assert "install again" in line
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()


# A brain edit of a settings file held between its read of the file and its write (until the
# test's word), while another program writes the file.
HELD_AFTER_READ = """
import sys, time
from pathlib import Path
from brain.cli import cli
from brain.ledger import install as hooks
from brain.mcp import install as mcp
ready, go = Path(sys.argv[1]), Path(sys.argv[2])
read = hooks.load_settings

def held(path):
    data = read(path)
    if not ready.exists():  # the first read alone
        ready.touch()
        deadline = time.monotonic() + 60
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return data

hooks.load_settings = mcp.load_settings = held
cli.main(sys.argv[3:])
"""


@pytest.mark.parametrize("command", ["mcp install", "hook install", "hook uninstall"])
def test_what_another_program_writes_while_brain_edits_the_file_is_kept(tmp_path, monkeypatch, command):
    # Claude Code rewrites ~/.claude.json as it runs (and `claude mcp add`, an editor, write the
    # settings): a write of theirs between brain's read of the file and its replace was lost
    home, vault = tmp_path / "home", tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("# A\n")
    monkeypatch.setenv("HOME", str(home))
    if command == "mcp install":
        path, args = home / ".claude.json", ["mcp", "install", "--user", "--vault", str(vault)]
    else:
        path, args = home / ".claude" / "settings.json", [*command.split(), "--user"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"model": "opus"}))
    if command == "hook uninstall":
        setup.install(path, CMD)
    ready, go = tmp_path / "ready", tmp_path / "go"
    root = str(Path(setup.__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    child = subprocess.Popen(
        [sys.executable, "-c", HELD_AFTER_READ, str(ready), str(go), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and child.poll() is None:
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.01)
        assert child.poll() is None, child.stdout.read().decode() if child.stdout else ""
        theirs = {**json.loads(path.read_text()), "numStartups": 7}  # as Claude Code writes it
        (tmp_path / "theirs.json").write_text(json.dumps(theirs, indent=2))
        os.replace(tmp_path / "theirs.json", path)
    finally:
        go.touch()
        out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out.decode()
    data = json.loads(path.read_text())
    assert data["numStartups"] == 7 and data["model"] == "opus", data
    if command == "mcp install":
        assert "brain" in data["mcpServers"]
    elif command == "hook install":
        assert _commands(path, "Stop")
    else:
        assert "Stop" not in data.get("hooks", {})
    if command != "hook uninstall":  # the edit made anew took one backup: the try given up took none
        assert [json.loads(each.read_text()) for each in setup.backups_of(path)] == [
            {"model": "opus", "numStartups": 7}
        ]


def test_a_file_another_program_rewrites_at_every_try_is_left_as_it_wrote_it_and_said(tmp_path, monkeypatch):
    path = _settings(tmp_path, {"model": "opus"})
    read, writes = setup.load_settings, []

    def rewritten(p: Path):  # each read of brain's followed by a write of the other program's
        data = read(p)
        writes.append(len(writes))
        p.write_text(json.dumps({"model": "opus", "numStartups": len(writes)}))
        return data

    monkeypatch.setattr(setup, "load_settings", rewritten)
    out = CliRunner().invoke(cli, ["hook", "install", "--settings", str(path)])
    assert out.exit_code == 1 and len(writes) == setup.EDIT_TRIES
    assert f"changed by another program each time brain was about to write it ({setup.EDIT_TRIES} tries)" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1, out.output
    assert json.loads(path.read_text()) == {"model": "opus", "numStartups": setup.EDIT_TRIES}
    assert _backups(path) == [] and sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("kind", ["mcp", "hook"])
def test_a_folder_that_refuses_the_new_file_is_named_not_brains_temporary_file(tmp_path, monkeypatch, kind):
    """`brain mcp install` in a read-only project said "cannot write …/.mcp.json: Read-only file
    system (…/..mcp.json.tmp-79y3kgnw)": a name the user never made and cannot find. The folder
    that refused it is named (a root user's tests cannot make a folder refuse: mkstemp is told to)."""

    def refused(*args, dir, prefix, **kwargs):
        raise OSError(30, "Read-only file system", os.path.join(dir, prefix + "79y3kgnw"))

    path = tmp_path / ("proj/.mcp.json" if kind == "mcp" else "proj/.claude/settings.json")
    path.parent.mkdir(parents=True)
    path.write_text('{"permissions": {}}\n' if kind == "hook" else "{}\n")
    monkeypatch.setattr(setup.tempfile, "mkstemp", refused)
    with pytest.raises(ConfigError) as caught:
        if kind == "mcp":
            mcp_setup.install(path, {"type": "stdio", "command": "/opt/brain/bin/brain", "args": ["mcp"]})
        else:
            setup.install(path)
    assert str(caught.value) == f"cannot write {path}: Read-only file system ({path.parent}); the file is unchanged"


@pytest.mark.parametrize("command", [["hook", "install"], ["hook", "install", "--prompt"], ["mcp", "install"]])
def test_a_project_folder_that_refuses_the_install_says_where_to_run_it(tmp_path, monkeypatch, toy_vault, command):
    """`brain hook install` run where the user may not write (/, a read-only checkout) ended at
    "cannot write …; nothing was changed": one line, and nothing to do next. It says to run it
    in the project's folder or with --user; a file named with --settings is the user's choice
    and gets no such advice."""

    def refused(*args, dir, prefix, **kwargs):
        raise OSError(30, "Read-only file system", os.path.join(dir, prefix + "79y3kgnw"))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BRAIN_VAULT", str(toy_vault))
    monkeypatch.setattr(setup.tempfile, "mkstemp", refused)
    out = CliRunner().invoke(cli, command)
    assert out.exit_code == 1 and out.output.count("\n") == 1 and "Traceback" not in out.output, out.output
    assert out.output.startswith("Error: cannot write ") and "Read-only file system" in out.output
    assert out.output.endswith(": run it in your project's folder, or with --user (every project)\n")
    named = ["--settings", str(tmp_path / "s.json")] if command[0] == "hook" else ["--config", str(tmp_path / "m.json")]
    out = CliRunner().invoke(cli, [*command, *named])
    assert out.exit_code == 1 and "Read-only file system" in out.output and "--user" not in out.output


def test_install_says_a_running_claude_code_session_keeps_its_hooks(tmp_path):
    # Claude Code snapshots the hooks at startup (its hooks docs, "Configuration safety"): the
    # install said "added" and a newcomer's open session went on recording nothing.
    path = _settings(tmp_path)
    for flags in ([], ["--prompt", "--vault", str(tmp_path)]):
        result = CliRunner().invoke(cli, ["hook", "install", "--settings", str(path), *flags])
        assert result.exit_code == 0, result.output
        assert "start a new one, or review the change in its /hooks menu" in result.stderr
        assert "/hooks" not in result.stdout  # stdout says what changed, as before
    again = CliRunner().invoke(cli, ["hook", "install", "--settings", str(path)])
    assert again.exit_code == 0 and "/hooks" not in again.output  # nothing changed: nothing to restart


@pytest.mark.parametrize("kind", ["hook", "mcp"])
def test_the_folders_an_install_made_above_its_file_go_with_it_and_one_holding_anything_stays(
    tmp_path, monkeypatch, kind
):
    """`--settings new/deep/s.json` made new/ and new/deep/: uninstall removed the file and
    new/deep/, and left new/ behind, empty, brain's. Each folder install made goes when empty."""
    monkeypatch.chdir(tmp_path)
    option = {"hook": "--settings", "mcp": "--config"}[kind]
    extra = {"hook": [], "mcp": ["--vault", str(tmp_path)]}[kind]
    path = tmp_path / "new" / "deep" / "s.json"
    for kept in (None, "mine.txt"):
        out = CliRunner().invoke(cli, [kind, "install", option, str(path), *extra])
        assert out.exit_code == 0, out.output
        if kept:
            (tmp_path / "new" / kept).write_text("mine")  # the user's own file since
        out = CliRunner().invoke(cli, [kind, "uninstall", option, str(path)])
        assert out.exit_code == 0 and "install had made it" in out.output, out.output
        assert not path.parent.exists(), out.output
        if kept is None:
            assert not (tmp_path / "new").exists(), out.output
            assert f"and its folders {path.parent}, {path.parent.parent}" in out.output, out.output
        else:
            assert [each.name for each in (tmp_path / "new").iterdir()] == [kept], out.output
    assert tmp_path.is_dir()


def test_a_brain_hook_moved_under_another_event_is_named_by_uninstall_and_left(tmp_path, monkeypatch):
    """Brain's Stop hook moved by hand under SubagentStop: uninstall said "no brain Stop hook or
    prompt hook found", and the hook went on recording turns unsaid. It stays (the user put it
    there), and uninstall names where it is, whether it removed others or none."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / ".claude" / "settings.json"
    assert CliRunner().invoke(cli, ["hook", "install"]).exit_code == 0
    data = json.loads(path.read_text())
    data["hooks"]["SubagentStop"] = data["hooks"].pop("Stop")
    path.write_text(json.dumps(data))
    command = data["hooks"]["SubagentStop"][0]["hooks"][0]["command"]
    out = CliRunner().invoke(cli, ["hook", "uninstall"])
    assert out.exit_code == 0, out.output
    assert f'brain\'s hook under "SubagentStop" is left as it is: {command}' in out.output, out.output
    assert json.loads(path.read_text()) == data
    assert CliRunner().invoke(cli, ["hook", "install"]).exit_code == 0  # a Stop hook again, beside it
    out = CliRunner().invoke(cli, ["hook", "uninstall"])
    assert out.exit_code == 0 and "removed the Stop hook" in out.output, out.output
    assert f'brain\'s hook under "SubagentStop" is left as it is: {command}' in out.output, out.output
    assert json.loads(path.read_text())["hooks"]["SubagentStop"] == data["hooks"]["SubagentStop"]
