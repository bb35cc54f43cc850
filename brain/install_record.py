"""What brain's installs made in the files they edit, so that uninstall takes away that and
nothing the user had: ``brain hook install`` and ``brain mcp install`` each keep a record.

A record is a JSON object in ``BRAIN_HOME``: a file's absolute path → the things install made
there (``"file"``, the file itself; other names are the installer's own, a key it added). An
empty container of the user's (``"hooks": {}``, ``"mcpServers": {}``) is theirs, and stays;
one install made goes with brain's last entry in it. Without a record (another ``BRAIN_HOME``,
one that cannot be written) nothing is known, and uninstall removes brain's entries alone.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: updates of the record are not serialised
    fcntl = None  # type: ignore[assignment]

from . import config
from .errors import BrainError

FILE = "file"  # install made the file itself
FOLDER = "folder"  # and the folder it is in (a project's .claude/)
# The file made in a folder that was there already: the user's (or Claude Code's), which stays.
# An older brain recorded neither: its FILE alone leaves the folder's maker unknown (``put_back``).
FOLDER_THERE = "folder-there"
# The folders above FOLDER install made too (`--settings new/deep/s.json` made new/ as well):
# "folders-above-1"; uninstall left them behind, empty.
_ABOVE = "folders-above-"


def folders_above(count: int) -> list[str]:
    """The record's name for ``count`` folders made above the file's (none for 0)."""
    return [f"{_ABOVE}{count}"] if count > 0 else []


def folders_above_made(made: Iterable[str]) -> int:
    """How many folders above the file's install made, by its record (0: none, or not known)."""
    counts = [int(each[len(_ABOVE) :]) for each in made if each.startswith(_ABOVE) and each[len(_ABOVE) :].isdigit()]
    return max(counts, default=0)


class InstallRecord:
    """The record ``BRAIN_HOME/<name>``: what one kind of install made, by file."""

    def __init__(self, name: str) -> None:
        self.name = name

    def made(self, path: Path) -> set[str]:
        """What install made at ``path``; empty when nothing, or when it is not known."""
        with contextlib.suppress(OSError, BrainError):
            return set(self._read()[1].get(os.path.abspath(path), ()))
        return set()

    def remember(self, path: Path, made: Iterable[str]) -> None:
        """Add ``made`` to what install made at ``path``."""
        made = set(made)
        if not made:
            return
        with contextlib.suppress(OSError, BrainError), self._locked():  # not kept: uninstall then leaves them
            record, known = self._read()
            key = os.path.abspath(path)
            known[key] = sorted(made | set(known.get(key, ())))
            self._write(record, known)

    def forget(self, path: Path, made: Iterable[str] | None = None) -> None:
        """Drop ``made`` (all of it, when None) from what install made at ``path``."""
        with contextlib.suppress(OSError, BrainError), self._locked():
            record, known = self._read()
            key = os.path.abspath(path)
            if key not in known:
                return
            left = [] if made is None else [each for each in known[key] if each not in set(made)]
            if left == known[key]:
                return
            if left:
                known[key] = left
            else:
                del known[key]
            self._write(record, known)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One update of the record at a time: installs into other files (each edit locks only its
        own file's folder) read the record at once, and the last write dropped the others' entries.
        A lock file of its own in BRAIN_HOME, not the folder, which an edit of a settings file kept
        there may hold already. A lock that cannot be taken is skipped rather than the update."""
        fd = None
        if fcntl is not None:
            with contextlib.suppress(OSError, BrainError):
                folder = config.brain_home()
                config.private_folder(folder)
                fd = os.open(folder / f".{self.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing releases the flock

    def _read(self) -> tuple[Path, dict[str, list[str]]]:
        record = config.brain_home() / self.name
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        known: dict[str, list[str]] = {}
        for path, made in data.items() if isinstance(data, dict) else ():
            items = made if isinstance(made, list) else []  # a record edited by hand: what is sound of it
            if items := [each for each in items if isinstance(each, str)]:
                known[path] = items
        return record, known

    def _write(self, record: Path, known: dict[str, list[str]]) -> None:
        config.private_folder(record.parent)
        tmp = record.with_name(f".{record.name}.tmp-{os.getpid()}")
        config.private_file(tmp)  # which settings files brain wrote, where: the user's alone
        tmp.write_text(json.dumps(known, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, record)
