"""Walking a vault: which files are notes, and which are skipped and why.

Skipped: dot-folders (.obsidian, .trash, .git, .stversions, ...) and dot-files, sync services'
conflict copies (Syncthing's ``*.sync-conflict-*``, Dropbox's, Nextcloud's, Obsidian Sync's), anything matched by ``.brainignore`` (gitignore syntax, at the
vault root; a bad line is left out with a warning), broken symlinks and symlink loops, and file names that are not valid Unicode.
A symlink into the vault is judged by where it leads: one to a dot-folder or a ``.brainignore``d
path is skipped as that path is, so no link is a way around the rules (one out of the vault, a
folder kept elsewhere, is followed); a note's link must lead to a markdown file.
Size and binary checks need the bytes, so the indexer makes them (``read_note_bytes``).
brain never writes inside the vault.
"""

from __future__ import annotations

import errno
import heapq
import logging
import os
import re
import stat
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from . import config
from .errors import ConfigError, quoted

log = logging.getLogger("brain")

IGNORE_FILE = ".brainignore"


class VaultFile(NamedTuple):  # a tuple: a vault of 100,000 notes makes as many per walk
    path: str  # vault-relative, posix
    abspath: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str
    detail: str = ""
    # The OSError's errno when a failure skipped it (``failure``): what tells denied from gone
    # among the unreadable, where ``detail``'s words differ (Windows says "Access is denied").
    # Neither stored with the index nor shown.
    errno: int | None = None

    @property
    def denied(self) -> bool:
        """Unreadable on purpose (a chmod, another user's file): ``DENIED``."""
        return self.errno in DENIED


def resolve_vault(vault: str | os.PathLike[str] | None) -> Path:
    """The vault folder from an argument or ``BRAIN_VAULT``; a clear error when it is not one."""
    path = vault_path(vault)
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise ConfigError(
            f"vault not found: {path}{_given_by(vault)}: check the path; {_name_the_vault(vault)}"
        ) from None
    except OSError as exc:  # a name longer than the system takes (ENAMETOOLONG) was a traceback
        raise ConfigError(
            f"vault cannot be reached: {quoted(os.fspath(path))}{_given_by(vault)} ({exc.strerror}): "
            f"check the path; {_name_the_vault(vault)}"
        ) from None
    if not path.is_dir():
        raise ConfigError(f"vault is not a folder: {path}{_given_by(vault)}: {_name_the_vault(vault)}")
    return path


def _name_the_vault(vault: str | os.PathLike[str] | None) -> str:
    """How to name the vault, by where this one came from: what a user does when it is not found
    (it said the path and no more)."""
    if vault not in (None, ""):
        return "--vault takes the folder of notes (BRAIN_VAULT names it for every command)"
    where = " there" if config.dotenv_origin.get("BRAIN_VAULT") else ""
    return f"set BRAIN_VAULT{where} to the folder of notes, or give --vault PATH"


def _given_by(vault: str | os.PathLike[str] | None) -> str:
    """Where the vault came from when no --vault named it: a BRAIN_VAULT set long ago, or in a
    .env file, is not what the user looks at when the vault is not found."""
    if vault not in (None, ""):
        return ""
    origin = config.dotenv_origin.get("BRAIN_VAULT")
    return f" (BRAIN_VAULT, set in {origin})" if origin else " (BRAIN_VAULT)"


def vault_path(vault: str | os.PathLike[str] | None) -> Path:
    """Where the vault is, or was: the absolute path its index and server are kept under, which
    a vault deleted or moved away still has (to stop the server left watching it)."""
    value = vault if vault not in (None, "") else config.vault()
    if not value:
        raise ConfigError("no vault given: pass --vault PATH or set BRAIN_VAULT")
    # --vault '~nouser/x' was a RuntimeError traceback from pathlib
    name = "--vault" if vault not in (None, "") else "BRAIN_VAULT"
    path = config.user_path(name, os.fspath(value))
    try:
        resolved = path.resolve()
    except RuntimeError:  # a symlink loop until Python 3.13 ("Symlink loop from ...")
        resolved = None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise  # a working directory deleted: the CLI's own line says so
        resolved = None
    # 3.13's resolve gives a loop back unresolved, without a word: the stat finds it, on every version.
    if resolved is None or _a_symlink_loop(resolved):
        raise ConfigError(
            f"{name} must lead to a folder, and {quoted(os.fspath(value))} cannot be followed: "
            "its symlinks lead round in a loop"
        )
    return resolved


