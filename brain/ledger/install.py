"""Add or remove brain's hooks in a Claude Code ``settings.json``.

Two kinds: ``stop`` (the ``Stop`` event, ``brain hook stop``: the turn ledger) and ``prompt``
(the ``UserPromptSubmit`` event, ``brain hook prompt``: automatic recall). The merge keeps every
other setting and hook of the user, is idempotent, backs the file up before changing it, and
reports what it did. The file keeps its mode and owner (a 0600 file stays 0600, and so is its
backup), a symlinked file is written through to its target, and a read-only one is left alone,
as is one whose owner the new file could not keep and JSON the rewrite would change (a key twice,
NaN, a number that overflows). Edits of one file are serialised (``editing``), and only a
command of brain's own form is brain's (``is_ours``).
The command written names the installed ``brain`` by absolute path (Claude Code's shell may not
have the user's virtualenv or PATH), shell-quoted, with ``BRAIN_HOME``/``BRAIN_DB`` baked in when
they are set, and for the prompt hook ``BRAIN_VAULT``: the vault it recalls from.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: edits are not serialised
    fcntl = None  # type: ignore[assignment]

from ..errors import ConfigError
from ..install_record import FILE, InstallRecord

# kind → (the Claude Code event, what a message calls it)
HOOKS = {"stop": ("Stop", "Stop hook"), "prompt": ("UserPromptSubmit", "prompt hook")}
EVENT = HOOKS["stop"][0]
PROMPT_TIMEOUT = 10  # seconds Claude Code gives the prompt hook (its own budget is far less)
BOM = "\ufeff"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*(?:\.exe)?|py(?:\.exe)?")


@dataclass
class Change:
    """What an install or uninstall did to one settings file."""

    path: Path
    changed: bool
    message: str
    backup: Path | None = None


def settings_path(*, user: bool = False, settings: Path | None = None, cwd: Path | None = None) -> Path:
    """The settings file to edit: explicit, the user's, or the project's in ``cwd``."""
    if settings is not None:
        settings = settings.expanduser()
        return settings if settings.is_absolute() else working_directory() / settings
    if user:
        return Path.home() / ".claude" / "settings.json"
    return (cwd or working_directory()) / ".claude" / "settings.json"


def user_scope(path: Path) -> bool:
    """Whether ``path`` is one of the user's own Claude Code files, ``~/.claude/settings.json`` or
    ``~/.claude.json`` (which Claude Code later fills with its OAuth and session state): brain
    creates them owner-only. A project's (``.claude/settings.json``, ``.mcp.json``) is meant to
    be shared and committed: it gets the umask's mode."""
    home = Path.home()
    return Path(os.path.abspath(path)) in (home / ".claude" / "settings.json", home / ".claude.json")


def make_folder(path: Path) -> None:
    """Make the folder ``path`` goes in (its target's, for a link), and those above it, when
    missing. ``~/.claude/`` is made owner-only (0700): Claude Code keeps its settings and every
    session's transcript there, and the umask's mode (0755) let every user of the machine read
    them. Any other folder gets the umask's mode; one already there is left as it is."""
    private = Path(os.path.abspath(path)).parent == Path.home() / ".claude"
    Path(os.path.realpath(path)).parent.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)


def working_directory() -> Path:
    """The working directory, or a one-line error when it has been deleted under this shell."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        raise ConfigError(
            "the working directory no longer exists: cd to the project again (or give the file's absolute path)"
        ) from None


def brain_executable() -> list[str]:
    """This brain, by absolute path: the ``brain`` script, or ``python -P -m brain`` (argv form)."""
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
    # `python -m brain` puts the working directory first on the path: run by Claude Code in a
    # project that holds a `brain` package, it would import and run that. -P (3.11+) leaves
    # the working directory off; 3.10 has no such flag (-I would also drop the user's site
    # and PYTHONPATH, where this brain may live).
    return [sys.executable, "-P", "-m", "brain"] if sys.version_info >= (3, 11) else [sys.executable, "-m", "brain"]


def hook_command(kind: str = "stop", vault: Path | None = None) -> str:
    """The shell command Claude Code should run: absolute, quoted, with our env vars (and, for
    the prompt hook, the vault as ``BRAIN_VAULT``)."""
    base = " ".join(shlex.quote(part) for part in brain_executable())
    pinned = pinned_env()
    if vault is not None:
        pinned["BRAIN_VAULT"] = str(vault)
    env = [f"{name}={shlex.quote(value)}" for name, value in pinned.items()]
    return " ".join([*env, base, "hook", kind])


def pinned_env() -> dict[str, str]:
    """The locations set in this environment (absolute), for a command Claude Code runs, so it
    writes and reads where this shell's brain does."""
    return {
        name: str(Path(value).expanduser().absolute())
        for name in ("BRAIN_HOME", "BRAIN_DB")
        if (value := os.environ.get(name))
    }


