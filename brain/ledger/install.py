"""Add or remove brain's hooks in a Claude Code ``settings.json``.

Two kinds: ``stop`` (the ``Stop`` event, ``brain hook stop``: the turn ledger) and ``prompt``
(the ``UserPromptSubmit`` event, ``brain hook prompt``: automatic recall). The merge keeps every
other setting and hook of the user, is idempotent, backs the file up before changing it, and
reports what it did. The file keeps its mode and owner (a 0600 file stays 0600, and so is its
backup), a symlinked file is written through to its target, and a read-only one is left alone,
as is one whose owner the new file could not keep and JSON the rewrite would change (a key twice,
NaN, a number that overflows). Edits of one file are serialised (``editing``), one made between
brain's read and write by another program is not written over (``anew_if_changed``), and only a
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

try:
    import fcntl
except ImportError:  # Windows: edits are not serialised
    fcntl = None  # type: ignore[assignment]

from .. import config
from ..errors import ConfigError, quoted
from ..file_state import kind_of
from ..install_record import FILE, FOLDER, FOLDER_THERE, InstallRecord, folders_above, folders_above_made
from ..text import literal

# kind → (the Claude Code event, what a message calls it)
HOOKS = {"stop": ("Stop", "Stop hook"), "prompt": ("UserPromptSubmit", "prompt hook")}
EVENT = HOOKS["stop"][0]
PROMPT_TIMEOUT = 10  # seconds Claude Code gives the prompt hook (its own budget is far less)
BOM = "\ufeff"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*(?:\.exe)?|py(?:\.exe)?")
# The bytes each settings file held when brain last read or wrote it, by its real path (None:
# no file). Another program's write (Claude Code rewrites ~/.claude.json as it runs; `claude mcp
# add`, an editor) between brain's read and its replace was written over, the user's change lost:
# the file is now compared just before, and the edit made anew from what it holds then.
_read_as: dict[str, bytes | None] = {}
EDIT_TRIES = 5
_T = TypeVar("_T")


class ChangedMeanwhile(ConfigError):
    """The settings file changed between brain's read of it and its write: nothing was written."""


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


def make_folder(path: Path) -> int:
    """Make the folder ``path`` goes in (its target's, for a link), and those above it, when
    missing; how many it made (0: none). ``~/.claude/`` is made owner-only (0700): Claude Code keeps its
    settings and every session's transcript there, and the umask's mode (0755) let every user of
    the machine read them. Any other folder gets the umask's mode; one already there is left as it is."""
    private = Path(os.path.abspath(path)).parent == Path.home() / ".claude"
    folder = Path(os.path.realpath(path)).parent
    if folder.is_dir():
        return 0
    missing = [each for each in (folder, *folder.parents) if not each.exists()]
    folder.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    return len(missing)


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


def nameable(what: str, value: str) -> str:
    """``value`` (a path) as Claude Code's settings can hold it, else a ConfigError: they are
    JSON, UTF-8. A path with bytes that are not UTF-8 (surrogates here) was written as
    ``\\udcff``, which Claude Code reads as another path: the hook or the server it started
    found no vault, with nothing said."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"{what} {quoted(value)} is not valid UTF-8, and Claude Code's settings (JSON) cannot name it: "
            "rename it, or use a path that is"
        ) from None
    return value


def hook_command(kind: str = "stop", vault: Path | None = None) -> str:
    """The shell command Claude Code should run: absolute, quoted, with our env vars (and, for
    the prompt hook, the vault as ``BRAIN_VAULT``)."""
    base = " ".join(shlex.quote(nameable("brain's own path", part)) for part in brain_executable())
    pinned = pinned_env()
    if vault is not None:
        pinned["BRAIN_VAULT"] = nameable("the vault's path", str(vault))
    env = [f"{name}={shlex.quote(value)}" for name, value in pinned.items()]
    return " ".join([*env, base, "hook", kind])


def pinned_env() -> dict[str, str]:
    """The locations set in this environment (absolute), for a command Claude Code runs, so it
    writes and reads where this shell's brain does. One that cannot be what it names (a
    ``BRAIN_HOME`` that is a file or a FIFO, a ``BRAIN_DB`` that is a folder) is refused: written
    into the settings, the hook or the server failed at every start, said only in Claude Code's log."""
    pinned = {}
    for name in ("BRAIN_HOME", "BRAIN_DB"):
        if value := config.env(name):  # as brain_home() and db_path() read them
            path = Path(value).expanduser().absolute()
            _refuse_unusable(name, path)
            pinned[name] = nameable(name, str(path))
    return pinned


