"""``brain mcp install``: add brain's MCP server to Claude Code's configuration.

Project scope writes ``.mcp.json`` in the current folder (``claude mcp add --scope project``
writes the same); ``--user`` writes the ``mcpServers`` of ``~/.claude.json`` (``--scope user``).
The same discipline as ``brain hook install``, through the same file helpers
(``ledger/install.py``): merge into what is there, a backup before any change, nothing written
when it is already installed, and the absolute path of this brain, with the vault and
``BRAIN_HOME``/``BRAIN_DB`` pinned so the agent's brain reads what this shell's brain wrote, and
the settings the index is built with (the model, chunking, tokenizer) so it reads it the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..install_record import FILE, FOLDER, FOLDER_THERE, InstallRecord, folders_above
from ..ledger.install import (
    Change,
    Spot,
    anew_if_changed,
    brain_executable,
    editing,
    is_brain_program,
    load_settings,
    nameable,
    pinned_env,
    put_back,
    save_settings,
    working_directory,
)
from ..text import literal

NAME = "brain"


def config_path(*, user: bool = False, config: Path | None = None, cwd: Path | None = None) -> Path:
    """The MCP config to edit: explicit, the user's ``~/.claude.json``, or the project's ``.mcp.json``."""
    if config is not None:
        config = config.expanduser()
        return config if config.is_absolute() else working_directory() / config
    if user:
        return Path.home() / ".claude.json"
    return (cwd or working_directory()) / ".mcp.json"


def server_entry(vault: Path) -> dict[str, Any]:
    """The ``mcpServers`` entry: stdio, this brain by absolute path, the vault pinned."""
    command, *args = (nameable("brain's own path", part) for part in brain_executable())
    entry: dict[str, Any] = {
        "type": "stdio",
        "command": command,
        "args": [*args, "mcp", "--vault", nameable("the vault's path", str(vault))],
    }
    env = {**pinned_env(), **{name: nameable(name, value) for name, value in index_settings().items()}}
    if env:
        entry["env"] = env
    return entry


# What an index is built with: `brain mcp` with no server running opens the index itself and
# refuses one built another way, so the entry carries this shell's settings along.
INDEX_SETTINGS = (
    "BRAIN_EMBED_MODEL",
    "BRAIN_QUERY_PREFIX",
    "BRAIN_PASSAGE_PREFIX",
    "BRAIN_FTS_TOKENIZER",
    "BRAIN_CHUNKING",
    "BRAIN_LINK_FENCES",
)


def index_settings() -> dict[str, str]:
    """The index's settings set in this environment; the model as brain reads it (a folder with
    ``~`` expanded; one given relative is the setting's error, as for every command)."""
    from ..config import embed_model_name, env

    settings = {name: value for name in INDEX_SETTINGS if (value := os.environ.get(name)) is not None}
    if env("BRAIN_EMBED_MODEL"):
        settings["BRAIN_EMBED_MODEL"] = embed_model_name()
    return settings