def is_ours(command: Any, kind: str = "stop") -> bool:
    """Whether ``command`` is brain's hook of ``kind`` as install writes it: ``NAME=value``
    assignments, brain by any path (or ``<python> -m brain``), ``hook <kind>``, and nothing else.
    A user's own command that only ends so (``cd ~/x && brain hook stop``) is theirs: install and
    uninstall leave it as it is."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: not something brain wrote
        return False
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    return words[-2:] == ["hook", kind] and is_brain_program(words[:-2])


def is_brain_program(words: list[str]) -> bool:
    """Whether ``words`` run brain: a path to ``brain``, or ``<python> [-flags] -m brain``."""
    if len(words) == 1:
        return _basename(words[0]) in ("brain", "brain.exe")
    return (
        len(words) >= 3
        and words[-2:] == ["-m", "brain"]
        and bool(_PYTHON.fullmatch(_basename(words[0])))
        and all(word.startswith("-") for word in words[1:-2])
    )


def _basename(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].lower()


def load_settings(path: Path) -> dict[str, Any] | None:
    """The settings in ``path``, or None when there is no such file."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            # /dev/null or a FIFO: reading one may never end, and the write would replace it.
            raise ConfigError(f"{path} is not a regular file; name the settings file itself")
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start}); fix it, then run this again"
        ) from exc
    text = text.removeprefix(BOM)  # Windows editors' mark: kept on the write (_layout), not JSON to parse
    if not text.strip():
        return {}
    try:
        data = json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_not_json, parse_float=_finite_float
        )
    except _Unsafe as exc:  # would be written back changed, or not as JSON: refused, not "fixed"
        raise ConfigError(f"{path} {exc}; fix it, then run this again") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path} nests arrays or objects too deeply to read; fix it, then run this again") from exc
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid JSON ({exc}){_jsonc_hint(text, exc)}; fix it, then run this again"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    return data


def _jsonc_hint(text: str, exc: ValueError) -> str:
    """What Claude Code's readers and editors take but JSON does not (a comment, a trailing
    comma), named where the error is: the message alone ("Expecting property name") hid it."""
    pos = getattr(exc, "pos", None)
    if not isinstance(pos, int) or pos >= len(text):
        return ""
    if text[pos] == "/" and text[pos : pos + 2] in ("//", "/*"):
        return ": a comment there, and JSON allows none"
    if text[pos] in "}]" and text[:pos].rstrip().endswith(","):
        return ": a comma before the end there, and JSON allows none"
    return ""


class _Unsafe(ValueError):
    """JSON that the rewrite would change: loading it is refused rather than losing a value."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:  # json.loads keeps the last; the rewrite would drop the first
            raise _Unsafe(f"has the key {json.dumps(key, ensure_ascii=False)} twice in one object")
        data[key] = value
    return data


def _not_json(name: str) -> Any:
    raise _Unsafe(f"holds {name}, which is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e400 would be written back as Infinity: not JSON
        raise _Unsafe(f"holds the number {text[:40]}, too large to keep")
    return value


def _event_groups(data: dict[str, Any], path: Path, event: str) -> list[Any]:
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f'"hooks" in {path} is not an object; fix it, then run this again')
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise ConfigError(f'"hooks.{event}" in {path} is not a list; fix it, then run this again')
    return groups


def _our_entries(groups: list[Any], kind: str = "stop") -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(group, hook) pairs of every brain hook of ``kind`` in ``groups``."""
    found = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for hook in group["hooks"]:
                if isinstance(hook, dict) and is_ours(hook.get("command"), kind):
                    found.append((group, hook))
    return found


