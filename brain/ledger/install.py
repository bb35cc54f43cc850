"""Add or remove the ``brain hook stop`` entry in a Claude Code ``settings.json``.

The merge keeps every other setting and hook of the user, is idempotent, backs the file
up before changing it, and reports what it did. The command written names the installed
``brain`` by absolute path (Claude Code's shell may not have the user's virtualenv or
PATH), shell-quoted, with ``BRAIN_HOME``/``BRAIN_DB`` baked in when they are set.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError

EVENT = "Stop"
# Ours: any command ending in "brain hook stop" or "-m brain hook stop", whatever the path.
_OURS = re.compile(r"(?:^|[\s/\\'\"])(?:brain(?:\.exe)?['\"]?|-m brain)\s+hook\s+stop\s*$")


@dataclass
class Change:
    """What an install or uninstall did to one settings file."""

    path: Path
    changed: bool
    message: str
    backup: Path | None = None


def settings_path(
    *, user: bool = False, settings: Path | None = None, cwd: Path | None = None
) -> Path:
    """The settings file to edit: explicit, the user's, or the project's in ``cwd``."""
    if settings is not None:
        return settings.expanduser()
    if user:
        return Path.home() / ".claude" / "settings.json"
    return (cwd or Path.cwd()) / ".claude" / "settings.json"


def brain_executable() -> list[str]:
    """This brain, by absolute path: the ``brain`` script, or ``python -m brain`` (argv form)."""
    exe_dir = Path(sys.executable).parent
    # The script beside this interpreter is the one installed with this brain; a PATH
    # lookup could find a shim or another environment's copy first.
    for name in ("brain", "brain.exe"):
        script = exe_dir / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    found = shutil.which("brain")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "brain"]


def hook_command() -> str:
    """The shell command Claude Code should run: absolute, quoted, with our env vars."""
    base = " ".join(shlex.quote(part) for part in brain_executable())
    env = [f"{name}={shlex.quote(value)}" for name, value in pinned_env().items()]
    return " ".join([*env, base, "hook", "stop"])


def pinned_env() -> dict[str, str]:
    """The locations set in this environment (absolute), for a command Claude Code runs, so it
    writes and reads where this shell's brain does."""
    return {
        name: str(Path(value).expanduser().absolute())
        for name in ("BRAIN_HOME", "BRAIN_DB")
        if (value := os.environ.get(name))
    }


def is_ours(command: Any) -> bool:
    return isinstance(command, str) and bool(_OURS.search(command.strip()))


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix it, then run this again") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    return data


def _stop_groups(data: dict[str, Any], path: Path) -> list[Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f'"hooks" in {path} is not an object; fix it, then run this again')
    groups = hooks.setdefault(EVENT, [])
    if not isinstance(groups, list):
        raise ConfigError(f'"hooks.{EVENT}" in {path} is not a list; fix it, then run this again')
    return groups


def _our_entries(groups: list[Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(group, hook) pairs of every brain Stop hook in ``groups``."""
    found = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for hook in group["hooks"]:
                if isinstance(hook, dict) and is_ours(hook.get("command")):
                    found.append((group, hook))
    return found


def _save(path: Path, data: dict[str, Any], existed: bool) -> Path | None:
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if existed:
        backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while backup.exists():  # two changes within a second keep both backups
            backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
            n += 1
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)  # never leave a half-written settings file
    return backup


def install(path: Path, command: str | None = None) -> Change:
    """Add (or update) the brain Stop hook in the settings file at ``path``."""
    command = command or hook_command()
    existed = path.exists()
    data = _load(path)
    groups = _stop_groups(data, path)
    ours = _our_entries(groups)
    if any(hook.get("command") == command for _, hook in ours) and len(ours) == 1:
        return Change(path, False, f"already installed in {path}: {command}")
    if ours:
        _, hook = ours[0]
        old = hook.get("command")
        hook["command"] = command
        hook["type"] = "command"
        _drop(groups, ours[1:])
        message = f"updated the Stop hook in {path}:\n  - {old}\n  + {command}"
    else:
        groups.append({"hooks": [{"type": "command", "command": command}]})
        message = f"added a Stop hook to {path}:\n  + {command}"
    backup = _save(path, data, existed)
    if backup:
        message += f"\nbackup: {backup}"
    return Change(path, True, message, backup)


def _drop(groups: list[Any], entries: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for group, hook in entries:
        group["hooks"] = [h for h in group["hooks"] if h is not hook]
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]


def uninstall(path: Path) -> Change:
    """Remove every brain Stop hook from the settings file at ``path``, nothing else."""
    if not path.exists():
        return Change(path, False, f"not installed: {path} does not exist")
    data = _load(path)
    hooks = data.get("hooks")
    groups = hooks.get(EVENT) if isinstance(hooks, dict) else None
    ours = _our_entries(groups) if isinstance(groups, list) else []
    if not ours:
        return Change(path, False, f"not installed in {path}: no brain Stop hook found")
    _drop(groups, ours)  # type: ignore[arg-type]
    # Leave no empty containers behind that the install created.
    if not groups:
        del hooks[EVENT]  # type: ignore[index]
    if isinstance(hooks, dict) and not hooks:
        del data["hooks"]
    removed = "\n".join(f"  - {hook.get('command')}" for _, hook in ours)
    backup = _save(path, data, True)
    return Change(
        path, True, f"removed the Stop hook from {path}:\n{removed}\nbackup: {backup}", backup
    )