def is_ours(entry: Any) -> bool:
    """Whether ``entry`` is a server brain wrote: brain (by any path) then ``mcp --vault DIR``.
    Another program of the same name (``npx @acme/brain-mcp``) is the user's, and stays."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    words = [command, *args]
    return len(words) >= 4 and words[-3:-1] == ["mcp", "--vault"] and is_brain_program(words[:-3])


def _servers(data: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'"mcpServers" in {path} is not an object; fix it, then run this again')
    return servers


def install(path: Path, entry: dict[str, Any], name: str = NAME) -> Change:
    """Add (or update) the ``name`` server in the MCP config at ``path``."""
    with editing(path, create=True) as new_folder:
        return anew_if_changed(lambda: _install(path, entry, name, new_folder))


def _install(path: Path, entry: dict[str, Any], name: str, new_folder: int) -> Change:
    existed = path.exists()
    data = load_settings(path) or {}
    made = FILE if not existed else "key" if "mcpServers" not in data else None
    servers = _servers(data, path)
    old = servers.get(name)
    if old == entry:
        return Change(path, False, f"already installed in {literal(str(path))}: {_shown(entry)}")
    if old is not None and not is_ours(old):
        raise ConfigError(
            f"{path} already has an MCP server named {name!r} that is not brain's ({_program(old)}); "
            "choose another name with --name"
        )
    servers[name] = entry
    backup = save_settings(path, data, existed)
    if made:
        there = [FOLDER if new_folder else FOLDER_THERE, *folders_above(new_folder - 1)] if made == FILE else []
        MADE.remember(path, [made, *there])
    if old is None:
        message = f"added the MCP server {name!r} to {literal(str(path))}:\n  + {_shown(entry)}"
    else:
        message = f"updated the MCP server {name!r} in {literal(str(path))}:\n  - {_shown(old)}\n  + {_shown(entry)}"
    if backup:
        message += f"\nbackup: {literal(str(backup))}"
    return Change(path, True, message, backup)


def uninstall(path: Path, name: str = NAME) -> Change:
    """Remove the ``name`` server from the MCP config at ``path``; nothing else."""
    with editing(path):
        return anew_if_changed(lambda: _uninstall(path, name))


def _uninstall(path: Path, name: str) -> Change:
    if not path.exists():
        return Change(path, False, f"not installed: {literal(str(path))} does not exist")
    data = load_settings(path) or {}
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or name not in servers:
        return Change(path, False, f"not installed in {literal(str(path))}: no MCP server {name!r}")
    if not is_ours(servers[name]):
        return Change(
            path,
            False,
            f"not removed: the MCP server {name!r} in {literal(str(path))} is not brain's ({_program(servers[name])})",
        )
    old = servers.pop(name)
    made = MADE.made(path)
    removed = f"removed the MCP server {name!r} from {literal(str(path))}:\n  - {_shown(old)}"
    # Only what brain's install made goes: an "mcpServers" the user (or Claude Code) had stays,
    # empty, and so does every other key, in its order.
    emptied: list[Spot] = [] if servers else [("mcpServers",)]
    spots = emptied if "key" in made or FILE in made else []
    # What install made is brain's while a server of brain's is in the file (another --name):
    # the last one's uninstall takes it away.
    left = any(is_ours(each) for each in servers.values())

    tail, backup = put_back(
        path,
        data,
        emptied,
        spots,
        made,
        _holds_ours,
        _stripped,
        lambda: None if left else MADE.forget(path),
        left=left,
        installer="brain mcp install",
    )
    return Change(path, True, removed + tail, backup)


def _stripped(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (read from a backup: changed in place) without brain's servers."""
    servers = data.get("mcpServers")
    if isinstance(servers, dict):
        for name in [name for name, entry in servers.items() if is_ours(entry)]:
            del servers[name]
    return data


def _holds_ours(data: Any, spot: Spot) -> bool:
    """Whether the config ``data`` holds a server of brain's (in "mcpServers", the one ``spot``)."""
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    return isinstance(servers, dict) and any(is_ours(each) for each in servers.values())


# What brain's install made here (the file, or its "mcpServers" key): uninstall takes away
# that and nothing the user had.
MADE = InstallRecord("mcp-installs.json")


def _program(entry: Any) -> str:
    """Another program's entry, named by its command alone: its arguments and env may hold keys."""
    command = entry.get("command") if isinstance(entry, dict) else None
    return f"{command} …" if isinstance(command, str) else "not a command"


def _shown(entry: Any) -> str:
    if not isinstance(entry, dict):
        return repr(entry)
    env_items = entry["env"] if isinstance(entry.get("env"), dict) else {}
    # brain's own locations are shown; any other value (a key someone added) is not
    env = " ".join(f"{k}={v if str(k).startswith('BRAIN_') else '…'}" for k, v in env_items.items())
    command = " ".join([str(entry.get("command", "")), *map(str, entry.get("args") or [])])
    return (env + " " if env else "") + command
