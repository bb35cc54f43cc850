"""Reading notes back out of a vault: find one by path, title or alias; its text; its links.

What ``brain note``, ``brain neighbours``, ``brain serve`` and the MCP tools ``get_note`` and
``neighbours`` answer. Only notes in the index can be read, and only while the walk would index
them as they are now (``inside_vault``): ``.brainignore``, dot-folders and the other skip rules
hold for a note and for where it leads now, should it have become a symlink. A note the walk
reaches through a symlink out of the vault (a folder kept elsewhere) is read as it is indexed;
a name typed as an absolute path or with a ``..`` step is refused with ``OutsideVault``.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
import stat
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import BrainError, EmptyNoteName, bug_summary, quoted
from .links import Link, Resolver, first_match, outline, pasted_link_target
from .notes import looks_binary, parse_note
from .text import shell_word, yo_as_ye
from .vault import DENIED, NOT_DOWNLOADED, READ_ERROR, excluded, left_out_now, load_ignore, max_note_bytes, megabytes

if TYPE_CHECKING:
    from .index.store import IndexStore


class NoteNames(Protocol):
    """What a note is found by (``match_note``): the index's notes now, or a moment's."""

    def note_paths(self) -> set[str]: ...

    def aliases_by_path(self) -> dict[str, list[str]]: ...

    def note_titles(self) -> list[tuple[str, str]]: ...


DEFAULT_MAX_CHARS = 40_000  # a long note is cut here (MCP clients cap a tool's output too)
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_HERE = re.compile(r"^(?:\./+)+")  # ./People/Alice.md, as a shell completes it (and eval's labels take)


class NoteNotFound(BrainError):
    """No indexed note answers to the name (the message suggests near names)."""


class NoNoteNamed(NoteNotFound):
    """No indexed note answers to the name; ``suggested``: the message names near ones."""

    def __init__(self, message: str, suggested: bool = False):
        super().__init__(message)
        self.suggested = suggested


class OutsideVault(BrainError):
    """The reference points outside the vault; brain never reads there."""


def check_reference(ref: str) -> str:
    """The reference with slashes normalised and leading ``./`` steps dropped; ``OutsideVault``
    for absolute paths and ``..`` steps."""
    text = ref.strip()
    if not text:
        raise EmptyNoteName()
    if "\0" in text:
        raise OutsideVault("a note reference cannot hold a NUL byte")
    normal = text.replace("\\", "/")
    if normal.startswith(("/", "~")) or _DRIVE.match(text):
        raise OutsideVault(f"{quoted(ref)} is an absolute path: give a vault-relative path, a title or an alias")
    if ".." in normal.split("/"):
        raise OutsideVault(
            f"{quoted(ref)} steps out of its folder (..): give a vault-relative path, a title or an alias"
        )
    return _HERE.sub("", normal) or normal


@dataclass(frozen=True)
class NoteMatch:
    """The note a reference was taken to name, and the others it names as well (``others``,
    by path): notes of the same name, alias or title, none spelled closer to it than the one
    taken (which is the one a link from the vault's root leads to)."""

    path: str
    others: tuple[str, ...] = ()

    def ambiguity(self, ref: str) -> str | None:
        """One line for the reader when the name fits several notes; None when it fits one."""
        if not self.others:
            return None
        shown, *others = told_apart([self.path, *self.others])
        listed = ", ".join([f"{shown} (shown)", *others])
        return f"{len(self.others) + 1} notes are named {ref.strip()}: {listed}; give the path"


def told_apart(names: list[str]) -> list[str]:
    """``names`` as a message lists them, each that reads as another of them (the same composed,
    other bytes) with how its accents are written: on Linux a vault may hold ``Café.md`` typed
    composed and decomposed (as macOS writes names), and listed bare the two looked one name.
    ``Café.md [composed]``, ``Café.md [decomposed]`` (``[mixed]``: some of each)."""
    seen: dict[str, set[str]] = {}
    for name in names:
        seen.setdefault(unicodedata.normalize("NFC", name), set()).add(name)
    return [
        f"{name} [{_composition(name)}]" if len(seen[unicodedata.normalize("NFC", name)]) > 1 else name
        for name in names
    ]


def _composition(name: str) -> str:
    if unicodedata.is_normalized("NFC", name):
        return "composed"
    return "decomposed" if unicodedata.is_normalized("NFD", name) else "mixed"


def find_note(store: IndexStore, ref: str) -> str:
    """The vault-relative path of the indexed note ``ref`` names: a path, a title or an alias
    (``match_note``, for the note taken alone)."""
    return match_note(store, ref).path


def match_note(store: NoteNames, ref: str) -> NoteMatch:
    """The indexed note ``ref`` names (a path, a title or an alias), and the others it fits.

    Tried in order: the exact path (``.md`` optional), then Obsidian's link resolution (path
    ignoring case, end of a path, file name, alias), then the title. Within a step a note
    spelled as typed comes first, then one equal to it in Unicode's NFC form, then any equal
    ignoring case: ``idea`` reads ``Notes/idea.md`` beside ``Notes/Idea.md``, and a name
    typed composed reads the composed file beside its decomposed twin. Link resolution itself
    keeps Obsidian's rules (the graph's links), where the note Obsidian opens wins.
    """
    normal = check_reference(ref)
    paths = store.note_paths()
    for candidate in (normal, normal + ".md"):
        if candidate in paths:
            return NoteMatch(candidate)
    aliases = store.aliases_by_path()
    resolver = Resolver(paths, aliases)
    resolved = resolver.resolve(Link(normal, "wikilink", None, None, 0), "")
    if resolved is not None and resolved != "":
        return _closest(*resolver.answering_step(normal), resolved)
    titles = store.note_titles()
    named = [(path, [title]) for path, title in titles if title.casefold() == normal.casefold()]
    if named:
        group = _spelled_closest(normal, named)
        return NoteMatch(group[-1], tuple(p for p in group[:-1]))  # the last by path, as before
    target = pasted_link_target(ref)  # after every literal name: an alias may be "[[Weird]]"
    if target is not None and target != ref:
        with contextlib.suppress(NoteNotFound):  # not found: the error names what was typed
            return match_note(store, target)
    loose = _loosely_named(normal, paths, titles, aliases)
    if loose:
        taken = first_match(loose, "")  # the one a root [[link]] of the name would open
        return NoteMatch(taken, tuple(p for p in loose if p != taken))
    raise no_note_named(ref, "in the index (by path, title or alias)", (title for _, title in titles), normal)


def no_note_named(ref: str, where: str, titles: Iterable[str], looked_for: str | None = None) -> NoNoteNamed:
    """The error for a name no note answers to, ``where`` saying where it was looked for: with
    the titles near it (near ``looked_for``, the name as it was looked up; ``ref`` stripped),
    for `brain note`, `brain neighbours` and `brain history` at any moment alike; else
    ``suggested`` False (the CLI then says how to find the note by what it says)."""
    wanted = ref.strip() if looked_for is None else looked_for
    close = difflib.get_close_matches(wanted, sorted(set(titles)), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(told_apart([repr(c) for c in close]))}?" if close else ""
    return NoNoteNamed(f"no note {quoted(ref)} {where}{hint}", suggested=bool(close))


def _loose(name: str) -> str:
    """``name`` compared loosely: composed (NFC), case-folded, ё as е."""
    return yo_as_ye(unicodedata.normalize("NFC", name).casefold())


def _loosely_named(
    ref: str, paths: set[str], titles: list[tuple[str, str]], aliases: dict[str, list[str]]
) -> list[str]:
    """The notes, by path, whose path, file name, title or alias is ``ref`` read loosely: Russian
    is typed with е for ё ("Елкин Петр" is *Ёлкин Пётр*), which Obsidian's links do not forgive
    (so link resolution, above, keeps to its rules) but a person asking for a note should be."""
    wanted = _loose(ref.removesuffix(".md"))
    found = set()
    for path, title in titles:
        stem = path.removesuffix(".md")
        if wanted in (_loose(title), _loose(stem), _loose(stem.rsplit("/", 1)[-1])):
            found.add(path)
    for path, names in aliases.items():
        if path in paths and any(_loose(alias) == wanted for alias in names):
            found.add(path)
    return sorted(found)


def _closest(typed: str, candidates: list[tuple[str, list[str]]], resolved: str) -> NoteMatch:
    """Of the notes one step found, those spelled closest to ``typed``; the one taken is link
    resolution's pick when it is among them, else the one a link from the root opens of them."""
    group = _spelled_closest(typed, candidates) or [resolved]
    taken = resolved if resolved in group else first_match(group, "")
    return NoteMatch(taken, tuple(p for p in group if p != taken))


def _spelled_closest(ref: str, candidates: list[tuple[str, list[str]]]) -> list[str]:
    """The paths, by path, whose names are ``ref`` as typed; else equal to it in NFC; else all."""
    composed = unicodedata.normalize("NFC", ref)
    for same in (
        lambda name: name == ref,
        lambda name: unicodedata.normalize("NFC", name) == composed,
        lambda name: True,
    ):
        group = sorted({path for path, names in candidates if any(same(name) for name in names)})
        if group:
            return group
    return []


# Failures the read itself reports ("cannot be read now"), and which a note of the past, read
# from history, may meet: its path is gone, or leads nowhere.
_READ_TELLS = frozenset({"gone", "broken-symlink", "symlink-loop", "unreadable", READ_ERROR})


def inside_vault(root: Path, path: str) -> Path:
    """The file of note ``path``, after checking that the walk would index it now as it finds it.

    Reading follows the walk (``left_out_now``): a note in a folder linked in from elsewhere is
    read, as it is indexed and searched; a path that has since come to lead where the walk does
    not go (a dot-folder, a ``.brainignore``d file, a file that is no note, a FIFO) is refused,
    ``OutsideVault`` when that is out of the vault."""
    ignore = load_ignore(root)
    reason = excluded(path, ignore)  # by its own path, wherever it leads
    if reason:
        raise NoteNotFound(f"brain now leaves {path} out ({reason}): it is not read")
    reason = left_out_now(root, path, ignore)
    real = os.path.realpath(root / path)
    if reason is None or reason in _READ_TELLS:
        return Path(real)
    base = os.path.realpath(root)
    if os.path.commonpath([real, base]) != base:  # its target is not named: it may be anything
        raise OutsideVault(f"{path} leads outside the vault to what brain does not index ({reason}); it is not read")
    target = os.path.relpath(real, base).replace(os.sep, "/")
    if target == path:  # not a link: a FIFO or a device put in its place
        raise NoteNotFound(f"{path} is in the index but is no longer a regular file ({reason}): it is not read")
    raise NoteNotFound(f"{path} leads to {target}, which brain now leaves out ({reason}): it is not read")


def read_note(
    store: IndexStore, root: Path, ref: str, *, heading: str | None = None, max_chars: int = DEFAULT_MAX_CHARS
) -> dict[str, Any]:
    """One note as it is on disk now: title, aliases, tags, date, frontmatter, and its text.

    With ``heading``, only that section (from the heading to the next one of the same or a
    higher level). The text is cut at ``max_chars`` (``truncated`` says so).
    """
    match = match_note(store, ref)
    path = match.path
    file = inside_vault(root, path)
    limit = max_note_bytes()
    try:
        # O_NONBLOCK: a note swapped for a FIFO since it was indexed must not block the read
        # (and, in brain serve or brain mcp, every call queued behind it) for good.
        # O_NOFOLLOW: the file checked above is its real path; a link put there since is not read.
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NoteNotFound(f"{path} is in the index but is no longer a regular file: it is not read")
            data = handle.read(limit + 1)
        mtime = st.st_mtime
    except OSError as exc:
        if exc.errno == errno.ENOENT and store.skip_reason(path) == NOT_DOWNLOADED:
            # iCloud evicted it (a .Note.md.icloud stub in its place): recall still shows its
            # indexed text, so "cannot be read now (No such file)" read as if it were lost
            raise NoteNotFound(
                f"{path} is in iCloud Drive, not downloaded to this Mac: open it in Finder or Obsidian, "
                f"or run `brctl download {shell_word(root / path)}`, then read it again"
            ) from exc
        # denied: its mode, owner or an ACL changed since it was indexed; say so, and the way back
        fix = ": give this user read access to it again, or `brain index` leaves it out" if exc.errno in DENIED else ""
        raise NoteNotFound(f"{path} is in the index but cannot be read now ({exc.strerror or exc}){fix}") from exc
    if len(data) > limit:
        raise BrainError(f"{path} is over the {megabytes(limit)} MB limit (BRAIN_MAX_NOTE_MB)")
    if looks_binary(data):  # swapped for a binary file since it was indexed: the walk skips it
        raise NoteNotFound(f"{path} is in the index but is no longer a text note (binary): it is not read")
    found = shaped_note(path, match, data, mtime, heading, max_chars)
    found["modified"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))
    return found