@contextlib.contextmanager
def editing(path: Path, *, create: bool = False) -> Iterator[None]:
    """One brain edit of ``path`` at a time, from reading it to replacing it, so installs run
    at once each see the change of the one before instead of writing over it. The lock is an
    flock on the folder that holds the file (its target, for a link): no lock file is left in
    the user's folder, and a lock that cannot be taken (no fcntl, an unreadable folder) is
    skipped rather than stopping the edit. ``create`` makes the folder first (an install writes
    there anyway), so that the first installs into a new folder wait for each other too."""
    folder = Path(os.path.realpath(path)).parent
    if create:
        try:
            make_folder(path)
        except OSError as exc:
            where = exc.filename or folder
            raise ConfigError(f"cannot write {path}: {exc.strerror or exc} ({where}); nothing was changed") from exc
    fd = None
    if fcntl is not None:
        try:
            fd = os.open(folder, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing releases the flock


def save_settings(path: Path, data: dict[str, Any], existed: bool) -> Path | None:
    """Write ``data`` to ``path`` as the file it replaces was: same mode, owner and place.

    A symlinked settings file (dotfiles) is written through: its target changes, the link
    stays. A read-only file is refused. The new content goes to a temporary file beside
    the target, then replaces it in one step, so no half-written settings file is ever
    seen; on any error the settings file is unchanged.
    """
    target = Path(os.path.realpath(path))
    original = None
    if existed:
        try:
            original = target.stat()
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
        if not (original.st_mode & 0o222) or not os.access(target, os.W_OK):
            raise ConfigError(
                f"{path} is read-only: make it writable (chmod u+w) and run this again, or edit it by hand"
            )
        if not _can_give(original):
            raise ConfigError(
                f"{path} belongs to another user (uid {original.st_uid}, gid {original.st_gid}) and the new file "
                "would be yours: run this as its owner, or edit it by hand; the file is unchanged"
            )
    layout: dict[str, Any] = {"indent": 2}
    end, newline, mark = "\n", "\n", ""
    if original is not None:
        try:
            layout, end, newline, mark = _layout(target.read_bytes().decode("utf-8", "replace"))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        # json.dumps writes a newline in a string as "\\n": every "\n" it gives is a line break.
        text = mark + (json.dumps(data, ensure_ascii=False, **layout) + end).replace("\n", newline)
    except RecursionError as exc:  # the indenting encoder recurses deeper than the reader
        raise ConfigError(f"{path} nests arrays or objects too deeply to write back; the file is unchanged") from exc
    # A lone surrogate (read from a "\\ud83d" escape) cannot be UTF-8: written back escaped, as it was.
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    backup = None
    try:
        make_folder(path)
        if original is not None:
            backup = _backup(path, target, original)
        _replace(target, text.encode("utf-8"), original, private=user_scope(path))
    except OSError as exc:
        if backup is not None:
            backup.unlink(missing_ok=True)
        where = exc.filename or target
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc} ({where}); the file is unchanged") from exc
    return backup


def _layout(text: str) -> tuple[dict[str, Any], str, str, str]:
    """The indent, separators, last newline, line break and BOM of the JSON ``text``, for
    json.dumps to write the file back as it was laid out: a file brain's install then uninstall
    leave as it was (Claude Code's two spaces and no last newline, four spaces, one line, a
    Windows editor's CRLFs and BOM; every line of a file turned from CRLF to LF was a change)."""
    mark = BOM if text.startswith(BOM) else ""
    newline = "\r\n" if text.partition("\n")[0].endswith("\r") else "\n"  # as its first line ends
    end = "\n" if text.endswith("\n") else ""
    body = text.removeprefix(BOM).strip()
    if body and "\n" not in body:  # one line: as compact as it was
        return {"separators": (", " if ", " in body else ",", ": " if '": ' in body else ":")}, end, newline, mark
    indent = re.search(r"\n([ \t]+)\S", body)
    return {"indent": indent.group(1) if indent else 2}, end, newline, mark


def _backup(path: Path, target: Path, original: os.stat_result) -> Path:
    """A copy of ``target`` beside ``path``, no more readable than the original."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 0
    while True:
        # Two changes within a second keep both backups.
        backup = path.with_name(f"{path.name}.bak-{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            n += 1
            continue
        break
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(target.read_bytes())
        _copy_owner_and_mode(backup, original)
    except BaseException:
        backup.unlink(missing_ok=True)
        raise
    return backup


def _replace(target: Path, content: bytes, original: os.stat_result | None, *, private: bool = False) -> None:
    """Put ``content`` in place of ``target`` in one step: with ``original``'s owner and mode, or
    new: 0600 when ``private``, else what the umask gives."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.tmp-")  # 0600
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        if original is not None:
            _copy_owner_and_mode(tmp, original)
        elif not private:  # a new project file, to be shared: what the user's umask gives
            umask = os.umask(0o022)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _can_give(original: os.stat_result) -> bool:
    """Whether a file this process writes can be given ``original``'s owner (only root can
    give a file away); its group is checked on the written file itself (``_copy_owner_and_mode``)."""
    return not hasattr(os, "geteuid") or os.geteuid() in (0, original.st_uid)