def _refuse_unusable(name: str, path: Path) -> None:
    """A ConfigError when ``path`` (``BRAIN_HOME``, a folder; ``BRAIN_DB``, a file) is something
    else, or lies under something that is not a folder."""
    wanted = "a folder" if name == "BRAIN_HOME" else "a file"
    hint = f"set {name} to {'a folder' if name == 'BRAIN_HOME' else 'a file path'} (or unset it) and install again"
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError:  # unreadable: brain's own commands say so when they open it
        return
    if mode is not None:
        ok = stat.S_ISDIR(mode) if name == "BRAIN_HOME" else stat.S_ISREG(mode)
        if not ok:
            raise ConfigError(f"{name} {quoted(str(path))} is {kind_of(mode)}, not {wanted}: {hint}")
        return
    for above in path.parents:  # the first that exists must be a folder to make the rest in
        try:
            mode = above.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return
        if not stat.S_ISDIR(mode):
            raise ConfigError(
                f"{name} {quoted(str(path))} cannot be made: {quoted(str(above))} is {kind_of(mode)}, not a folder; {hint}"
            )
        return


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
        _read_as[os.path.realpath(path)] = None
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    _read_as[os.path.realpath(path)] = raw
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


def _unchanged_since_read(target: Path, path: Path) -> None:
    """Raise ``ChangedMeanwhile`` when the settings file at ``target`` (``path``'s real path) no
    longer holds what brain read of it (``load_settings``); one brain did not read is not asked."""
    key = str(target)
    if key not in _read_as:
        return
    try:
        now: bytes | None = target.read_bytes()
    except FileNotFoundError:
        now = None
    if now != _read_as[key]:
        raise ChangedMeanwhile(
            f"{path} was changed by another program each time brain was about to write it ({EDIT_TRIES} tries): "
            "nothing of brain's was written; run this again (with Claude Code closed, if it keeps rewriting the file)"
        )


def anew_if_changed(edit: Callable[[], _T]) -> _T:
    """``edit`` (read the settings file, change it, write it), made anew from the file as it is
    when another program wrote it meanwhile (``ChangedMeanwhile``), up to ``EDIT_TRIES`` times."""
    for _ in range(EDIT_TRIES - 1):
        with contextlib.suppress(ChangedMeanwhile):
            return edit()
    return edit()