def _a_symlink_loop(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as exc:  # missing (a vault moved away) is not a loop: its path is still wanted
        return exc.errno == errno.ELOOP
    return False


def max_note_bytes() -> int:
    return config.max_note_bytes()


def megabytes(size: int) -> str:
    """``size`` bytes in MB as a person writes BRAIN_MAX_NOTE_MB: 10, 0.5, 0.002 (not 0)."""
    mb = size / 1048576
    text = f"{mb:.3f}".rstrip("0").rstrip(".")
    return text if text != "0" or not size else f"{mb:.1g}"


# A symlink the walk took whose target a watcher of the vault's tree does not see (``brain
# serve``): a note or folder kept outside the vault, or a link that leads nowhere (yet). Its
# vault-relative path (a folder's with a trailing slash), ``link_stat`` of where it led then
# (None: nowhere, or a loop), and the real path of a folder it led out to (else None).
Link = tuple[str, "tuple[int, ...] | None", "str | None"]


def link_stat(st: os.stat_result) -> tuple[int, ...]:
    """What of a symlink's target tells that it changed: which file, and its size and mtime; for
    a folder only which (its mtime moves with every note saved in it, which events tell)."""
    if stat.S_ISDIR(st.st_mode):
        return (st.st_dev, st.st_ino)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class IgnoreRules:
    """What ``.brainignore`` says, and what was wrong with it (each problem a warning)."""

    spec: Any = None  # an ignore_rules.QuickSpec (a pathspec.GitIgnoreSpec's answers), or None: no rules
    warnings: list[str] = field(default_factory=list)
    link: Link | None = None  # the file is a symlink: it, as the walk reports such links

    def match(self, rel: str) -> bool:
        return self.spec is not None and self.spec.match_file(rel)


# The rules last read from each vault's ``.brainignore``, by the file's stat then: `brain serve`
# reads them for every pass and every note it reads back, and 10,000 patterns took 1.5 s to compile.
_LOADED: dict[str, tuple[tuple[int, ...], IgnoreRules]] = {}
_LOADED_MAX = 8


def load_ignore(root: Path) -> IgnoreRules:
    """The vault's ``.brainignore``. A bad line (a lone ``!``, ``[z-a].md``) is left out and an
    unreadable file gives no rules, each with a warning: one typo must not stop every run."""
    ignore_file = root / IGNORE_FILE
    if not os.path.lexists(ignore_file):
        return IgnoreRules()
    # Kept elsewhere and linked in (a dotfiles manager): no event in the vault says it was
    # edited, so `brain serve` compares its target with the stat taken before it was read.
    link: Link | None = (IGNORE_FILE, None, None) if ignore_file.is_symlink() else None
    try:
        # A FIFO waited for a writer for good (every index pass, every note read) and
        # /dev/zero was read until memory ran out; a folder fails the read below.
        st = ignore_file.stat()
        if link is not None:
            link = (IGNORE_FILE, link_stat(st), None)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            return IgnoreRules(None, ["is not a regular file (a FIFO or a device); no ignore rules applied"], link)
        # ctime too: an edit that put the size and mtime back still moves it
        key = (link is not None, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        loaded = _LOADED.get(os.fspath(ignore_file))
        if loaded is not None and loaded[0] == key:
            return replace(loaded[1], warnings=list(loaded[1].warnings))
        data = ignore_file.read_bytes()
    except OSError as exc:
        return IgnoreRules(None, [f"cannot be read ({exc.strerror or exc}); no ignore rules applied"], link)
    # asked with each new version of the file (kept with its rules): a few stats, far less than the parse
    rules = _parse_ignore(data, link, fold=case_insensitive(root, IGNORE_FILE))
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.clear()
    _LOADED[os.fspath(ignore_file)] = (key, rules)
    return replace(rules, warnings=list(rules.warnings))


def case_insensitive(folder: Path, name: str) -> bool:
    """Whether the file system of ``folder`` (which holds ``name``) takes names in any case, as
    macOS's (APFS, HFS+) and Windows' do by default: ``name`` with its case swapped leads to the
    same entry, and is not an entry of its own (a hard link by that name, on Linux). git asks
    the same when it makes a repository (``core.ignorecase``)."""
    other = name.swapcase()
    if other == name:
        return False
    try:
        if not os.path.samestat(os.lstat(os.path.join(folder, name)), os.lstat(os.path.join(folder, other))):
            return False
        names = set(os.listdir(folder))  # a file system that keeps case lists the name as written
    except OSError:
        return False
    return not (name in names and other in names)


def _parse_ignore(data: bytes, link: Link | None, *, fold: bool = False) -> IgnoreRules:
    """``.brainignore``'s bytes as rules, and what was wrong with them. With ``fold`` (a file
    system that takes names in any case) the rules match names in any case, as git's do there
    (``core.ignorecase``): ``Private/`` is the folder ``private/`` to the user and to the disk,
    and its notes must be left out too."""
    from .ignore_rules import QuickSpec, defuse, fold_case

    rules = IgnoreRules(link=link)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        rules.warnings.append(f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced")
    text = text.removeprefix("\ufeff")  # a byte-order mark, as git strips it
    import pathspec

    good: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        # In both Unicode forms: a name macOS wrote decomposed (NFD) is the name typed composed
        # (NFC) to the user, and the rule must leave it out too.
        forms = [unicodedata.normalize(form, line) for form in ("NFC", "NFD")]
        forms = list(dict.fromkeys([fold_case(form) for form in forms] if fold else forms))
        try:
            # each line compiled once: checked alone, its patterns then join the others
            good += defuse(pathspec.GitIgnoreSpec.from_lines(forms).patterns)
        except (ValueError, re.error) as exc:  # GitIgnorePatternError is a ValueError
            reason = f" ({exc.msg})" if isinstance(exc, re.error) else ""
            rules.warnings.append(f"line {number}: {line.strip()!r} is not a valid pattern{reason}; line ignored")
    rules.spec = QuickSpec(pathspec.GitIgnoreSpec(good), fold=fold)
    return rules


# The copies sync services make of a note two devices changed, named as each service's own
# code or manual names them, each with its date (and time) so that a note a user named so on
# purpose ("Meeting (copy).md", "Conflict notes.md") is not caught. Every form holds "onflict",
# the cheap test the walk makes first. Left out: OneDrive's "-<COMPUTERNAME>" and iCloud's
# "Note 2.md", which have no part a user's own name could not have (README "What is read").
_CONFLICT_COPY = re.compile(
    r"\.sync-conflict-"  # Syncthing: Note.sync-conflict-20240312-101522-ABCDEF1.md
    r"| \([^()]*'s conflicted copy \d{4}-\d{2}-\d{2}"  # Dropbox: Note (Ann's conflicted copy 2024-03-12).md
    # Nextcloud and ownCloud since 2018: Note (conflicted copy [user ]2024-03-12 101522).md
    r"| \(conflicted copy (?:[^()]* )?\d{4}-\d{2}-\d{2} \d{6}\)"
    r"|_conflict-(?:[^/]*-)?\d{8}-\d{6}"  # their form before: Note_conflict-[user-]20240312-101522.md
    r"| \(Conflicted copy [^()]* \d{12}\)"  # Obsidian Sync: Note (Conflicted copy MyMac 202411281430).md
)


def is_sync_conflict(name: str) -> bool:
    """A sync service's conflict copy, by its file name (``_CONFLICT_COPY``)."""
    return "onflict" in name and _CONFLICT_COPY.search(name) is not None


def name_rule(rel: str, ignore: IgnoreRules | None, *, is_dir: bool) -> str | None:
    """Why one entry (a folder or a file, vault-relative) is left out by its name alone, or None.

    The rules ``scan`` applies at each step of its walk: dot-folders and dot-files, sync
    services' conflict copies, ``.brainignore``.
    """
    name = rel.rsplit("/", 1)[-1]
    if name.startswith("."):
        return "dot-folder" if is_dir else "dot-file"
    if not is_dir and is_sync_conflict(name):
        return "sync-conflict"
    if ignore is not None and ignore.match(rel + "/" if is_dir else rel):
        return "brainignore"
    return None


def excluded(rel: str, ignore: IgnoreRules | None, *, is_dir: bool = False) -> str | None:
    """Why a vault-relative path is left out by its name or a folder above it, or None.

    What ``scan`` would decide for the path without walking to it (``brain serve``'s watcher
    asks this of every changed path).
    """
    # name_rule of each folder on the way, the first that says so: each folder's own name, and
    # the rules asked of all of them in one pass (asked folder by folder, each joined again and
    # looked up name by name, a path d deep cost d²: 1,000 deep, 0.2 s; bench/deep_walk.py).
    folders = rel.split("/")[:-1]
    dot = next((place for place, name in enumerate(folders) if name.startswith(".")), len(folders))
    spec = ignore.spec if ignore is not None else None
    if spec is not None and dot:
        first_out = getattr(spec, "first_folder_out", None)
        if first_out is not None:
            place = first_out(rel, dot)
            if place is not None:
                return "brainignore"
        else:  # a spec of another kind (pathspec's own): asked folder by folder
            at = 0
            for name in folders[:dot]:
                at += len(name)
                if spec.match_file(rel[:at] + "/"):
                    return "brainignore"
                at += 1
    if dot < len(folders):
        return "dot-folder"
    return name_rule(rel, ignore, is_dir=is_dir)


def scan(root: Path, ignore: IgnoreRules | None = None) -> tuple[list[VaultFile], list[Skipped]]:
    """Every markdown note under ``root`` and every skipped file with its reason, sorted by path.

    ``ignore`` is the vault's ``.brainignore`` as ``load_ignore`` read it (read here when not
    given; pass it to see its warnings)."""
    found = walk(root, ignore)
    return found.notes, found.skipped


class Walk(NamedTuple):
    notes: list[VaultFile]  # sorted by path; with ``known``, only those whose stat differs from it
    skipped: list[Skipped]  # sorted by path
    unchanged: list[str]  # with ``known``: the paths whose size and mtime it has, in no particular order
    links: list[Link]  # the symlinks that lead out of the vault or nowhere, in no particular order


def walk(
    root: Path,
    ignore: IgnoreRules | None = None,
    known: Mapping[str, tuple[int, int, int]] | None = None,
    helper: Helper | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> Walk:
    """What ``scan`` finds, with each note compared on the way against ``known`` (path →
    (note id, size, mtime_ns), as ``IndexStore.note_stats`` gives them) when it is given: a note
    with the same size and mtime is only its path in ``unchanged``.

    One ``stat`` per note (``os.scandir`` knows which entries are folders): at 100,000 notes
    the walk is most of a no-op ``brain index``, and making, sorting and comparing a record
    of every unchanged note afterwards was a fifth of it (0.07 s).

    ``helper``: a second process that takes the notes of some folders (``walk_helper.py``);
    the folders themselves are all walked here, in the same order, so what the walk finds is
    the same with or without it. The caller starts and stops it.

    ``meanwhile``: work the caller needs next (opening a recaller: importing numpy and FAISS),
    done here while the helper walks folders handed over for it, when the helper is up and
    there are folders enough; else not at all (the caller does it after)."""
    if ignore is None:
        ignore = load_ignore(root)
    lookup = known.get if known is not None else None
    # A ``scan_snapshot.FolderStats``: each folder's notes decoded as the walk reaches it.
    folder_stats: Callable[[str], Mapping[str, tuple[int, int, int]]] | None = getattr(known, "folder", None)
    out = _Found([], [], [], [ignore.link] if ignore.link is not None else [])
    try:
        # Through ".": a vault folder listed but not searchable (mode r without x) gave every
        # entry's stat EACCES, and the run deleted every note of the index.
        root_stat = os.stat(os.path.join(root, os.curdir))
    except OSError as err:
        raise _unreadable_vault(root, err) from None
    real_root = os.path.realpath(root)
    seen_dirs: set[tuple[int, int]] = {(root_stat.st_dev, root_stat.st_ino)}
    # name_rule's decisions, inlined: this loop runs once per entry of a 100,000-note vault.
    # (absolute path, vault-relative path with a trailing slash or "", and where the folder really
    # is in the vault when a symlinked folder on the way makes that another path, else None)
    folders: list[tuple[str, str, str | None]] = [(str(root), "", None)]
    # Symlinked folders, walked once every folder reached without a link has been, the least
    # path first: the first path found to a folder wins it, and a link listed before its
    # target (or nearer the root than it) had its notes indexed under the link's name.
    linked: list[Linked] = []
    mine = 0  # entries of the folders whose notes are walked here, less the helper's
    pending = _Meanwhile(meanwhile) if helper is not None and meanwhile is not None else None
    retry = PassingRetry()  # a listing that failed for a passing reason: listed again
    while folders or linked:  # in no particular order: both lists are sorted at the end
        if not folders:
            prefix, dirpath, real_prefix, key = heapq.heappop(linked)
            if key in seen_dirs:  # a link to a folder already walked, or back up to one
                out.skipped.append(Skipped(prefix, "symlink-loop"))
                continue
            seen_dirs.add(key)
            if real_prefix is None:  # out of the vault (_symlink_rule)
                out.links.append((prefix, key, os.path.realpath(dirpath)))
            folders.append((dirpath, prefix, real_prefix))
        dirpath, prefix, real_prefix = folders.pop()
        try:
            entries, dir_fd = _listing(dirpath, retry)
        except OSError as err:
            if not prefix:  # the vault itself: nothing found is not every note deleted
                raise _unreadable_vault(root, err) from None
            out.skipped.append(failure(prefix.rstrip("/") or _rel(root, err.filename or dirpath), err))
            continue
        try:
            _folders_of(entries, dirpath, prefix, real_prefix, ignore, real_root, seen_dirs, folders, linked, out)
            # The helper starts while this process walks the first HELPER_HEAD entries, then
            # takes a folder of notes whenever it has been given fewer entries than walked here.
            if (
                helper is not None
                and mine > HELPER_HEAD
                and len(entries) >= HELPER_MIN_FOLDER
                and helper.take(dirpath, prefix, real_prefix)
            ):
                mine -= len(entries)
                if pending is not None:
                    mine += pending.handed_over(mine <= HELPER_HEAD)
                    if pending.done:
                        pending = None
                continue
            mine += len(entries)
            if pending is not None:
                pending.walked += len(entries)
            base = _join(dirpath, "")  # with one separator after it: each file's path is base + name
            here = folder_stats(prefix).get if folder_stats is not None else lookup
            _files_of(entries, base, prefix, real_prefix, ignore, real_root, here, out)
        finally:
            if dir_fd is not None:
                os.close(dir_fd)
    if helper is not None:
        found, left = helper.finish()
        out.merge(found, lookup)
        for dirpath, prefix, real_prefix in left:  # the helper failed: its folders are walked here
            try:
                _folder_files(dirpath, prefix, real_prefix, ignore, real_root, lookup, out, retry)
            except OSError as err:  # unreadable by now
                where = prefix.rstrip("/") or _rel(root, err.filename or dirpath)
                out.skipped.append(failure(where, err))
    out.notes.sort(key=itemgetter(0))  # by path
    out.skipped.sort(key=lambda s: s.path)
    return Walk(list(map(VaultFile._make, out.notes)), out.skipped, out.unchanged, out.links)


# Entries walked here before the helper is given a folder: it takes ~0.07 s to start and
# ~0.06 s more to decode the index's snapshot (``compare_with``), while this process walks. With
# its answer cheap to merge (the notes compared there), less head pays: 100,000 notes, a plan
# 0.50 s median with 25,000, 0.48 with 8,000 or 15,000, 0.54 with 35,000 (10 runs each).
HELPER_HEAD = 12_000
HELPER_MIN_FOLDER = 64  # entries of a folder worth handing over


MEANWHILE_GUESS_S = 0.1  # what importing numpy and FAISS takes, before it is measured


class _Meanwhile:
    """The caller's work, done in the walk once the helper has folders enough to walk while it
    runs. Its time is shared: when the helper takes its first folder, it is credited with the
    entries this process walks in half of ``MEANWHILE_GUESS_S``, handed over folder by folder;
    then the work runs, and the balance is set right by half the time it really took (the
    whole of it to the helper had the walk wait for the helper 0.05-0.1 s). Counting entries
    alone, a walk that did the imports first only finished later (the helper given too little)."""

    def __init__(self, work: Callable[[], object]) -> None:
        self.work = work
        self.walked = 0  # entries walked here so far
        self.started = time.perf_counter()
        self.rate = 0.0  # entries a second this process walks
        self.credit: int | None = None
        self.done = False

    def handed_over(self, credit_spent: bool) -> int:
        """Called after each folder handed over; what to add to the walk's balance."""
        if self.credit is None:  # the helper is up: the head it gets for the work
            self.rate = self.walked / max(time.perf_counter() - self.started, 1e-3)
            self.credit = int(MEANWHILE_GUESS_S / 2 * self.rate)
            return self.credit
        if not credit_spent:
            return 0
        started = time.perf_counter()
        try:
            self.work()
        except Exception:  # only a head start: the caller does it again, and meets the failure there
            log.debug("work beside the walk failed", exc_info=True)
        self.done = True
        return int((time.perf_counter() - started) / 2 * self.rate) - self.credit


class _Found(NamedTuple):
    notes: list[Note]  # as plain tuples until the walk ends: a VaultFile is a Python call to make
    skipped: list[Skipped]
    unchanged: list[str]
    links: list[Link]

    def merge(self, found: Found, lookup: Callable[[str], tuple[int, int, int] | None] | None) -> None:
        """What the helper found, compared here with what the index knows unless it compared
        it there (then its notes are only those that differ)."""
        notes, skipped, unchanged, links = found
        self.skipped.extend(Skipped(*s) for s in skipped)
        self.links.extend(links)
        if unchanged is not None:
            self.notes.extend(notes)
            if unchanged:
                self.unchanged.extend(unchanged.split("\0"))
            return
        for note in notes:
            path = note[0]
            row = lookup(path) if lookup is not None else None
            if row is not None and row[1] == note[2] and row[2] == note[3]:
                self.unchanged.append(path)
            else:
                self.notes.append(note)


Note = tuple[str, str, int, int]  # a VaultFile's fields
# What a walk of some folders' notes found, in plain values (``marshal`` carries them between
# processes): the notes, the skipped as (path, reason, detail, errno), the paths of the notes whose
# size and mtime the index has, joined by NUL, when they were compared with it (else None, and
# every note is in the first list), and the symlinked notes that lead out or nowhere (``Link``).
SkippedTuple = tuple[str, str, str, "int | None"]  # a Skipped's fields
Found = tuple[list[Note], list[SkippedTuple], "str | None", list[Link]]
Folder = tuple[str, str, "str | None"]  # (absolute path, vault-relative prefix, its real prefix or None)
Linked = tuple[str, str, "str | None", tuple[int, int]]  # (prefix, absolute path, real prefix, (st_dev, st_ino))


class Helper(Protocol):
    """What the walk asks of a helper process (``walk_helper.WalkHelper``)."""

    def take(self, dirpath: str, prefix: str, real_prefix: str | None) -> bool: ...

    def finish(self) -> tuple[Found, list[Folder]]: ...


def _folders_of(
    entries: list[os.DirEntry[str]],
    dirpath: str,
    prefix: str,
    real_prefix: str | None,
    ignore: IgnoreRules,
    real_root: str,
    seen_dirs: set[tuple[int, int]],
    folders: list[tuple[str, str, str | None]],
    linked: list[Linked],
    out: _Found,
) -> None:
    """The folders among a folder's entries: each to walk onto ``folders`` (or, a symlink, onto
    the heap ``linked``, judged when it is taken off), or skipped and why."""
    skipped, spec = out.skipped, ignore.spec
    for entry in entries:
        try:
            if not entry.is_dir():  # follows symlinks
                continue
        except OSError:
            continue
        name = entry.name
        rel = prefix + name
        if name.startswith("."):
            skipped.extend(_dot_folder_entries(_join(dirpath, name), rel))
        elif spec is not None and (
            spec.match_file(rel + "/") or (real_prefix is not None and spec.match_file(real_prefix + name + "/"))
        ):
            skipped.append(Skipped(rel + "/", "brainignore"))
        else:
            try:
                st = entry.stat()
            except OSError as exc:  # not a link: the folder it is in cannot be searched
                skipped.append(failure(rel + "/", exc, "broken-symlink" if entry.is_symlink() else None))
                continue
            real_rel = None if real_prefix is None else real_prefix + name + "/"
            key = (st.st_dev, st.st_ino)
            if entry.is_symlink():
                reason, real_rel = _symlink_rule(real_root, _join(dirpath, name), ignore, is_dir=True)
                if reason:
                    skipped.append(Skipped(rel + "/", reason))
                else:
                    heapq.heappush(linked, (rel + "/", _join(dirpath, name), real_rel, key))
                continue
            if key in seen_dirs:  # a folder walked already (a bind mount)
                skipped.append(Skipped(rel + "/", "symlink-loop"))
                continue
            seen_dirs.add(key)
            folders.append((_join(dirpath, name), rel + "/", real_rel))


def _files_of(
    entries: list[os.DirEntry[str]],
    base: str,
    prefix: str,
    real_prefix: str | None,
    ignore: IgnoreRules,
    real_root: str,
    lookup: Callable[[str], tuple[int, int, int] | None] | None,
    out: _Found,
) -> None:
    """The notes among a folder's entries (``base``: its path and a separator), or why each
    markdown file is skipped; a note whose size and mtime ``lookup`` has is only its path."""
    notes, skipped, unchanged, links = out
    spec = ignore.spec
    evicted: list[str] = []
    for entry in entries:
        name = entry.name
        if not name.lower().endswith(".md"):
            if name.endswith(".icloud") and name.startswith(".") and name[1:-7].lower().endswith(".md"):
                evicted.append(name[1:-7])
            continue
        try:
            if entry.is_dir():  # follows symlinks; a folder named x.md is walked as a folder
                continue
        except OSError:
            pass
        rel = prefix + name
        if not rel.isascii() and not _valid_name(rel):  # only non-ASCII can hold a surrogate
            shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            skipped.append(Skipped(shown, "bad-file-name", "not valid Unicode"))
            continue
        if name.startswith("."):
            skipped.append(Skipped(rel, "dot-file"))
            continue
        if "onflict" in name and is_sync_conflict(name):  # the first test inline: runs once per note
            skipped.append(Skipped(rel, "sync-conflict"))
            continue
        if spec is not None and (
            spec.match_file(rel) or (real_prefix is not None and spec.match_file(real_prefix + name))
        ):
            skipped.append(Skipped(rel, "brainignore"))
            continue
        try:
            st = entry.stat()  # follows symlinks
        except OSError as exc:
            linked = entry.is_symlink()
            skipped.append(
                failure(rel, exc, "symlink-loop" if exc.errno == errno.ELOOP else "broken-symlink" if linked else None)
            )
            if linked:  # its target may come (or the loop be broken) with no event in the vault
                links.append((rel, None, None))
            continue
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            skipped.append(Skipped(rel, "not-a-file"))
            continue
        # chmod leaves size and mtime as they were: a note made unreadable after it was indexed
        # stayed in the index, served, where a fresh run skips it. Its mode bits tell, with no
        # system call for a note that anyone (or its owner, this process) may read.
        if mode & 0o444 != 0o444 and (st.st_uid != _EUID or not mode & stat.S_IRUSR):
            denied = read_denied(base + name)
            if denied is not None:
                skipped.append(failure(rel, denied))
                continue
        if entry.is_symlink():  # from the listing: no system call for the files that are not links
            why, real_rel = _symlink_rule(real_root, base + name, ignore, is_dir=False)
            if why:
                skipped.append(Skipped(rel, why))
                continue
            if real_rel is None:  # kept outside the vault: its edits are no event in it
                links.append((rel, link_stat(st), None))
        size, mtime_ns = st.st_size, st.st_mtime_ns
        if not _INT64_MIN <= mtime_ns <= _INT64_MAX:  # inline: a call a file is 6% of a no-op
            mtime_ns = stored_mtime(mtime_ns)
        row = lookup(rel) if lookup is not None else None
        if row is not None and row[1] == size and row[2] == mtime_ns:
            unchanged.append(rel)
        else:
            notes.append((rel, base + name, size, mtime_ns))
    if evicted:
        _evicted(evicted, {entry.name for entry in entries}, prefix, spec, skipped)


def _evicted(names: list[str], present: set[str], prefix: str, spec: Any, skipped: list[Skipped]) -> None:
    """The notes iCloud Drive evicted (before macOS 14: ``Note.md`` replaced by the stub
    ``.Note.md.icloud`` until it is downloaded again), as ``NOT_DOWNLOADED``: the user still has
    them, so an indexed one keeps its indexed text (``changes._deleted``), where it left the
    index as deleted and came back as restored each time. One the other rules leave out is
    not named."""
    for name in names:
        rel = prefix + name
        if name in present or name.startswith(".") or is_sync_conflict(name):
            continue
        if spec is not None and spec.match_file(rel):
            continue
        skipped.append(Skipped(rel, NOT_DOWNLOADED, "an iCloud Drive placeholder: not downloaded"))


def walk_files(
    dirpath: str,
    prefix: str,
    real_prefix: str | None,
    spec: Any,
    real_root: str,
    lookup: Callable[[str], tuple[int, int, int] | None] | None = None,
    retry: PassingRetry | None = None,
) -> tuple[list[Note], list[SkippedTuple], list[str], list[Link]]:
    """The notes of one folder (not its subfolders) as the walk finds them: what the helper
    process does for each folder it is given. With ``lookup`` (path → (note id, size,
    mtime_ns)) a note whose size and mtime it has is only its path, in the third list; the
    fourth, its symlinked notes that lead out of the vault or nowhere. ``retry``: the helper's
    (one for all its folders, as the walk has), by which a listing failed for a passing reason
    is tried again."""
    out = _Found([], [], [], [])
    _folder_files(dirpath, prefix, real_prefix, IgnoreRules(spec), real_root, lookup, out, retry)
    return out.notes, [(s.path, s.reason, s.detail, s.errno) for s in out.skipped], out.unchanged, out.links


def _folder_files(
    dirpath: str,
    prefix: str,
    real_prefix: str | None,
    ignore: IgnoreRules,
    real_root: str,
    lookup: Callable[[str], tuple[int, int, int] | None] | None,
    out: _Found,
    retry: PassingRetry | None = None,
) -> None:
    """``_files_of`` over one folder, listed here (an OSError when it cannot be; ``retry``: one
    failed for a passing reason is listed again)."""
    entries, dir_fd = _listing(dirpath, retry)
    try:
        _files_of(entries, _join(dirpath, ""), prefix, real_prefix, ignore, real_root, lookup, out)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_EUID = os.geteuid() if hasattr(os, "geteuid") else -1

# What makes a note unreadable on purpose (a chmod, another user's file): it leaves the index as
# a fresh run leaves it out, and so does one gone since the walk. Any other failure (EIO, a
# cloud-sync placeholder not fetched, a share timing out) may pass: a note indexed before keeps
# its indexed text meanwhile.
DENIED = frozenset({errno.EACCES, errno.EPERM})
READ_ERROR = "read-error"
NOT_DOWNLOADED = "not-downloaded"  # a note a sync service keeps only in the cloud (``_evicted``)
# A failure of the moment, not of the note: this process's open files (EMFILE) or the system's
# (ENFILE) used up, memory short, a call to try again or interrupted. A note read so is read again
# (``changes.read``), and a folder listed so listed again (``walk``), before it counts as a read error.
PASSING = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN, errno.EINTR})
PASSING_RETRIES = 16  # tries again after a passing failure, at most, in one run's reads or walk (1 s of pauses)
PASSING_PAUSE = 0.02  # seconds before trying again (twice, the second time five times longer)


class PassingRetry:
    """The rule for what failed for a passing reason (``PASSING``), a note's read
    (``changes.read``) or a folder's listing (``walk``): tried again, ``release`` first (what
    the caller holds open: the notes read ahead), then after a pause; twice at most for one
    thing, ``PASSING_RETRIES`` times in all: a limit that does not pass costs a run a second at
    most."""

    def __init__(self) -> None:
        self.left = PASSING_RETRIES
        self.release: Callable[[], None] = lambda: None

    def again(self, tried: int, err: int | None) -> bool:
        """Whether what failed with errno ``err``, tried again ``tried`` times already, is tried
        once more: if so, released and paused for, ready for it."""
        if err not in PASSING or tried >= 2 or self.left <= 0:
            return False
        self.left -= 1
        self.release()
        time.sleep(PASSING_PAUSE if tried == 0 else 5 * PASSING_PAUSE)
        return True


PARSE_ERROR = "parse-error"  # a note whose parse raised (a bug of brain's: ``index/parsing.py``)


def read_failure(err: OSError) -> str:
    """The reason a file that failed with ``err`` is skipped: "unreadable" (denied, or gone: it
    leaves the index) or "read-error" (perhaps passing: an indexed note stays as it was)."""
    return "unreadable" if err.errno in DENIED or err.errno in (errno.ENOENT, errno.ENOTDIR) else READ_ERROR


def failure(path: str, err: OSError, reason: str | None = None) -> Skipped:
    """``path`` skipped for ``err``: for ``reason``, else as ``read_failure`` says; its errno kept."""
    return Skipped(path, reason or read_failure(err), err.strerror or str(err), err.errno)


def read_denied(path: str) -> OSError | None:
    """Why this process may not read ``path`` (denied), or None: an open tried, since the mode
    bits are not the whole rule (root, ACLs). Any other failure is the read's to report."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # never wait on a FIFO
    except OSError as exc:
        return exc if exc.errno in DENIED else None
    return None


def _symlink_rule(real_root: str, full: str, ignore: IgnoreRules, *, is_dir: bool) -> tuple[str | None, str | None]:
    """Why the symlink at ``full`` is left out by where it leads (``excluded`` of that path), or
    None; and that place's vault-relative path (a trailing slash for a folder, "" for the root
    itself, None outside the vault, where the rules of the link's own path hold).

    Else the text of a dot-folder or of a ``.brainignore``d file would be indexed, searched and
    shown under the link's name."""
    real = os.path.realpath(full)
    # A note's link must lead to a note: "x.md" linked to ~/.ssh/id_rsa or /etc/passwd put
    # that file's text in the index, search results and get_note under the link's name.
    if not is_dir and not real.lower().endswith(".md"):
        return "not-a-note", None
    try:
        rel = os.path.relpath(real, real_root)
    except ValueError:  # Windows: another drive
        return None, None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
        return None, None
    if rel == os.curdir:
        return None, ""
    rel = rel.replace(os.sep, "/")
    reason = excluded(rel, ignore, is_dir=is_dir)
    return (reason, None) if reason else (None, rel + ("/" if is_dir else ""))


def left_out_now(root: Path, path: str, ignore: IgnoreRules | None = None) -> str | None:
    """Why the walk would leave out the note at vault-relative ``path`` now (a ``Skipped``
    reason; "gone" when there is nothing there), or None when it would index it.

    The walk's own rules, followed along the one path instead of over the vault (what reading a
    note asks): each folder and the file by its name in the vault and, where a symlink on the
    way leads elsewhere in the vault, by where it really is (``_symlink_rule``); a link out of
    the vault is followed under the rules of its path in the vault, and a note's link must lead
    to a markdown file. Size and bytes are the reader's to check, as the indexer checks them."""
    if ignore is None:
        ignore = load_ignore(root)
    real_root = os.path.realpath(root)
    *folders, name = path.split("/")
    full, prefix = os.fspath(root), ""
    real_prefix: str | None = None  # as the walk keeps it: None while the path is its own (or out)
    # The first folder on the path the rules leave out, asked in one pass (``excluded``): each
    # folder asked by itself cost d² name lookups for a note d deep (1,000: 0.19 s a read).
    first_out = getattr(ignore.spec, "first_folder_out", None)
    ruled = first_out(path, len(folders)) if first_out is not None else None
    for place, folder in enumerate(folders):
        if folder.startswith("."):
            reason: str | None = "dot-folder"
        elif first_out is not None:
            reason = "brainignore" if place == ruled else None
        else:
            reason = name_rule(prefix + folder, ignore, is_dir=True)
        if reason is None and real_prefix is not None and ignore.match(real_prefix + folder + "/"):
            reason = "brainignore"
        if reason:
            return reason
        full, prefix = _join(full, folder), prefix + folder + "/"
        if not os.path.isdir(full):
            return "gone"
        if os.path.islink(full):
            reason, real_prefix = _symlink_rule(real_root, full, ignore, is_dir=True)
            if reason:
                return reason
        elif real_prefix is not None:
            real_prefix += folder + "/"
    if not name.lower().endswith(".md"):
        return "not-a-note"
    reason = name_rule(path, ignore, is_dir=False)
    if reason is None and real_prefix is not None and ignore.match(real_prefix + name):
        reason = "brainignore"
    if reason:
        return reason
    full = _join(full, name)
    try:
        st = os.stat(full)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink-loop"
        if os.path.islink(full):
            return "broken-symlink"
        return "gone" if exc.errno in (errno.ENOENT, errno.ENOTDIR) else read_failure(exc)
    if not stat.S_ISREG(st.st_mode):
        return "not-a-file"
    if os.path.islink(full):
        return _symlink_rule(real_root, full, ignore, is_dir=False)[0]
    return None


def stored_mtime(mtime_ns: int) -> int:
    """An mtime in nanoseconds as SQLite can store it (a signed 64-bit integer): a file dated
    after 2262 or before 1677 (a bad clock, `touch -d 2300-01-01`) is clamped to the end of
    that range instead of failing the whole run."""
    return min(max(mtime_ns, _INT64_MIN), _INT64_MAX)


def vault_file(root: Path, path: str) -> VaultFile | None:
    """The note at vault-relative ``path`` as the walk would have found it; None when it is gone."""
    abspath = os.path.join(root, *path.split("/"))
    try:
        st = os.stat(abspath)
    except OSError:
        return None
    return VaultFile(path, abspath, st.st_size, stored_mtime(st.st_mtime_ns))


# Listing a folder by its file descriptor: each entry's stat() is then an fstatat() of one name,
# not a stat() that resolves the whole path again (a fifth less time for the walk of a
# 100,000-note vault: bench/scale.py's bare walk, 0.29 -> 0.24 s).
_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")


def _listing(dirpath: str, retry: PassingRetry | None = None) -> tuple[list[os.DirEntry[str]], int | None]:
    """A folder's entries, and the descriptor their stat() needs open until they are read
    (None when listed by path). ``retry``: a listing that failed for a passing reason is tried
    again as it says. Listed once, a folder met at the open-files limit for a moment kept its
    notes out of the run (a first `brain index` left them out) and failed it."""
    tried = 0
    while True:
        try:
            return _listed(dirpath)
        except OSError as err:
            if retry is None or not retry.again(tried, err.errno):
                raise
            tried += 1


def _listed(dirpath: str) -> tuple[list[os.DirEntry[str]], int | None]:
    if not _BY_FD:
        with os.scandir(dirpath) as listing:
            return list(listing), None
    dir_fd = os.open(dirpath, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with os.scandir(dir_fd) as listing:
            return list(listing), dir_fd
    except BaseException:
        os.close(dir_fd)
        raise


def _unreadable_vault(root: Path, err: OSError) -> ConfigError:
    if err.errno in PASSING:  # not the folder's fault: `brain serve` under `ulimit -n 20` said chmod u+rx
        return ConfigError(
            f"cannot read the vault folder {root} ({err.strerror or err}): {_short_of(err.errno)}; "
            "the index is left as it was: run again"
        )
    return ConfigError(
        f"cannot read the vault folder {root} ({err.strerror or err}); the index is left as it was: "
        "make it readable and searchable by you (chmod u+rx)"
    )


def _short_of(code: int | None) -> str:
    """What a listing that failed for a passing reason (``PASSING``) was short of, and what gives more."""
    if code == errno.EMFILE:
        try:
            import resource
        except ImportError:  # Windows
            return "every file this process may open is open"
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        most = "no limit" if soft == resource.RLIM_INFINITY else f"{soft:,}"
        return f"every file this process may open is open ({most}, `ulimit -n`: a higher one, `ulimit -n 4096`, gives it more)"
    if code == errno.ENFILE:
        return "the system's table of open files is full (fs.file-max)"
    if code == errno.ENOMEM:
        return "the system is out of memory"
    return "a failure of the moment, tried again already"


def _join(folder: str, name: str) -> str:
    return folder + name if folder.endswith(os.sep) else f"{folder}{os.sep}{name}"


def _dot_folder_entries(full: str, rel: str) -> list[Skipped]:
    """Each markdown file inside a dot-folder, so `status` can show what was left out.

    ``.git`` and similar stores are reported as one entry: walking them is pure cost.
    """
    if os.path.basename(full) in (".git", ".hg", ".svn", ".stversions", ".venv", ".cache"):
        return [Skipped(rel + "/", "dot-folder")]
    entries = []
    for dirpath, dirnames, filenames in walk_tree(full):
        dirnames.sort()
        for name in sorted(filenames):
            if name.lower().endswith(".md"):
                sub = _rel(Path(full), os.path.join(dirpath, name))
                path = f"{rel}/{sub}"
                if _valid_name(path):
                    entries.append(Skipped(path, "dot-folder"))
    return entries or [Skipped(rel + "/", "dot-folder")]


def walk_tree(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)``, top-down (edit the folder names to prune), without recursion: before
    Python 3.12 it recursed once a level, and a folder 1,000 deep (in ``.trash``, moved in
    under ``brain serve``) was a RecursionError, a traceback."""
    stack = [top]
    while stack:
        dirpath = stack.pop()
        try:
            with os.scandir(dirpath) as listing:
                entries = list(listing)
        except OSError:
            continue
        dirnames, filenames, links = [], [], set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows symlinks, as os.walk lists them; never walked into
            except OSError:
                is_dir = False
            if is_dir:
                dirnames.append(entry.name)
                if entry.is_symlink():
                    links.add(entry.name)
            else:
                filenames.append(entry.name)
        yield dirpath, dirnames, filenames
        stack.extend(os.path.join(dirpath, name) for name in reversed(dirnames) if name not in links)


def _valid_name(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes came through as surrogates
        return False
    return True


def _rel(root: Path, path: str) -> str:
    rel = os.path.relpath(path, root)
    return "" if rel == "." else rel.replace(os.sep, "/")


def will_read(file: VaultFile) -> int | None:
    """Open a note we are about to read and ask the kernel to start reading it
    (``posix_fadvise`` WILLNEED): its disk reads overlap the work on the notes before it, with
    no thread taking Python's lock (reading 30,000 notes from a cold disk: 5.0-5.5 s, 1.8-2.3 s
    so). The open file is returned for ``read_note_bytes(fd=)`` to read and close: opened again
    there by its path, each note was opened twice, and each open is an event in the inotify
    queue of a watch (`brain serve`'s). None where the call is missing or the open fails (the
    note is then opened when it is read)."""
    if not hasattr(os, "posix_fadvise"):
        return None
    try:
        fd = os.open(file.abspath, _READ_FLAGS)
    except OSError:
        return None
    try:
        os.posix_fadvise(fd, 0, file.size, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass  # not a regular file (a FIFO put in its place): read_note_bytes says so
    return fd


# O_NONBLOCK: a note swapped for a FIFO since the walk (a first build reads its notes for
# minutes after it) had the open wait for a writer for good.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)


def read_note_bytes(file: VaultFile, limit: int, fd: int | None = None) -> tuple[bytes | None, Skipped | None]:
    """The bytes of a note, or the reason it is skipped (too large, binary, unreadable, no longer
    a regular file). ``fd``: the note already open (``will_read``), read and closed here."""
    if file.size > limit:
        if fd is not None:
            os.close(fd)
        return None, Skipped(
            file.path,
            "too-large",
            f"{megabytes(file.size)} MB over the {megabytes(limit)} MB limit (BRAIN_MAX_NOTE_MB)",
        )
    try:
        if fd is None:
            fd = os.open(file.abspath, _READ_FLAGS)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None, Skipped(file.path, "not-a-file")
            # The size the walk saw and a byte more (to tell a file that grew since): reading
            # up to the limit made Python set aside a buffer of the limit (10 MB) for every
            # note, a third of the time of reading 100,000 notes.
            data = handle.read(file.size + 1)
            if len(data) > file.size:
                data += handle.read(limit + 1 - len(data))
    except OSError as exc:
        return None, failure(file.path, exc)
    if len(data) > limit:  # grew since it was listed
        return None, Skipped(file.path, "too-large", f"over the {megabytes(limit)} MB limit")
    from .notes import looks_binary

    if looks_binary(data):
        return None, Skipped(file.path, "binary", "contains NUL bytes; not a text note")
    return data, None