def shaped_note(
    path: str, match: NoteMatch, data: bytes, mtime: float, heading: str | None, max_chars: int
) -> dict[str, Any]:
    """A note's bytes as ``brain note --json`` gives them: title, aliases, tags, date,
    frontmatter, headings, and its text (one section with ``heading``), cut at ``max_chars``."""
    try:
        note = parse_note(path, data, mtime)
    except MemoryError:
        raise
    except Exception as exc:  # one line that names the note, not a traceback
        raise BrainError(f"{path} cannot be parsed ({bug_summary(exc)}): a bug in brain, please report it") from exc
    sections = headings(note.body)
    text = note.body
    found = None
    if heading:
        found = _pick_section(sections, heading)
        if found is None:
            listed = ", ".join(quoted(s["heading"]) for s in sections[:12]) or "none"
            raise NoteNotFound(f"no heading {quoted(heading)} in {path}; its headings: {listed}")
        lines = note.body.split("\n")
        text = "\n".join(lines[found["line"] : found["end"]])
    return {
        "path": path,
        "ambiguous": list(match.others),  # the other notes the name fits as well (NoteMatch)
        "title": note.title,
        "aliases": note.aliases,
        "tags": note.tags,
        "date": note.date,
        "frontmatter": note.frontmatter,
        "heading": found["path"] if found else None,
        "headings": [s["path"] for s in sections],
        "text": text[:max_chars],
        "chars": len(text),
        "truncated": len(text) > max_chars,
    }