def _jsonc_hint(text: str, exc: ValueError) -> str:
    """What Claude Code's readers and editors take but JSON does not (a comment, a trailing
    comma), named where the error is: the message alone ("Expecting property name") hid it."""
    pos = getattr(exc, "pos", None)
    if not isinstance(pos, int) or pos >= len(text):
        return ""
    if text[pos] == "/" and text[pos : pos + 2] in ("//", "/*"):
        return ": a comment there, and JSON allows none"
    # Found by the comma itself: 3.11 reports the brace after it, 3.13 the comma (another message).
    if (text[pos] in "}]" and text[:pos].rstrip().endswith(",")) or (
        text[pos] == "," and text[pos + 1 :].lstrip()[:1] in ("}", "]")
    ):
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
def editing(path: Path, *, create: bool = False) -> Iterator[int]:
    """One brain edit of ``path`` at a time, from reading it to replacing it, so installs run
    at once each see the change of the one before instead of writing over it. The lock is an
    flock on the folder that holds the file (its target, for a link): no lock file is left in
    the user's folder, and a lock that cannot be taken (no fcntl, an unreadable folder) is
    skipped rather than stopping the edit. ``create`` makes the folder first (an install writes
    there anyway), so that the first installs into a new folder wait for each other too; what it
    yields is how many folders it made (that folder and those above it)."""
    folder = Path(os.path.realpath(path)).parent
    made = 0
    for _ in range(10):
        if create:
            try:
                made = make_folder(path) or made
            except OSError as exc:
                where = exc.filename or folder
                raise ConfigError(f"cannot write {path}: {exc.strerror or exc} ({where}); nothing was changed") from exc
        fd = _lock(folder)
        # An uninstall this waited for may have removed the folder (brain had made it): the lock
        # held is then on a folder gone, which the next install into a new one would not wait for.
        if fd is None or not create or _is_folder(fd, folder):
            break
        os.close(fd)
        fd = None
    try:
        yield made
    finally:
        if fd is not None:
            os.close(fd)  # closing releases the flock


def _lock(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding its flock, or None when none can be taken."""
    if fcntl is None:
        return None
    fd = None
    try:
        fd = os.open(folder, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        if fd is not None:
            os.close(fd)
        return None
    return fd


def _is_folder(fd: int, folder: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(folder))
    except OSError:
        return False


def save_settings(path: Path, data: dict[str, Any], existed: bool, *, exactly: bytes | None = None) -> Path | None:
    """Write ``data`` to ``path`` as the file it replaces was: same mode, owner and place.

    A symlinked settings file (dotfiles) is written through: its target changes, the link
    stays. A read-only file is refused. The new content goes to a temporary file beside
    the target, then replaces it in one step, so no half-written settings file is ever
    seen; on any error the settings file is unchanged. ``exactly``: these bytes, ``data``
    as a backup holds it (``settle``), and no backup.
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
    if exactly is not None:
        return _write(path, target, exactly, original, backup=False)
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
    return _write(path, target, text.encode("utf-8"), original, backup=True)


def _write(path: Path, target: Path, content: bytes, original: os.stat_result | None, *, backup: bool) -> Path | None:
    made = None
    try:
        make_folder(path)
        if original is not None and backup:
            made = _backup(path, target, original)
        _replace(target, content, original, private=user_scope(path), path=path)
    except ChangedMeanwhile:
        if made is not None:  # a copy of the file as another program left it, and brain changed nothing
            made.unlink(missing_ok=True)
        raise
    except OSError as exc:
        if made is not None:
            made.unlink(missing_ok=True)
        where = Path(exc.filename or target)
        if where.name.startswith(f".{target.name}.tmp-"):  # the new file written beside: its folder is what refused
            where = where.parent
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc} ({where}); the file is unchanged") from exc
    return made


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
        colon = ": " if '": ' in body else ":"
        # one key has no comma to go by: spaced as its colon is ({"a": 1,"hooks": …} read badly)
        comma = ", " if ", " in body else "," if "," in body else colon.replace(":", ",")
        return {"separators": (comma, colon)}, end, newline, mark
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


# The most backups uninstall reads, newest first: each is parsed, which takes as long as the file
# itself does (bench/uninstall_backups_cost.py).
BACKUPS_READ = 5


def backups_of(path: Path) -> list[Path]:
    """The backups brain took of ``path`` (``_backup``'s names), newest first: regular files only."""
    stamped = re.compile(re.escape(path.name) + r"\.bak-(\d{8}-\d{6})(?:-(\d+))?")
    found = []
    with contextlib.suppress(OSError):
        for each in path.parent.iterdir():
            match = stamped.fullmatch(each.name)
            if match and not each.is_symlink() and each.is_file():
                found.append(((match.group(1), int(match.group(2) or 0)), each))
    return [each for _, each in sorted(found, reverse=True)]


