"""A long ``.brainignore``: each path was tried against every pattern (1,000 patterns made a walk
of 10,000 notes 4.6 s instead of 0.1; bench/brainignore_cost.py), and `brain serve` compiled
the file again for every pass and every note it read back. The answers must stay git's."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess

import pathspec
import pytest
from conftest import write
from pathspec.pattern import RegexPattern

from brain import vault

LINES = [
    "Secret.md",
    "/Top.md",
    "Folder a/Note 1.md",
    "Folder a/",
    "/Folder b/",
    "drafts/",
    "**/private/",
    "*.tmp.md",
    "*.md~",
    "scratch-*",
    "Note ?.md",
    "[ab]*.md",
    "*ote*",
    "a/**/b.md",
    "Folder b/**",
    "!Folder a/Keep.md",
    "!Secret.md",
    "!drafts/",
    "**",
    "\\#hash.md",
    "\\!bang.md",
    "trailing space.md ",
    "Ünïcode.md",
    "x\\[1\\].md",
    "# a comment",
    "",
    "Folder a/Note 1.md/",
]
NAMES = ["Secret.md", "Top.md", "Note 1.md", "Note 2.md", "Keep.md", "scratch-1.md", "b.md", "x.tmp.md"]
NAMES += ["a.md", "bz.md", "#hash.md", "!bang.md", "trailing space.md", "Ünïcode.md", "x[1].md", "Other.md~"]
FOLDERS = ["", "Folder a/", "Folder b/", "drafts/", "a/", "a/c/", "a/c/d/", "private/", "x/private/", "Top.md/"]


def _paths() -> list[str]:
    paths = [folder + name for folder, name in itertools.product(FOLDERS, NAMES)]
    return paths + [folder for folder in FOLDERS if folder] + ["Note 1.md\n", "a\nb.md"]


def _spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(lines)


@pytest.mark.parametrize("fold", [False, True], ids=["case-sensitive", "case-insensitive"])
@pytest.mark.parametrize("seed", range(40))
def test_quick_matching_asks_every_pattern_that_matches(seed, fold):
    """Only the patterns that may match a path are asked: the answer is that of all of them."""
    from brain.ignore_rules import QuickSpec, fold_case

    lines = random.Random(seed).sample(LINES + NEGATIONS, k=random.Random(seed).randint(1, len(LINES)))
    if seed == 0:
        lines = LINES
    spec = _spec([fold_case(line) for line in lines] if fold else lines)
    quick = QuickSpec(spec, fold=fold)
    every = range(len(quick.patterns))
    for path in _paths() + [path.swapcase() for path in _paths()]:
        asked = fold_case(path) if fold else path  # a file system that takes names in any case
        assert quick.match_file(path) == quick._decide(every, asked), (lines, path)


# whitelists and folders taken back in, where pathspec's answer and git's part
NEGATIONS = ["*", "!*/", "!*.md", "/*", "!/a/", "!**/private/", "*/", "!Folder a/", "a/*", "!a/c/"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to compare with")
@pytest.mark.parametrize("seed", range(30))
def test_the_walk_leaves_out_what_git_leaves_out(tmp_path, seed):
    """pathspec weighs a pattern that matches a folder above a path below one that matches its
    name: `*`, `!*/`, `!*.md` (keep only the markdown) left every folder out, where git keeps
    every note; `**/private/` then `!/a/` took `a/private/` back in, where git leaves it out."""
    rng = random.Random(seed)
    lines = (
        [NEGATIONS[:3], ["**/private/", "!/a/"]][seed]
        if seed < 2
        else rng.sample(LINES + NEGATIONS, k=rng.randint(1, 6))
    )
    root = tmp_path / "vault"
    for path in _paths():
        if "\n" not in path and not path.endswith("/") and not path.startswith("Top.md/"):  # Top.md is a note
            write(root, path, "x\n")
    write(root, ".brainignore", "\n".join(lines) + "\n")
    write(root, ".gitignore", "\n".join(lines) + "\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(root), "-c", "core.quotePath=off", "ls-files", "-z", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    kept = sorted(path for path in listed if path.endswith(".md"))
    notes, _skipped = vault.scan(root, vault.load_ignore(root))
    assert [note.path for note in notes] == kept, lines


def test_a_path_no_pattern_may_match_asks_no_pattern(tmp_path, monkeypatch):
    """Ten thousand patterns, none of them this note's: pathspec tried each (10,000 expressions
    a path); now only the patterns that may match it are asked, here none."""
    lines = [f"Archive {i}/Old {i}.md" for i in range(2500)] + [f"*.draft{i}" for i in range(2500)]
    lines += [f"scratch-{i}-*" for i in range(2500)] + [f"**/private-{i}/" for i in range(2500)]
    lines += ["Folder 7/Note 7.md"]
    root = tmp_path / "vault"
    write(root, ".brainignore", "\n".join(lines) + "\n")
    rules = vault.load_ignore(root)
    asked = []
    match = RegexPattern.match_file

    def counted(self, file):
        asked.append(file)
        return match(self, file)

    monkeypatch.setattr(RegexPattern, "match_file", counted)
    assert not rules.match("Folder 3/Note 3.md") and not rules.match("Folder 3/")
    assert asked == []
    assert rules.match("Folder 7/Note 7.md") and len(asked) == 1  # the one pattern that names it


def test_the_rules_are_read_once_until_the_file_changes(tmp_path, monkeypatch):
    """`brain serve` read and compiled .brainignore for every pass and every note read back."""
    root = tmp_path / "vault"
    ignore = write(root, ".brainignore", "Secret.md\n")
    compiled = []
    from_lines = pathspec.GitIgnoreSpec.from_lines

    def counted(*args, **kwargs):
        compiled.append(1)
        return from_lines(*args, **kwargs)

    monkeypatch.setattr(pathspec.GitIgnoreSpec, "from_lines", counted)
    first = vault.load_ignore(root)
    assert first.match("Secret.md") and len(compiled) == 1
    second = vault.load_ignore(root)
    assert second.match("Secret.md") and len(compiled) == 1
    second.warnings.append("a caller's own")  # a copy: what the next caller gets is untouched
    assert vault.load_ignore(root).warnings == []
    before = ignore.stat()
    ignore.write_text("Public.md\n", encoding="utf-8")  # same size, and its mtime put back
    os.utime(ignore, ns=(before.st_atime_ns, before.st_mtime_ns))
    third = vault.load_ignore(root)
    assert third.match("Public.md") and not third.match("Secret.md")
    ignore.write_text("[z-a].md\n", encoding="utf-8")
    assert vault.load_ignore(root).warnings and vault.load_ignore(root).warnings  # said to each caller


def test_the_case_probe_on_this_machine(tmp_path, monkeypatch):
    """Linux file systems keep case: `.BRAINIGNORE` is no name of `.brainignore`, nor is a hard
    link of that name (its own entry). One entry found under both names is what a file system
    that takes names in any case shows (macOS, Windows): listed once, by the name it was written with."""
    root = tmp_path / "vault"
    write(root, ".brainignore", "Private/\n")
    assert vault.case_insensitive(root, ".brainignore") is False
    assert vault.case_insensitive(root, "missing.md") is False
    assert vault.case_insensitive(root, "0123") is False  # no case to swap
    os.link(root / ".brainignore", root / ".BRAINIGNORE")
    assert vault.case_insensitive(root, ".brainignore") is False  # a hard link: an entry of its own
    listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda p: [n for n in listdir(p) if n != ".BRAINIGNORE"])
    assert vault.case_insensitive(root, ".brainignore") is True


@pytest.mark.parametrize("insensitive", [False, True], ids=["case-sensitive", "case-insensitive"])
def test_a_rule_in_another_case_holds_where_the_file_system_takes_any_case(tmp_path, monkeypatch, insensitive):
    """On macOS and Windows `Private/` and `private/` are one folder to the user and to the disk,
    and `Private/` in .brainignore left the notes of `private/` in the index, searched and
    served. There the rules now match in any case, as git's do (core.ignorecase); where the file
    system keeps case (Linux) nothing changes."""
    import unicodedata

    monkeypatch.setattr(vault, "case_insensitive", lambda folder, name: insensitive)
    root = tmp_path / "vault"
    write(root, "private/secret.md", "# Secret\n\nthe code is hunter2\n")
    write(root, unicodedata.normalize("NFD", "café") + "/menu.md", "# Menu\n")
    write(root, "Notes/Draft-1.MD", "# Draft\n")
    write(root, "ok.md", "# ok\n")
    write(root, ".brainignore", "Private/\n" + unicodedata.normalize("NFC", "CAFÉ") + "/\ndraft-*\n!OK.md\n")
    notes, _ = vault.scan(root, vault.load_ignore(root))
    if insensitive:
        assert [n.path for n in notes] == ["ok.md"]
        assert vault.excluded("private/secret.md", vault.load_ignore(root)) == "brainignore"  # the watcher's ask
        assert vault.excluded("PRIVATE/Secret.md", vault.load_ignore(root)) == "brainignore"
    else:
        assert len(notes) == 4
        assert vault.excluded("private/secret.md", vault.load_ignore(root)) is None


def _excluded_one_by_one(rel: str, ignore: vault.IgnoreRules | None, *, is_dir: bool = False) -> str | None:
    """``vault.excluded`` as it was: each folder on the way joined and asked by itself."""
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        reason = vault.name_rule("/".join(parts[:depth]), ignore, is_dir=True)
        if reason:
            return reason
    return vault.name_rule(rel, ignore, is_dir=is_dir)


WAY = ["a", "b", "c", "private", "drafts", "Folder a", ".hidden", "x.md", "Top.md", "", "a\nb", "scratch-1"]


@pytest.mark.parametrize("fold", [False, True], ids=["case-sensitive", "case-insensitive"])
@pytest.mark.parametrize("seed", range(40))
def test_a_path_is_left_out_as_each_folder_on_it_would_leave_it_out(seed, fold):
    """``excluded`` asks the rules of all the folders on a path in one pass: the same reason as
    asking them folder by folder, whatever the rules (negations, anchored paths, `**`)."""
    from brain.ignore_rules import fold_case

    rng = random.Random(seed)
    lines = rng.sample(
        LINES + NEGATIONS + ["a/**", "!a/b/", "/a/b/", "a/b/c/", "**/c/", "c*/", "*e/"], k=rng.randint(1, 8)
    )
    rules = vault._parse_ignore(("\n".join(lines) + "\n").encode(), None, fold=fold)
    for _ in range(300):
        folders = [rng.choice(WAY) for _ in range(rng.randint(0, 6))]
        name = rng.choice(NAMES + WAY)
        rel = "/".join([*folders, name])
        rel = rel.swapcase() if fold and rng.random() < 0.3 else rel
        is_dir = rng.random() < 0.3
        for ignore in (rules, None):
            assert vault.excluded(rel, ignore, is_dir=is_dir) == _excluded_one_by_one(rel, ignore, is_dir=is_dir), (
                lines,
                rel,
                fold_case(rel),
            )


@pytest.mark.parametrize("depth", [100, 400])
def test_a_deep_path_is_looked_up_once_for_each_folder_on_it(depth, monkeypatch):
    """`brain serve` asks ``excluded`` of every path an event names: a note 1,000 folders deep
    cost 0.2 s an event with a two-line .brainignore, each folder's path joined again and its
    names looked up again at each level (d² lookups). Now each name once."""
    rules = vault._parse_ignore(b"*.tmp\nfoo/\nbar-*\n", None)
    spec = rules.spec
    looked_up: list[str] = []

    class Counted(dict):
        def get(self, key, default=None):
            looked_up.append(key)
            return super().get(key, default)

    spec.names = Counted(spec.names)
    for length, table in list(spec.ends.items()):
        spec.ends[length] = Counted(table)
    for length, table in list(spec.starts.items()):
        spec.starts[length] = Counted(table)
    rel = "/".join(["d"] * depth) + "/Note.md"
    assert vault.excluded(rel, rules) is None
    assert len(looked_up) <= 4 * depth + 10, len(looked_up)
    assert vault.excluded("/".join(["d"] * depth) + "/foo/Note.md", rules) == "brainignore"
    assert vault.excluded("d/.git/" + rel, rules) == "dot-folder"


@pytest.mark.parametrize("seed", range(12))
def test_a_note_on_disk_is_left_out_now_as_its_path_is(tmp_path, seed):
    """``left_out_now`` (what reading a note asks) follows the path folder by folder; with no
    symlink on the way its answer is ``excluded``'s, whatever the rules."""
    rng = random.Random(seed)
    lines = rng.sample(
        LINES + NEGATIONS + ["a/**", "!a/b/", "/a/b/", "a/b/c/", "**/c/", "c*/", "*e/"], k=rng.randint(1, 8)
    )
    root = tmp_path / "vault"
    root.mkdir()
    rules = vault._parse_ignore(("\n".join(lines) + "\n").encode(), None)
    for _ in range(60):
        folders = [rng.choice([w for w in WAY if w and w != "Top.md"]) for _ in range(rng.randint(0, 5))]
        rel = "/".join([*folders, rng.choice([n for n in NAMES if n.endswith(".md")])])
        write(root, rel, "# x\n")
        assert vault.left_out_now(root, rel, rules) == vault.excluded(rel, rules), (lines, rel)


def test_a_deep_note_is_read_with_each_folder_looked_up_once(tmp_path):
    """Reading a note asks ``left_out_now`` of it: each folder on the way was asked of the
    rules by itself, d² name lookups for a note d deep (1,000: 0.19 s a read with a 3-line
    .brainignore, 0.05 without)."""
    depth = 150
    rel = "/".join(["d"] * depth) + "/Note.md"
    write(tmp_path, rel, "# Note\n")
    rules = vault._parse_ignore(b"*.tmp\nfoo/\nbar-*\n", None)
    spec = rules.spec
    looked_up: list[str] = []

    class Counted(dict):
        def get(self, key, default=None):
            looked_up.append(key)
            return super().get(key, default)

    spec.names = Counted(spec.names)
    for length, table in list(spec.ends.items()):
        spec.ends[length] = Counted(table)
    assert vault.left_out_now(tmp_path, rel, rules) is None
    assert len(looked_up) <= 4 * depth + 10, len(looked_up)