class NamesThen:
    """The notes' names at one moment of history, as ``match_note`` reads them."""

    def __init__(self, rows: list[tuple[int, str, str, str]]):
        import json

        self.ids = {path: note_id for note_id, path, _, _ in rows}
        self._titles = [(path, title) for _, path, title, _ in rows]
        self._aliases: dict[str, list[str]] = {}
        for _, path, _, aliases in rows:
            if aliases and aliases != "[]":
                with contextlib.suppress(ValueError):
                    value = json.loads(aliases)
                    if isinstance(value, list) and value:
                        self._aliases[path] = [str(alias) for alias in value]

    def note_paths(self) -> set[str]:
        return set(self.ids)

    def aliases_by_path(self) -> dict[str, list[str]]:
        return self._aliases

    def note_titles(self) -> list[tuple[str, str]]:
        return self._titles


def headings(body: str) -> list[dict[str, Any]]:
    """Every heading outside code fences and HTML comments (``links.outline``: setext ones too):
    its text, path (``A > B``), level, first and end line."""
    found: list[dict[str, Any]] = []
    # The sections open at this line, outermost first: a heading closes those at or below its
    # level (they end where it starts) and is the last part of its own path.
    stack: list[dict[str, Any]] = []
    for heading in outline(body):
        while stack and stack[-1]["level"] >= heading.level:
            stack.pop()["end"] = heading.first
        path = " > ".join([*(s["heading"] for s in stack), heading.text])
        stack.append({"heading": heading.text, "path": path, "level": heading.level, "line": heading.first})
        found.append(stack[-1])
    lines = body.count("\n") + 1
    for section in stack:
        section["end"] = lines
    return found