Spot = tuple[str, ...]  # where a container is in the settings: its keys from the top


def _all_hold_ours(path: Path, emptied: list[Spot], held: Callable[[Any, Spot], bool]) -> bool:
    """Whether each of brain's backups of ``path`` holds an entry of brain's in a container its
    uninstall empties (``held``): then none is the file before brain's first install. More than
    ``BACKUPS_READ`` of them, or one unread: not known, False."""
    backups = backups_of(path)
    if not backups or len(backups) > BACKUPS_READ:
        return False
    for backup in backups:
        before = _read_backup(backup)[1]
        if before is None or not any(held(before, spot) for spot in emptied):
            return False
    return True


def _older_claude_folder(target: Path) -> bool:
    """Whether the folder of ``target``, a file an install made (by the record, or by having no
    backup) whose folder's maker no record names, is the ``.claude/`` folder that install made:
    an older brain's install recorded neither ``folder`` nor ``folder-there``, and left an empty
    ``.claude/`` behind. ``brain hook install`` makes a ``.claude/`` where it has none; a folder
    with anything in it stays (rmdir), and an MCP config's folder is the project's."""
    return target.parent.name == ".claude" and target.name == "settings.json"


def settle(
    path: Path,
    data: dict[str, Any],
    emptied: list[Spot],
    made: list[Spot] | None,
    held: Callable[[Any, Spot], bool],
    strip: Callable[[dict[str, Any]], dict[str, Any]],
) -> tuple[dict[str, Any], list[Path], bool]:
    """``data``, brain's entries taken out, less the containers they leave empty (``emptied``,
    innermost first) that install made: those of ``made``, what the record says (None: there is
    no record, an older brain's install, or another BRAIN_HOME's), and those brain's backups
    of the file show install made. A backup equal to ``data`` but for some of them is the file
    before install; with no record, so is the newest backup without brain's entry that is in a
    container now (``held``): every later one was taken with that entry in the file. What it
    returns: that data; the backup holding it (none when none does, or when the file's layout
    has changed since: the user's own edit), then those taken since that, brain's entries taken
    out (``strip``), hold it too (a second install's: the file then held nothing more than
    brain's entries, and the user's all are in it now); and whether brain has any backup of the file."""
    backups = backups_of(path)[:BACKUPS_READ]
    known, made = made is not None, made or []
    optional = [spot for spot in emptied if spot not in made]
    variants = []
    for mask in range(2 ** len(optional)):
        drops = set(made) | set(_pick(optional, mask))
        variant = _without(data, [spot for spot in emptied if spot in drops])
        if variant is not None:
            variants.append(variant)
    fallback = _without(data, [spot for spot in emptied if spot in made], strict=False)
    assert fallback is not None  # not strict: never None
    try:
        layout = _layout(Path(os.path.realpath(path)).read_bytes().decode("utf-8", "replace"))
    except OSError:
        return fallback, [], bool(backups)
    read: list[Any] = []
    for backup in backups:
        raw, before = _read_backup(backup)
        for variant in variants if before is not None else ():
            if _same(variant, before):
                text = (raw or b"").decode("utf-8", "replace")
                # a blank file has no layout the user chose: install gave it brain's
                if not (_layout(text) == layout or not text.removeprefix(BOM).strip()):
                    return variant, [], True
                since = [
                    backups[i] for i, each in enumerate(read) if each is not None and _only(strip(each), data, emptied)
                ]
                return variant, [backup, *since], True
        read.append(before)
        # the file before the newest install of brain's entries: one older would be before an earlier one
        if before is not None and emptied and not any(held(before, spot) for spot in emptied):
            break
    if known:
        return fallback, [], bool(backups)
    found: list[Spot] = []
    for spot in emptied:
        for before in read:
            if before is None:  # unread, it may be the one: nothing is known
                break
            if not held(before, spot):
                if not _has(before, spot):
                    found.append(spot)
                break
    settled = _without(data, found, strict=False)
    assert settled is not None
    return settled, [], bool(backups)