def _copy_owner_and_mode(path: Path, original: os.stat_result) -> None:
    if hasattr(os, "chown"):
        written = path.stat()
        if (written.st_uid, written.st_gid) != (original.st_uid, original.st_gid):
            try:  # root editing a user's file leaves it theirs; an owner may set a group of theirs
                os.chown(path, original.st_uid, original.st_gid)
            except OSError:
                raise PermissionError(
                    errno.EPERM, f"the new file cannot keep the group (gid {original.st_gid})", str(path)
                ) from None
    os.chmod(path, stat.S_IMODE(original.st_mode))


def install(path: Path, command: str | None = None, kind: str = "stop") -> Change:
    """Add (or update) brain's hook of ``kind`` (``stop`` or ``prompt``) in the settings file at ``path``."""
    return install_hooks(path, {kind: command or hook_command(kind)})


def install_hooks(path: Path, commands: dict[str, str]) -> Change:
    """Add (or update) brain's hooks, ``kind`` → command, in one edit of ``path``: one write and
    one backup holding the file as it was (two installs in a row left a second backup holding the
    first one's half-done file, the only backup of a file that did not exist before)."""
    with editing(path, create=True):
        loaded = load_settings(path)
        existed = loaded is not None
        data = loaded if loaded is not None else {}
        _same_database(data, path, commands)
        made = _would_make(data, existed, commands)
        messages, changed = [], False
        for kind, command in commands.items():
            message, edited = _install(data, path, command, kind)
            messages.append(message)
            changed = changed or edited
        if not changed:
            return Change(path, False, "\n".join(messages))
        backup = save_settings(path, data, existed)
        MADE.remember(path, made)
        if backup:
            messages.append(f"backup: {backup}")
        return Change(path, True, "\n".join(messages), backup)


# What brain's install made here (the file, "hooks", an event's list): uninstall takes away
# that and nothing the user had, not an empty "hooks" of theirs.
MADE = InstallRecord("hook-installs.json")


def _would_make(data: dict[str, Any], existed: bool, commands: dict[str, str]) -> set[str]:
    """What installing ``commands`` into ``data`` (read from a file that ``existed``) adds."""
    hooks = data.get("hooks")
    made = {f"hooks.{HOOKS[kind][0]}" for kind in commands if not (isinstance(hooks, dict) and HOOKS[kind][0] in hooks)}
    if "hooks" not in data:
        made.add("hooks")
    if not existed:
        made.add(FILE)
    return made


def pinned(command: Any) -> dict[str, str]:
    """The ``NAME=value`` settings at the head of a hook command brain wrote."""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return {}
    found = {}
    for word in words:
        if not _ASSIGNMENT.match(word):
            break
        name, _, value = word.partition("=")
        found[name] = value
    return found


def database_of(command: Any) -> str | None:
    """The database a hook command records to, by what it pins: ``BRAIN_DB``, else
    ``BRAIN_HOME``'s ``brain.db``; None when it pins neither (the default home)."""
    env = pinned(command)
    if env.get("BRAIN_DB"):
        return os.path.normpath(env["BRAIN_DB"])
    if env.get("BRAIN_HOME"):
        return os.path.normpath(os.path.join(env["BRAIN_HOME"], "brain.db"))
    return None


def describe_locations(command: Any) -> str:
    env = pinned(command)
    named = [f"{name}={shlex.quote(env[name])}" for name in ("BRAIN_HOME", "BRAIN_DB") if env.get(name)]
    return " ".join(named) or "BRAIN_HOME and BRAIN_DB unset"


def mismatched(
    data: dict[str, Any], commands: dict[str, str], *, every_kind: bool = False
) -> tuple[str, str, str] | None:
    """A hook of brain's in ``data`` that ``commands`` leave in place (``every_kind``: any, for
    another settings file) and that records to another database than they do: (its kind, its
    command, the kind installed now); else None. The Stop hook's turns and the prompt hook's
    recalls are joined in one database (``brain recalls``' read and edited columns): apart,
    those stay 0 with no word of why."""
    hooks = data.get("hooks")
    for other in HOOKS:
        if (other in commands and not every_kind) or not isinstance(hooks, dict):
            continue
        groups = hooks.get(HOOKS[other][0])
        for _, hook in _our_entries(groups, other) if isinstance(groups, list) else []:
            for kind, command in commands.items():
                if database_of(hook.get("command")) != database_of(command):
                    return other, str(hook.get("command")), kind
    return None