def _pick_section(sections: list[dict[str, Any]], wanted: str) -> dict[str, Any] | None:
    """The section named ``wanted``: its heading text, or the end of its path ("A > B")."""
    parts = [p.strip().lstrip("#").strip().casefold() for p in wanted.split(">") if p.strip()]
    for section in sections:
        path = [p.strip().casefold() for p in section["path"].split(" > ")]
        if parts and path[-len(parts) :] == parts:
            return section
    return None


def neighbours(store: IndexStore, ref: str) -> dict[str, Any]:
    """A note's links (as written, where each resolves, kind, anchor) and its backlinks."""
    match = match_note(store, ref)
    path = match.path
    note_id = store.note_id(path)
    assert note_id is not None
    titles = dict(store.note_titles())
    links = [
        {
            "target": row["target"],
            "path": row["target_path"],
            "title": row["target_title"],
            "kind": row["kind"],
            "anchor": row["anchor"],
            "status": row["status"],
            "line": row["line"],
        }
        for row in store.outgoing(note_id)
    ]
    backlinks = []
    seen: set[tuple[str, str, str | None]] = set()
    for row in store.backlinks(note_id):
        key = (row["source_path"], row["kind"], row["anchor"])
        if key in seen:  # one entry per linking note, kind and anchor
            continue
        seen.add(key)
        backlinks.append(
            {
                "path": row["source_path"],
                "title": row["source_title"],
                "kind": row["kind"],
                "anchor": row["anchor"],
                "line": row["line"],
            }
        )
    return {
        "path": path,
        "ambiguous": list(match.others),
        "title": titles.get(path, path),
        "links": links,
        "backlinks": backlinks,
    }