def _read_backup(backup: Path) -> tuple[bytes | None, dict[str, Any] | None]:
    """A backup's bytes and settings, None for what cannot be read: plain json.loads, without
    load_settings' checks, which install made of the file it backed up (a fifth faster)."""
    try:
        raw = backup.read_bytes()
    except OSError:
        return None, None
    try:
        text = raw.decode("utf-8").removeprefix(BOM)
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):
        return raw, None
    return raw, data if isinstance(data, dict) else None


def _only(before: dict[str, Any], data: dict[str, Any], emptied: list[Spot]) -> bool:
    """Whether ``before`` (a backup, brain's entries taken out) is ``data`` with some of the
    containers ``emptied`` dropped: it holds nothing the file does not."""
    states = (_without(data, _pick(emptied, mask)) for mask in range(2 ** len(emptied)))
    return any(state is not None and _same(before, state) for state in states)


def _pick(spots: list[Spot], mask: int) -> list[Spot]:
    """The spots whose bits are set in ``mask``, in their order."""
    return [spot for i, spot in enumerate(spots) if mask >> i & 1]


def _same(one: Any, other: Any) -> bool:
    """Equal, and the keys in the same order: == first, fast, and it tells most apart."""
    return bool(one == other and json.dumps(one) == json.dumps(other))


def _has(data: dict[str, Any], spot: Spot) -> bool:
    here: Any = data
    for key in spot:
        if not isinstance(here, dict) or key not in here:
            return False
        here = here[key]
    return True


def _without(data: dict[str, Any], spots: list[Spot], *, strict: bool = True) -> dict[str, Any] | None:
    """``data`` less the empty containers at ``spots`` (copied where they change); one that is
    not empty by then stays, or, ``strict``, makes it None: no state the file had."""
    out = dict(data)
    for spot in spots:
        parent: Any = out
        for key in spot[:-1]:
            child = parent.get(key) if isinstance(parent, dict) else None
            if not isinstance(child, dict):
                break
            parent[key] = child = dict(child)
            parent = child
        else:
            if isinstance(parent, dict) and spot[-1] in parent and not parent[spot[-1]]:
                del parent[spot[-1]]
                continue
        if strict:
            return None
    return out


def _replace(
    target: Path, content: bytes, original: os.stat_result | None, *, private: bool = False, path: Path | None = None
) -> None:
    """Put ``content`` in place of ``target`` in one step: with ``original``'s owner and mode, or
    new: 0600 when ``private``, else what the umask gives. ``ChangedMeanwhile`` when ``target``
    no longer holds what brain read of it (``path``: the name the user gave, for the message)."""
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
        _unchanged_since_read(target, path or target)
        os.replace(tmp, target)
        _read_as[str(target)] = content
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
    with editing(path, create=True) as folders_made:
        return anew_if_changed(lambda: _install_hooks(path, commands, folders_made))


def _install_hooks(path: Path, commands: dict[str, str], folders_made: int) -> Change:
    loaded = load_settings(path)
    existed = loaded is not None
    data = loaded if loaded is not None else {}
    _same_database(data, path, commands)
    made = _would_make(data, existed, commands)
    if not existed:
        made.update([FOLDER if folders_made else FOLDER_THERE, *folders_above(folders_made - 1)])
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
        messages.append(f"backup: {literal(str(backup))}")
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
        return f"{what} already installed in {literal(str(path))}: {command}", False
    if ours:
        _, hook = ours[0]
        # Every entry replaced is named, a second one too (two installs with other homes).
        old = "".join(f"\n  - {h.get('command')}" for _, h in ours)
        hook.update(entry)
        _drop(groups, ours[1:])
        return f"updated the {what} in {literal(str(path))}:{old}\n  + {command}", True
    groups.append({"hooks": [entry]})
    return f"added a {what} to {literal(str(path))}:\n  + {command}", True