def _same_database(data: dict[str, Any], path: Path, commands: dict[str, str]) -> None:
    found = mismatched(data, commands)
    if found is None:
        return
    other, command, kind = found
    vault = pinned(command if other == "prompt" else commands.get("prompt")).get("BRAIN_VAULT")
    both = "brain hook install --stop --prompt" + (f" --vault {shlex.quote(vault)}" if vault else "")
    raise ConfigError(
        f"the {HOOKS[other][1]} in {path} runs with {describe_locations(command)}, this {HOOKS[kind][1]} would run with "
        f"{describe_locations(commands[kind])}: two databases, which `brain recalls` cannot join (read and edited "
        f"would stay 0); install both from this shell (`{both}`), or run this again with "
        f"{describe_locations(command)}; the file is unchanged"
    )


def _install(data: dict[str, Any], path: Path, command: str, kind: str) -> tuple[str, bool]:
    """Put brain's hook of ``kind`` into ``data``, the settings read from ``path``: what it did, and whether it changed."""
    event, what = HOOKS[kind]
    entry: dict[str, Any] = {"type": "command", "command": command}
    if kind == "prompt":
        entry["timeout"] = PROMPT_TIMEOUT
    groups = _event_groups(data, path, event)
    ours = _our_entries(groups, kind)
    timeout = ours[0][1].get("timeout") if ours else None
    if "timeout" in entry and isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        entry["timeout"] = timeout  # the user's own budget for the hook stays theirs
    if len(ours) == 1 and all(ours[0][1].get(key) == value for key, value in entry.items()):
        return f"{what} already installed in {path}: {command}", False
    if ours:
        _, hook = ours[0]
        # Every entry replaced is named, a second one too (two installs with other homes).
        old = "".join(f"\n  - {h.get('command')}" for _, h in ours)
        hook.update(entry)
        _drop(groups, ours[1:])
        return f"updated the {what} in {path}:{old}\n  + {command}", True
    groups.append({"hooks": [entry]})
    return f"added a {what} to {path}:\n  + {command}", True


def _drop(groups: list[Any], entries: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for group, hook in entries:
        group["hooks"] = [h for h in group["hooks"] if h is not hook]
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]


def uninstall(path: Path, kinds: tuple[str, ...] = tuple(HOOKS)) -> Change:
    """Remove brain's hooks of ``kinds`` (both by default) from the settings file at ``path``, nothing else."""
    with editing(path):
        return _uninstall(path, kinds)


def _uninstall(path: Path, kinds: tuple[str, ...]) -> Change:
    data = load_settings(path)
    if data is None:
        return Change(path, False, f"not installed: {path} does not exist")
    hooks = data.get("hooks")
    made = MADE.made(path)
    removed: list[str] = []
    for kind in kinds:
        event, what = HOOKS[kind]
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        ours = _our_entries(groups, kind) if isinstance(groups, list) else []
        if not ours:
            continue
        assert isinstance(hooks, dict) and isinstance(groups, list)  # ours is empty otherwise
        _drop(groups, ours)
        if not groups and f"hooks.{event}" in made:  # the list install made; one of the user's stays
            del hooks[event]
        removed += [f"removed the {what} from {path}:"] + [f"  - {hook.get('command')}" for _, hook in ours]
    if not removed:
        names = " or ".join(HOOKS[kind][1] for kind in kinds)
        return Change(path, False, f"not installed in {path}: no brain {names} found")
    if isinstance(hooks, dict) and not hooks and "hooks" in made:
        del data["hooks"]
    # What install made is brain's while a hook of brain's is in the file; after that, whatever
    # is left in it (the user's hooks put in a list install made) is the user's.
    left = isinstance(hooks, dict) and any(
        isinstance(hooks.get(event), list) and _our_entries(hooks[event], kind) for kind, (event, _) in HOOKS.items()
    )
    if not data and FILE in made and not left and not path.is_symlink():
        path.unlink()  # nothing in it but what brain put there
        MADE.forget(path)
        return Change(path, True, "\n".join(removed) + f"\nremoved {path}: brain hook install had made it")
    backup = save_settings(path, data, True)
    MADE.forget(path, None if not left else [f"hooks.{HOOKS[kind][0]}" for kind in kinds])
    return Change(path, True, "\n".join(removed) + f"\nbackup: {backup}", backup)