def _drop(groups: list[Any], entries: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for group, hook in entries:
        group["hooks"] = [h for h in group["hooks"] if h is not hook]
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]


def uninstall(path: Path, kinds: tuple[str, ...] = tuple(HOOKS)) -> Change:
    """Remove brain's hooks of ``kinds`` (both by default) from the settings file at ``path``, nothing else."""
    with editing(path):
        return anew_if_changed(lambda: _uninstall(path, kinds))


def _elsewhere(hooks: Any, kinds: tuple[str, ...]) -> list[str]:
    """Brain's hooks of ``kinds`` under an event install never puts them under (moved there by
    hand): uninstall leaves them, and says where; "no brain Stop hook found" let one go on
    recording turns unsaid."""
    if not isinstance(hooks, dict):
        return []
    lines = []
    for event, groups in hooks.items():
        for kind in kinds:
            if event != HOOKS[kind][0] and isinstance(groups, list):
                lines += [
                    f'brain\'s hook under "{event}" is left as it is: {hook.get("command")} '
                    "(install puts none there: remove it by hand)"
                    for _, hook in _our_entries(groups, kind)
                ]
    return lines


def _uninstall(path: Path, kinds: tuple[str, ...]) -> Change:
    data = load_settings(path)
    if data is None:
        return Change(path, False, f"not installed: {literal(str(path))} does not exist")
    hooks = data.get("hooks")
    elsewhere = _elsewhere(hooks, kinds)
    made = MADE.made(path)
    removed: list[str] = []
    emptied: list[Spot] = []  # the containers brain's hooks were in that they leave empty
    for kind in kinds:
        event, what = HOOKS[kind]
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        ours = _our_entries(groups, kind) if isinstance(groups, list) else []
        if not ours:
            continue
        assert isinstance(hooks, dict) and isinstance(groups, list)  # ours is empty otherwise
        _drop(groups, ours)
        if not groups:
            emptied.append(("hooks", event))
        removed += [f"removed the {what} from {literal(str(path))}:"] + [
            f"  - {hook.get('command')}" for _, hook in ours
        ]
    if not removed:
        names = " or ".join(HOOKS[kind][1] for kind in kinds)
        return Change(
            path, False, "\n".join([f"not installed in {literal(str(path))}: no brain {names} found", *elsewhere])
        )
    if isinstance(hooks, dict) and set(hooks) <= {spot[-1] for spot in emptied}:
        emptied.append(("hooks",))
    # What install made is brain's while a hook of brain's is in the file; after that, whatever
    # is left in it (the user's hooks put in a list install made) is the user's.
    left = isinstance(hooks, dict) and any(
        isinstance(hooks.get(event), list) and _our_entries(hooks[event], kind) for kind, (event, _) in HOOKS.items()
    )
    # the list install made, and "hooks"; one of the user's stays
    spots = [spot for spot in emptied if ".".join(spot) in made]
    lists = [f"hooks.{HOOKS[kind][0]}" for kind in kinds]
    tail, backup = put_back(
        path,
        data,
        emptied,
        spots,
        made,
        _holds_ours,
        _stripped,
        lambda: MADE.forget(path, None if not left else lists),
        left=left,
        installer="brain hook install",
    )
    return Change(path, True, "\n".join(removed) + tail + "".join(f"\n{line}" for line in elsewhere), backup)


def _stripped(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (read from a backup: changed in place) without brain's hooks."""
    hooks = data.get("hooks")
    for kind in HOOKS:
        groups = hooks.get(HOOKS[kind][0]) if isinstance(hooks, dict) else None
        if isinstance(groups, list):
            _drop(groups, _our_entries(groups, kind))
    return data


def _holds_ours(data: Any, spot: Spot) -> bool:
    """Whether the settings ``data`` hold a hook of brain's in ``spot``: "hooks", an event's list."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    kinds = [kind for kind, (event, _) in HOOKS.items() if spot in (("hooks",), ("hooks", event))]
    return isinstance(hooks, dict) and any(
        isinstance(hooks.get(HOOKS[kind][0]), list) and _our_entries(hooks[HOOKS[kind][0]], kind) for kind in kinds
    )


def put_back(
    path: Path,
    data: dict[str, Any],
    emptied: list[Spot],
    spots: list[Spot],
    made: set[str],
    held: Callable[[Any, Spot], bool],
    strip: Callable[[dict[str, Any]], dict[str, Any]],
    forget: Callable[[], None],
    *,
    left: bool,
    installer: str,
) -> tuple[str, Path | None]:
    """Write ``data``, brain's entries taken out of it, back to ``path``, less what brain's install
    made for them (``settle``): ``spots``, the containers of ``emptied`` the record names, and
    the file (``made``); ``left``: brain still has an entry in the file, and it stays. What it
    says of it, and the backup taken. Where a backup brain took holds the file as it now is
    (what it was before install), the file gets its bytes back, and that backup goes, with those
    taken since that hold nothing more than it and brain's entries (``strip``); no backup is
    taken either: the file lost nothing of the user's. A file brain made goes with its backups
    of that kind, and the folder brain made for it when nothing else is in it. ``forget`` drops
    what the record says, once the file is written (or gone) and before the folder goes."""
    settled, same, backed_up = settle(path, data, emptied, spots if made else None, held, strip)
    # No record (an older brain's install) and no backup without brain's entries: install backs up
    # every file it changes, so brain made this one (a backup holding them is a later install's, of
    # the file brain made: it was left as {"hooks": {"Stop": []}}), and nothing but the containers
    # of its entries is left in it.
    made_here = not backed_up or _all_hold_ours(path, emptied, held)
    if not made and made_here and _without(data, emptied) == {} and not path.is_symlink():
        settled, made = {}, {FILE}
    if not settled and FILE in made and not left:
        target = Path(os.path.realpath(path))  # of a link, what the link names: brain made that
        _unchanged_since_read(target, path)  # what another program wrote in it meanwhile stays
        try:
            target.unlink()
        except OSError as exc:
            raise ConfigError(
                f"cannot remove {path}, which {installer} made: {exc.strerror or exc}; it is unchanged"
            ) from exc
        # an update's: brain's entries, nothing more (every one: a file with nothing else is small)
        for taken in backups_of(path):
            before = _read_backup(taken)[1]
            if before is not None and _only(strip(before), data, emptied):
                with contextlib.suppress(OSError):
                    taken.unlink()
        forget()
        # Last: an install into a folder made anew does not wait for this one's lock, on this folder.
        folder = ""
        if FOLDER in made or (FOLDER_THERE not in made and _older_claude_folder(target)):
            gone = []
            # and those above it install made too: `--settings new/deep/s.json` left new/ behind
            for each in [target.parent, *target.parent.parents][: 1 + folders_above_made(made)]:
                try:  # not empty: something else is in it now, and it stays (and those above it)
                    each.rmdir()
                except OSError:
                    break
                gone.append(str(each))
            if gone:
                folder = f", and its folder{'s' if len(gone) > 1 else ''} {', '.join(gone)}"
        return f"\nremoved {path}: {installer} had made it{folder}", None
    if same:
        with contextlib.suppress(OSError):
            raw = same[0].read_bytes()
            save_settings(path, settled, True, exactly=raw)
            for each in same:
                with contextlib.suppress(OSError):
                    each.unlink()
            forget()
            names = ", ".join(each.name for each in same)
            return (
                f"\n{path} is back as it was before {installer}; brain's backups of it, holding nothing more, "
                f"are removed: {names}",
                None,
            )
    backup = save_settings(path, settled, True)
    forget()
    return f"\nbackup: {backup}", backup
