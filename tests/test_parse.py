"""Walking a vault and parsing notes: which files are notes, and what each note says.

Unit tests on ``brain.vault`` and ``brain.notes``, most of them on the real toy_vault/.
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import io
import os
import tokenize
from pathlib import Path

import pytest
from conftest import TOY_VAULT, write

import brain.notes
from brain.errors import ConfigError
from brain.notes import decode, inline_tags, looks_binary, parse_note, split_frontmatter
from brain.vault import (
    IgnoreRules,
    VaultFile,
    excluded,
    left_out_now,
    read_note_bytes,
    resolve_vault,
    scan,
    vault_file,
    walk,
)

TOY_NOTES = sorted(
    """Home.md
AI/Agent memory.md
AI/Chunking strategies.md
AI/Claude Code hooks.md
AI/Context window.md
AI/Cross-encoder reranking.md
AI/Embeddings.md
AI/Graph RAG.md
AI/Prompt engineering.md
AI/Retrieval-augmented generation.md
AI/Vector databases.md
Engineering/Observability.md
Engineering/Python packaging.md
Engineering/SQLite WAL mode.md
Engineering/SQLite ledger.md
Engineering/Schema migrations.md
Engineering/Testing strategy.md
PKM/Note-taking habits.md
PKM/Obsidian.md
PKM/Weekly review.md
PKM/Zettelkasten.md
Daily/2026-03-14.md
Projects/Brain MVP.md
Projects/Decision - Use Chroma.md
Projects/Decision - Use FAISS flat index.md
Meetings/Index.md
Meetings/2026-03-10 Retrieval sync.md
Meetings/2026-03-17 Architecture review.md
Cooking/Index.md
Cooking/Cooking fundamentals.md
Cooking/Sourdough bread.md
Cooking/Борщ.md
Cooking/Knife skills.md
People/Ada Lovelace.md
People/Vannevar Bush.md""".split("\n")
)
NO_FRONTMATTER = [
    "AI/Context window.md",
    "Cooking/Knife skills.md",
    "Meetings/2026-03-17 Architecture review.md",
    "PKM/Weekly review.md",
]


def _parse(path: str):
    file = TOY_VAULT / path
    return parse_note(path, file.read_bytes(), file.stat().st_mtime)


@pytest.fixture(scope="module")
def toy_notes() -> dict:
    return {path: _parse(path) for path in TOY_NOTES}


# ----- walking the vault ------------------------------------------------------------------


def test_scan_toy_vault_finds_the_35_notes_and_skips_the_rest():
    files, skipped = scan(TOY_VAULT)
    assert [f.path for f in files] == TOY_NOTES
    assert len(files) == 35
    reasons = {s.path: s.reason for s in skipped}
    assert reasons == {
        ".obsidian/": "dot-folder",  # holds only .json files: one entry for the folder
        ".trash/deleted note.md": "dot-folder",
        "Templates/": "brainignore",
    }
    # Not notes at all: never listed, neither as notes nor as skipped.
    assert not any(s.path.endswith(".json") for s in skipped)
    every = {f.abspath for f in files}
    assert str(TOY_VAULT / "Templates" / "Daily template.md") not in every
    assert str(TOY_VAULT / ".trash" / "deleted note.md") not in every


def test_scan_records_size_and_mtime_of_each_note():
    files, _ = scan(TOY_VAULT)
    home = next(f for f in files if f.path == "Home.md")
    st = (TOY_VAULT / "Home.md").stat()
    assert (home.size, home.mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert home.abspath == str(TOY_VAULT / "Home.md")


def test_a_walk_against_known_stats_keeps_only_the_paths_of_matching_notes(tmp_path):
    """With ``known`` (path → (id, size, mtime_ns)), a note whose size and mtime both match is
    only its path; one that differs in either, or is not known, is a whole record; together
    they are what ``scan`` finds, and skips are the same."""
    for name in ("same.md", "bigger.md", "touched.md", "new.md", "sub/deep.md", ".hidden.md"):
        write(tmp_path, name, f"# {name}\n")
    files, skipped = scan(tmp_path)
    by_path = {f.path: f for f in files}
    known = {path: (i, f.size, f.mtime_ns) for i, (path, f) in enumerate(by_path.items())}
    del known["new.md"]
    known["bigger.md"] = (99, by_path["bigger.md"].size + 1, by_path["bigger.md"].mtime_ns)
    known["touched.md"] = (98, by_path["touched.md"].size, by_path["touched.md"].mtime_ns - 1)
    known["gone.md"] = (97, 1, 1)
    found = walk(tmp_path, known=known)
    assert sorted(found.unchanged) == ["same.md", "sub/deep.md"]
    assert found.notes == [by_path["bigger.md"], by_path["new.md"], by_path["touched.md"]]
    assert found.skipped == skipped
    assert walk(tmp_path) == (files, skipped, [], [])
    assert vault_file(tmp_path, "sub/deep.md") == by_path["sub/deep.md"]
    assert vault_file(tmp_path, "gone.md") is None


def test_scan_paths_are_posix_and_vault_relative(tmp_path):
    write(tmp_path, "a/b/c/deep note.md", "x")
    write(tmp_path, "top.MD", "upper-case extension is still a note")
    write(tmp_path, "a/readme.txt", "not a note")
    files, skipped = scan(tmp_path)
    assert [f.path for f in files] == ["a/b/c/deep note.md", "top.MD"]
    assert skipped == []


def test_dot_folders_and_dot_files_are_skipped_with_reasons(tmp_path):
    write(tmp_path, "keep.md", "x")
    write(tmp_path, ".obsidian/plugins/some-plugin/README.md", "plugin docs")
    write(tmp_path, ".trash/old.md", "deleted")
    write(tmp_path, ".git/info/x.md", "git internals")
    write(tmp_path, ".stversions/keep~20240101.md", "syncthing version")
    write(tmp_path, "sub/.hidden/inner.md", "hidden folder below the root")
    write(tmp_path, ".dotfile.md", "hidden file")
    files, skipped = scan(tmp_path)
    assert [f.path for f in files] == ["keep.md"]
    assert {s.path: s.reason for s in skipped} == {
        ".obsidian/plugins/some-plugin/README.md": "dot-folder",
        ".trash/old.md": "dot-folder",
        ".git/": "dot-folder",  # stores are one entry, not walked
        ".stversions/": "dot-folder",
        "sub/.hidden/inner.md": "dot-folder",
        ".dotfile.md": "dot-file",
    }


def test_sync_conflict_copies_are_skipped(tmp_path):
    write(tmp_path, "Plan.md", "x")
    write(tmp_path, "Plan.sync-conflict-20240312-101522-ABCDEF1.md", "conflict copy")
    write(tmp_path, "sub/Other.sync-conflict-20231224-000000-ZZZZZZZ.md", "conflict copy")
    files, skipped = scan(tmp_path)
    assert [f.path for f in files] == ["Plan.md"]
    assert [(s.path, s.reason) for s in skipped] == [
        ("Plan.sync-conflict-20240312-101522-ABCDEF1.md", "sync-conflict"),
        ("sub/Other.sync-conflict-20231224-000000-ZZZZZZZ.md", "sync-conflict"),
    ]


# Each service's copy as its code or manual names it (README "What is read" cites them).
SERVICE_COPIES = [
    "Plan (DESKTOP-UMS014A's conflicted copy 2019-04-24).md",  # Dropbox: device, date
    "Plan (Ann Lee's conflicted copy 2021-03-18).md",  # Dropbox: person, date
    "Plan (conflicted copy 2018-04-10 093612).md",  # Nextcloud/ownCloud: date time
    "Plan (conflicted copy ann 2024-03-12 101522).md",  # with the user (Utility::makeConflictFileName)
    "Plan_conflict-20180410-093612.md",  # ownCloud before 2018
    "Plan_conflict-ann-20180410-093612.md",
    "Meeting notes (Conflicted copy MyMacBook2 202411281430).md",  # Obsidian Sync
    "Plan.sync-conflict-20240312-101522-ABCDEF1.md",  # Syncthing
]
# Names a user gives notes: none has a service's date where the service puts it.
USER_NAMES = [
    "Meeting (copy).md",
    "Plan (conflicted copy).md",  # no date: Dropbox, Nextcloud and Obsidian all write one
    "Plan (Ann's conflicted copy).md",
    "Conflict resolution.md",
    "Romeo and Juliet (Conflicts between families).md",
    "Git handbook (Conflict resolution chapter).md",
    "Plan (conflicted copy 2024-03-12).md",  # Nextcloud's form has the time too
    "Plan (Conflicted copy 2024).md",
    "Plan_conflict-notes.md",
    "Plan 2.md",  # iCloud's numbered copy: a name users give too
    "Plan-DESKTOP-ABC123.md",  # OneDrive's -<COMPUTERNAME>: no date, a user's name could be it
    "Plan (Case Conflict).md",  # Dropbox's case clash: two notes, neither a copy
    "sync-conflict notes.md",
]


def test_sync_services_conflict_copies_are_skipped_and_a_users_names_are_not(tmp_path):
    """Dropbox's, Nextcloud's and Obsidian Sync's copies were indexed as notes beside the note
    they copy (recall showed both, or the stale one); a note a user named alike stays a note."""
    for name in SERVICE_COPIES + USER_NAMES:
        write(tmp_path, "sub/" + name, "text")
    files, skipped = scan(tmp_path)
    assert sorted(f.path for f in files) == sorted("sub/" + name for name in USER_NAMES)
    assert sorted((s.path, s.reason) for s in skipped) == sorted(("sub/" + n, "sync-conflict") for n in SERVICE_COPIES)
    for name in SERVICE_COPIES:  # the watcher's and get_note's ask says the same
        assert excluded("sub/" + name, None) == "sync-conflict"
    for name in USER_NAMES:
        assert excluded("sub/" + name, None) is None
    assert all((tmp_path / "sub" / name).read_text() == "text" for name in SERVICE_COPIES)  # left, never touched


def test_brainignore_cannot_take_a_conflict_copy_back_in(tmp_path):
    """As with Syncthing's: a copy is no note, whatever ``!`` rule takes other files back."""
    write(tmp_path, ".brainignore", "*.md\n!*.md\n")
    write(tmp_path, "Plan (conflicted copy 2018-04-10 093612).md", "copy")
    write(tmp_path, "Plan.md", "x")
    files, skipped = scan(tmp_path)
    assert [f.path for f in files] == ["Plan.md"]
    assert [(s.path, s.reason) for s in skipped] == [("Plan (conflicted copy 2018-04-10 093612).md", "sync-conflict")]


def test_brainignore_uses_gitignore_syntax(tmp_path):
    write(tmp_path, ".brainignore", "# comment\nTemplates/\n*.private.md\narchive/**/old-*.md\n/root-only.md\n")
    write(tmp_path, "Templates/Daily.md", "t")
    write(tmp_path, "notes/Templates/nested.md", "a folder pattern matches at any depth")
    write(tmp_path, "diary.private.md", "p")
    write(tmp_path, "deep/x/secret.private.md", "p")
    write(tmp_path, "archive/2020/old-plan.md", "o")
    write(tmp_path, "archive/2020/new-plan.md", "kept")
    write(tmp_path, "root-only.md", "anchored pattern")
    write(tmp_path, "sub/root-only.md", "not matched by an anchored pattern")
    files, skipped = scan(tmp_path)
    assert [f.path for f in files] == ["archive/2020/new-plan.md", "sub/root-only.md"]
    assert {s.path: s.reason for s in skipped} == {
        "Templates/": "brainignore",
        "notes/Templates/": "brainignore",
        "diary.private.md": "brainignore",
        "deep/x/secret.private.md": "brainignore",
        "archive/2020/old-plan.md": "brainignore",
        "root-only.md": "brainignore",
    }


def test_resolve_vault_errors_are_clear(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="vault not found"):
        resolve_vault(tmp_path / "missing")
    write(tmp_path, "file.md", "x")
    with pytest.raises(ConfigError, match="not a folder"):
        resolve_vault(tmp_path / "file.md")
    with pytest.raises(ConfigError, match="BRAIN_VAULT"):
        resolve_vault(None)
    monkeypatch.setenv("BRAIN_VAULT", str(TOY_VAULT))
    assert resolve_vault(None) == TOY_VAULT.resolve()


def test_read_note_bytes_skips_large_and_binary_files(tmp_path):
    big = write(tmp_path, "big.md", "x" * 5000)
    binary = tmp_path / "image.md"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    padded = tmp_path / "padded.md"
    padded.write_bytes(b"# Text\n\nthen a crash padded it" + b"\x00" * 100)

    def vault_file(path: Path) -> VaultFile:
        st = path.stat()
        return VaultFile(path.name, str(path), st.st_size, st.st_mtime_ns)

    data, skip = read_note_bytes(vault_file(big), limit=4096)
    assert data is None and skip.reason == "too-large" and "BRAIN_MAX_NOTE_MB" in skip.detail
    data, skip = read_note_bytes(vault_file(binary), limit=1 << 20)
    assert data is None and skip.reason == "binary"
    data, skip = read_note_bytes(vault_file(padded), limit=1 << 20)
    assert skip is None and data.startswith(b"# Text")  # trailing NULs are not "binary"


def test_read_note_bytes_reads_a_note_that_changed_size_since_the_walk(tmp_path):
    """The read asks for the size the walk saw: a note that grew since is still read whole, up
    to the limit; one that shrank is read as it is now."""
    note = write(tmp_path, "note.md", "# Note\n\n" + "grown " * 1000)
    full = note.read_bytes()
    for seen in (0, 10, len(full) - 1):
        data, skip = read_note_bytes(VaultFile("note.md", str(note), seen, 0), limit=1 << 20)
        assert skip is None and data == full, seen
    data, skip = read_note_bytes(VaultFile("note.md", str(note), 10, 0), limit=4096)  # grew past the limit
    assert data is None and skip.reason == "too-large"
    data, skip = read_note_bytes(VaultFile("note.md", str(note), len(full) + 500, 0), limit=1 << 20)
    assert skip is None and data == full


# ----- decoding ---------------------------------------------------------------------------


def test_decode_strips_bom_and_normalises_newlines():
    text, warnings = decode(b"\xef\xbb\xbf# Title\r\nline two\rline three\n")
    assert text == "# Title\nline two\nline three\n"
    assert warnings == []


def test_decode_replaces_invalid_utf8_with_a_warning():
    text, warnings = decode("café au lait".encode() + b", cr\xe8me")  # UTF-8 with one bad byte
    assert text == "café au lait, cr\ufffdme"
    assert warnings == ["invalid UTF-8 at byte 17; undecodable bytes replaced"]
    # a write cut amid a character: no cp1252 "I donâ€"
    assert decode("I don’".encode()[:-1]) == ("I don\ufffd", ["invalid UTF-8 at byte 5; undecodable bytes replaced"])


def test_decode_utf16_with_bom():
    text, warnings = decode("# Заметка\n".encode("utf-16"))
    assert text == "# Заметка\n"
    assert warnings == ["decoded as UTF-16"]


def test_decode_removes_nul_padding_with_a_warning():
    text, warnings = decode(b"hello" + b"\x00" * 7)
    assert text == "hello"
    assert warnings == ["7 NUL bytes removed"]


def test_looks_binary():
    assert looks_binary(b"abc\x00\x01def")  # a NUL beside another control byte
    assert not looks_binary(b"abc" + b"\x00" * 10)
    assert not looks_binary("plain Unicode — ü".encode())
    assert not looks_binary("# UTF-16 with a BOM\n".encode("utf-16"))  # NULs of UTF-16 text
    assert not looks_binary("# UTF-16 BE\n".encode("utf-16-be").join([b"\xfe\xff", b""]))
    assert looks_binary(b"\xff\xfe" + b"\x00" * 8)  # a BOM and then NUL characters


# ----- frontmatter ----------------------------------------------------------------------


def test_frontmatter_split():
    meta, body, warnings = split_frontmatter("---\ntitle: T\ntags: [a, b]\n---\n# Body\n")
    assert meta == {"title": "T", "tags": ["a", "b"]}
    assert body == "# Body\n"
    assert warnings == []


def test_broken_yaml_keeps_the_body_and_warns():
    meta, body, warnings = split_frontmatter("---\ntitle: [unclosed\n---\nbody text [[Link]]\n")
    assert meta == {}
    assert body == "body text [[Link]]\n"
    assert len(warnings) == 1 and warnings[0].startswith("broken YAML frontmatter ignored")


def test_broken_yaml_names_the_line_of_the_note_and_what_is_wrong():
    # It said "broken YAML frontmatter ignored: while parsing a block mapping": yaml's context,
    # neither the line nor what was wrong, on a note of a hundred lines of frontmatter.
    cases = {  # yaml's wording differs between its C loader and its Python one: the line does not
        "---\ntitle: broken\n  : [\n---\nbody\n": 3,
        "---\na: 1\nb: [1, 2\nc: 3\n---\nbody\n": 4,
        "---\r\naliases: a: b\r\n---\r\nbody\r\n": 2,
    }
    for text, line in cases.items():
        meta, body, warnings = split_frontmatter(text)
        assert meta == {} and body.startswith("body") and len(warnings) == 1
        assert warnings[0].startswith(f"broken YAML frontmatter ignored: line {line}: "), warnings
        assert "while parsing" not in warnings[0] and len(warnings[0]) > len(
            f"broken YAML frontmatter ignored: line {line}: "
        )


def test_frontmatter_that_is_not_a_mapping_is_ignored():
    meta, body, warnings = split_frontmatter("---\n- just\n- a list\n---\nbody\n")
    assert (meta, body) == ({}, "body\n")
    assert warnings == ["frontmatter is not a mapping; ignored"]


def test_no_frontmatter_and_a_later_rule_are_not_confused():
    text = "# Note\n\n---\n\nnot: frontmatter\n---\n"
    meta, body, warnings = split_frontmatter(text)
    assert (meta, body, warnings) == ({}, text, [])


def test_empty_frontmatter_is_empty_not_the_text_up_to_a_later_rule():
    # "---\n---" is what Obsidian writes when the last property is removed: empty properties,
    # the rest is the body (it read up to the next "---" rule, and the text before it was lost)
    text = "---\n---\n\n# Empty\n\nSome text here.\n\n---\n\nMore text.\n"
    meta, body, warnings = split_frontmatter(text)
    assert (meta, body, warnings) == ({}, "\n# Empty\n\nSome text here.\n\n---\n\nMore text.\n", [])
    assert split_frontmatter("---\n---\nbody") == ({}, "body", [])
    assert split_frontmatter("---\r\n---\r\nbody") == ({}, "body", [])
    assert split_frontmatter("---\n---") == ({}, "", [])
    note = parse_note("Empty.md", text.encode(), 0)
    assert "Some text here." in note.body and note.warnings == []


def test_parse_note_with_bom_and_frontmatter():
    note = parse_note("x/bom.md", b"\xef\xbb\xbf---\ntitle: With BOM\naliases: Bommy\n---\n# Heading\n", 0)
    assert note.title == "With BOM"
    assert note.aliases == ["Bommy"]
    assert note.body == "# Heading\n"
    assert note.warnings == []


def test_parse_note_bad_input_never_raises():
    cases = [
        b"---\ntitle: [broken\n---\n\xff\xfe\xfd text #tag [[L]]",
        b"---\ntags: 42\naliases: {a: 1}\ndate: not a date\n---\nbody",
        b"---\n---\n",
        b"",
        b"\x00\x00\x00",
        "---\ntitle: \u202eRTL\u0000\n---\n\U0001f9e0 #emoji-tag".encode("utf-8"),
    ]
    for data in cases:
        note = parse_note("odd.md", data, 1_700_000_000)
        assert note.path == "odd.md"
        assert note.title  # always something: frontmatter title or the file stem


# ----- title, aliases, tags, dates on the toy vault -----------------------------------------


def test_title_is_frontmatter_title_else_file_stem(toy_notes):
    assert toy_notes["Engineering/Observability.md"].title == "Observability and telemetry"
    assert toy_notes["Cooking/Борщ.md"].title == "Борщ"
    assert toy_notes["Projects/Decision - Use Chroma.md"].title == "Decision - Use Chroma"
    for path in NO_FRONTMATTER:
        assert toy_notes[path].title == Path(path).stem
        assert toy_notes[path].frontmatter == {}
    assert toy_notes["Daily/2026-03-14.md"].title == "2026-03-14"  # frontmatter without a title


def test_aliases_lists_and_plain_strings(toy_notes):
    assert toy_notes["AI/Vector databases.md"].aliases == ["FAISS"]  # `aliases: FAISS`
    assert toy_notes["AI/Retrieval-augmented generation.md"].aliases == ["RAG", "Retrieval augmented generation"]
    assert toy_notes["Cooking/Борщ.md"].aliases == ["Borscht", "Borsch", "Borshch"]
    assert toy_notes["PKM/Obsidian.md"].aliases == ["Obsidian.md"]
    assert toy_notes["AI/Context window.md"].aliases == []


def test_tags_from_frontmatter_and_inline(toy_notes):
    assert toy_notes["PKM/Zettelkasten.md"].tags == ["pkm", "method", "pkm/zettelkasten", "pkm/method"]
    assert toy_notes["AI/Graph RAG.md"].tags == ["ai", "retrieval", "graph", "ai/retrieval"]
    # Comma strings, quoted or not.
    assert toy_notes["Engineering/Python packaging.md"].tags[:3] == ["engineering", "python", "packaging"]
    assert toy_notes["Cooking/Sourdough bread.md"].tags[:3] == ["cooking", "bread", "fermentation"]
    assert toy_notes["Cooking/Sourdough bread.md"].tags == ["cooking", "bread", "fermentation", "cooking/bread"]
    # Inline-only tags in a note without frontmatter.
    assert toy_notes["Cooking/Knife skills.md"].tags == ["cooking/technique"]
    assert toy_notes["PKM/Weekly review.md"].tags == ["pkm/review"]


def test_things_that_look_like_tags_but_are_not(toy_notes):
    wal = toy_notes["Engineering/SQLite WAL mode.md"].tags
    assert wal == ["engineering", "sqlite", "engineering/sqlite"]
    assert not any(t.startswith("42") or t in ("ckpt", "pragma_journal_mode") for t in wal)
    packaging = toy_notes["Engineering/Python packaging.md"].tags
    assert not any(t.startswith("1") for t in packaging)
    hooks = toy_notes["AI/Claude Code hooks.md"].tags
    assert "TODO-not-a-tag" not in hooks and not any(t.startswith("!") or "usr" in t for t in hooks)
    assert hooks == ["ai", "agents", "claude-code", "tooling", "ai/agents"]
    assert "not-a-tag-inside-code" not in toy_notes["PKM/Obsidian.md"].tags
    every = {t for note in toy_notes.values() for t in note.tags}
    assert not any(t[0].isdigit() and t.rstrip("0123456789") == "" for t in every)  # no "#1", "#42"


def test_inline_tags_rules():
    body = (
        "#start and mid #tag, #nested/deep/path. #ünïcode #тег #1984 #2024year\n"
        "## Issue #42: heading # not tags\n"
        "## Heading with a real #tag-in-heading\n"
        "url https://x.org/page#anchor and [link](note.md#section) word#notatag &#35;\n"
        "`#inline-code` and\n```\n#in-fence\n```\n"
    )
    assert inline_tags(body) == [
        "start",
        "tag",
        "nested/deep/path",
        "ünïcode",
        "тег",
        "2024year",
        "tag-in-heading",
    ]


def test_a_tag_in_an_html_comment_is_not_a_tag():
    # as Obsidian 1.8's cache reads obsidian-tasks' comments_html_style.md and comments_markdown_style.md
    body = "#kept <!-- #hidden --> and\n<!--\n#hidden-too\n-->\n%% #in-obsidian-comment %%\n"
    assert inline_tags(body) == ["kept", "in-obsidian-comment"]


def test_an_escaped_hash_is_no_tag_and_tags_differing_in_case_are_one():
    # Obsidian's help: "\\#" shows a hash, not a tag (Basic formatting syntax); "Tags are
    # case-insensitive ... #tag and #TAG will be treated as identical", shown as first written (Tags)
    assert inline_tags("\\#not-a-tag and #real") == ["real"]
    note = parse_note("x.md", b"---\ntags: [Project, b]\n---\n#a #project #B #A #c\n", 0)
    assert note.tags == ["Project", "b", "a", "c"]


def test_a_links_hash_is_not_a_tag():
    """[[#Heading]], [[Note|#label]] and [text](#anchor) point somewhere; only #realtag tags."""
    body = "See [[#Intro]], [[Other|#label]], [[Note#Part]] and [back](#anchor). Real: #realtag [[x]] #after\n"
    assert inline_tags(body) == ["realtag", "after"]


def test_dates_from_frontmatter_fields(toy_notes):
    assert toy_notes["Projects/Decision - Use Chroma.md"].date == "2026-02-20"  # date: wins over updated
    assert toy_notes["Projects/Decision - Use FAISS flat index.md"].date == "2026-03-10"
    assert toy_notes["AI/Graph RAG.md"].date == "2026-01-08"  # created:
    assert toy_notes["Daily/2026-03-14.md"].date == "2026-03-14"


def test_dates_fall_back_to_mtime(toy_notes):
    for path in NO_FRONTMATTER + ["People/Ada Lovelace.md", "People/Vannevar Bush.md"]:
        mtime = (TOY_VAULT / path).stat().st_mtime
        expected = dt.datetime.fromtimestamp(mtime, dt.timezone.utc).isoformat(timespec="seconds")
        assert toy_notes[path].date == expected, path


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-06", "2024-05-06"),
        ("2024-05-06T07:08:09", "2024-05-06T07:08:09"),
        ("'2024-05-06 07:08'", "2024-05-06T07:08:00"),
        ("2024-05-06T07:08:09Z", "2024-05-06T07:08:09+00:00"),
        ("'[[2024-05-06]]'", "2024-05-06"),  # a daily-note link as the date
        ("'2024-05-06, a Monday'", "2024-05-06"),
    ],
)
def test_date_formats(value, expected):
    note = parse_note("d.md", f"---\ncreated: {value}\n---\nbody\n".encode(), 0)
    assert note.date == expected


def test_invalid_date_falls_back_to_mtime():
    note = parse_note("d.md", b"---\ndate: 2024-13-45\n---\nbody\n", 86400)
    assert note.date == "1970-01-02T00:00:00+00:00"


def test_body_excludes_frontmatter_and_superseded_fields_survive(toy_notes):
    chroma = toy_notes["Projects/Decision - Use Chroma.md"]
    assert chroma.body.startswith("\n# Decision: use Chroma as the vector store")
    assert "superseded_by" not in chroma.body
    assert chroma.frontmatter["superseded_by"] == "[[Decision - Use FAISS flat index]]"
    assert chroma.frontmatter["status"] == "superseded"
    assert chroma.frontmatter["date"] == "2026-02-20"  # JSON-safe: dates become ISO strings
    context = toy_notes["AI/Context window.md"]
    assert context.body == (TOY_VAULT / "AI/Context window.md").read_text(encoding="utf-8")


def test_content_hash_is_of_the_raw_bytes(toy_notes):
    import hashlib

    raw = (TOY_VAULT / "Home.md").read_bytes()
    assert toy_notes["Home.md"].content_hash == hashlib.sha256(raw).hexdigest()


def test_unicode_file_names_in_the_toy_vault(toy_notes):
    note = toy_notes["Cooking/Борщ.md"]
    assert note.path == "Cooking/Борщ.md"
    assert note.title == "Борщ" and "свёкла" in note.body


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_scan_follows_symlinks_but_not_loops(tmp_path):
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    write(vault, "real/a.md", "x")
    write(outside, "b.md", "a folder kept elsewhere, linked into the vault")
    os.symlink(outside, vault / "linked")
    os.symlink("..", vault / "real" / "up")  # a loop back to the vault root
    os.symlink("self.md", vault / "self.md")  # a file symlink to itself
    os.symlink("missing.md", vault / "gone.md")
    files, skipped = scan(vault)
    assert [f.path for f in files] == ["linked/b.md", "real/a.md"]
    assert {s.path: s.reason for s in skipped} == {
        "real/up/": "symlink-loop",
        "self.md": "symlink-loop",
        "gone.md": "broken-symlink",
    }


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_note_linked_to_a_file_that_is_no_note_is_skipped(tmp_path):
    """A note named x.md linked to a key or /etc/passwd put that file's text in the index under the link's
    name; a note's link must lead to a markdown file (in the vault or out of it)."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    write(vault, "a.md", "# A\n")
    write(vault, "notes.txt", "not a note")
    write(outside, "id_rsa", "PRIVATE KEY")
    write(outside, "shared.MD", "# Shared\n")
    os.symlink(outside / "id_rsa", vault / "key.md")
    os.symlink("notes.txt", vault / "txt.md")
    os.symlink(outside / "shared.MD", vault / "shared.md")
    files, skipped = scan(vault)
    assert [f.path for f in files] == ["a.md", "shared.md"]
    assert {s.path: s.reason for s in skipped} == {"key.md": "not-a-note", "txt.md": "not-a-note"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="symlinks and FIFOs")
def test_left_out_now_decides_each_path_as_the_walk_does(tmp_path):
    """What reading a note asks (``left_out_now``, one path) is what the walk decides over the
    whole vault: every note it indexes is taken, every file it skips by a rule is left out for
    the same reason, through links in, out and back in."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    for rel in ("a.md", ".hidden/h.md", "Private/p.md", "dir.md/z.md", "a.sync-conflict-1.md", "Sub/b.md"):
        write(vault, rel, "# note\n")
    write(vault, "notes.txt", "no note")
    (vault / ".brainignore").write_text("Private/\nLinked/ignored.md\n", encoding="utf-8")
    for rel in ("Inner.md", ".dot/x.md", "ignored.md", "deep/d.md"):
        write(outside, rel, "# outside\n")
    write(outside, "id_rsa", "KEY")
    os.symlink(outside, vault / "Linked")
    os.symlink(vault / ".hidden", outside / "back")  # out, then back into a dot-folder
    os.symlink(vault / "Sub", outside / "sub")  # out, then back into a folder walked already
    os.symlink(outside / "id_rsa", vault / "key.md")
    os.symlink("notes.txt", vault / "txt.md")
    os.symlink("Private/p.md", vault / "pv.md")
    os.symlink(".hidden/h.md", vault / "hv.md")
    os.symlink(outside / "Inner.md", vault / "Sub" / "shared.md")
    os.symlink("missing.md", vault / "gone.md")
    os.symlink(vault / "Private", vault / "ToPrivate")
    os.mkfifo(vault / "fifo.md")
    files, skipped = scan(vault)
    assert [f.path for f in files] == [
        "Linked/Inner.md",
        "Linked/deep/d.md",
        "Sub/b.md",
        "Sub/shared.md",
        "a.md",
        "dir.md/z.md",
    ]
    assert all(left_out_now(vault, f.path) is None for f in files)
    decided = {s.path: s.reason for s in skipped if not s.path.endswith("/")}
    assert {path: left_out_now(vault, path) for path in decided} == decided
    assert {"key.md", "txt.md", "pv.md", "hv.md", "fifo.md", "gone.md", "Linked/ignored.md"} <= set(decided)
    folders = {s.path: s.reason for s in skipped if s.path.endswith("/")}
    for folder, note in (("Linked/back/", "h.md"), ("ToPrivate/", "p.md"), ("Private/", "p.md")):
        assert left_out_now(vault, folder + note) == folders[folder]
    assert left_out_now(vault, "Missing/x.md") == "gone"


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_folder_linked_within_the_vault_keeps_its_own_path_whatever_the_walk_meets_first(tmp_path):
    """A folder reached both by its path and through links is walked once, by its path: a link
    nearer the root than its target, or listed before it, took its notes under the link's name
    (a link added renamed every note of the folder, and a link to them by path dangled)."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    write(vault, "deep/er/a.md", "# A\n")
    write(vault, "real/b.md", "# B\n")
    write(outside, "c.md", "# C\n")
    os.symlink("deep/er", vault / "shortcut")  # at the root, its target two folders down
    for name in "abcdefgh":  # some listed before real/, whatever the file system's order
        os.symlink("real", vault / name)
    os.symlink(outside, vault / "z-out")
    os.symlink(outside, vault / "y-out")  # one folder outside, linked twice: the least path wins
    files, skipped = scan(vault)
    assert [f.path for f in files] == ["deep/er/a.md", "real/b.md", "y-out/c.md"]
    assert {s.path: s.reason for s in skipped} == {
        "shortcut/": "symlink-loop",
        "z-out/": "symlink-loop",
        **{f"{name}/": "symlink-loop" for name in "abcdefgh"},
    }


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open descriptors in /proc")
def test_the_walk_closes_every_folder_it_opens(tmp_path):
    """The walk lists each folder by a descriptor (its entries' stats are then one-name
    lookups); every one is closed, for a folder that cannot be read and for a walk cut short."""
    for i in range(30):
        write(tmp_path, f"f{i}/sub/note {i}.md", f"# Note {i}\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    write(tmp_path, "locked/hidden.md", "# Hidden\n")
    locked.chmod(0)
    try:
        before = len(os.listdir("/proc/self/fd"))
        files, _ = scan(tmp_path)
        assert len(files) == 30 + (1 if os.geteuid() == 0 else 0)  # root reads any folder
        assert all(Path(f.abspath).is_file() and f.abspath.endswith(f.path) for f in files)
        assert len(os.listdir("/proc/self/fd")) == before

        class CutShort:  # a failure inside the walk of one folder
            def match_file(self, _rel):
                raise RuntimeError("stop")

        with pytest.raises(RuntimeError):
            scan(tmp_path, IgnoreRules(spec=CutShort()))
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        locked.chmod(0o755)


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_symlink_into_the_vault_is_no_way_around_the_skip_rules(tmp_path):
    """A link to a .brainignored file or folder, or into a dot-folder, is skipped as its target
    is: else that text is indexed, searched and shown by `brain note` under the link's name."""
    vault = tmp_path / "vault"
    write(vault, ".brainignore", "ignored.md\nprivate/\n/notes/secret/\n")
    write(vault, "ignored.md", "IGNORED_SECRET")
    write(vault, "private/p.md", "PRIVATE_SECRET")
    write(vault, ".hidden/h.md", "HIDDEN_SECRET")
    write(vault, "notes/secret/s.md", "NESTED_SECRET")
    write(vault, "notes/open.md", "kept")
    write(vault, "real/n.md", "kept")
    (vault / "sub").mkdir()
    os.symlink("../ignored.md", vault / "sub" / "to-ignored.md")
    os.symlink("../.hidden/h.md", vault / "sub" / "to-hidden.md")
    os.symlink("../.hidden", vault / "sub" / "hidden-dir")
    os.symlink("../private", vault / "sub" / "private-dir")
    os.symlink("../notes", vault / "sub" / "notes-dir")  # walked first or not: secret/ stays out
    os.symlink("../real/n.md", vault / "sub" / "alias.md")  # a link to a note that is read: read
    write(vault, "real/n.sync-conflict-20260101-abc.md", "CONFLICT_SECRET")  # a Syncthing copy
    os.symlink("../real/n.sync-conflict-20260101-abc.md", vault / "sub" / "to-conflict.md")
    files, skipped = scan(vault)
    assert all("SECRET" not in Path(f.abspath).read_text() for f in files)
    paths = [f.path for f in files]
    assert {"real/n.md", "sub/alias.md", "notes/open.md"} <= set(paths)  # a linked folder: by its own path
    assert "sub/notes-dir/open.md" not in paths
    reasons = {s.path: s.reason for s in skipped}
    assert reasons["sub/to-ignored.md"] == reasons["sub/private-dir/"] == "brainignore"
    assert reasons["sub/to-hidden.md"] == reasons["sub/hidden-dir/"] == "dot-folder"  # where it leads
    assert reasons["sub/to-conflict.md"] == "sync-conflict"  # every rule of the walk, where it leads


def test_a_dot_folder_a_thousand_deep_is_skipped_not_a_recursion_error(tmp_path, deep_folder):
    """Listing a dot-folder's notes went through os.walk, which before Python 3.12 recursed once
    a level: a `.trash` 1,100 folders deep was a RecursionError, a traceback of `brain index`."""
    write(tmp_path, "kept.md", "# Kept\n")
    write(deep_folder(tmp_path / ".trash", 1100), "old.md", "# Old\n")
    files, skipped = scan(tmp_path)
    assert [f.path for f in files] == ["kept.md"]
    assert [s.path for s in skipped] == [".trash/" + "d/" * 1100 + "old.md"]


def test_decode_utf16_reads_its_crlf_as_newlines():
    """UTF-16 from Windows has CRLF endings; they were kept, a "\\r" ending every heading,
    list item and chunk of the note."""
    for data in (
        "---\r\ntitle: T\r\n---\r\n# Heading\r\n- item\r\n".encode("utf-16"),
        b"\xfe\xff" + "# Heading\r\nold Mac\r".encode("utf-16-be"),
    ):
        text, warnings = decode(data)
        assert "\r" not in text, text
        assert warnings == ["decoded as UTF-16"]
    note = parse_note("w.md", "---\r\ntitle: T\r\n---\r\n# Heading\r\nsee [[X]]\r\n".encode("utf-16"), 0.0)
    assert note.title == "T" and note.body == "# Heading\nsee [[X]]\n"


def test_decode_reads_legacy_russian_as_cp1251_or_koi8r():
    """Russian saved in cp1251 (Windows) or KOI8-R came out as U+FFFD in place of every letter:
    nothing for the embedder or BM25 to find. It is read in the encoding whose letters it makes,
    and the warning says which."""
    text = "---\ntitle: Заметка\ntags: [погода]\n---\nМосква зимой: снег и мороз, ёлка.\n"
    for codec, name in (("cp1251", "cp1251"), ("koi8_r", "KOI8-R")):
        decoded, warnings = decode(text.encode(codec))
        assert decoded == text
        assert warnings == [f"not UTF-8 (invalid at byte 11); decoded as {name} (Cyrillic)"]
        note = parse_note("ru.md", text.replace("\n", "\r\n").encode(codec), 0.0)
        assert (note.title, note.tags) == ("Заметка", ["погода"])


def test_decode_does_not_take_latin1_or_damaged_utf8_for_cyrillic():
    # Latin-1 read as cp1251 is "cafй au lait, Grьяe" (a Cyrillic letter amid Latin ones)
    text, warnings = decode("café au lait, Grüße, à bientôt, déjà vu".encode("latin-1"))
    assert text == "café au lait, Grüße, à bientôt, déjà vu" and "Cyrillic" not in warnings[0]
    # UTF-8 with one bad byte: its "Ш" would be cp1251's word "РЁ"
    text, warnings = decode("Shah function Ш, also Ш Ш".encode() + b"\xff")
    assert text == "Shah function Ш, also Ш Ш\ufffd"
    # too few letters to tell cp1251's "Ш" from Latin-1's "Ø"
    assert decode("Ш".encode("cp1251"))[0] == "\ufffd"


def test_a_stray_nul_does_not_make_a_note_binary():
    """One NUL (left by a sync conflict) amid 20 KB of text made the whole note "binary" and
    skipped: it lost all its recall for one byte. It is read, the NUL dropped, with a warning."""
    data = b"# Note\n\nsome text " + b"\x00" + b"and more text\n" * 1500
    assert not looks_binary(data)
    note = parse_note("n.md", data, 0.0)
    assert note.warnings == ["1 NUL bytes removed"] and "some text and more" in note.body
    assert not looks_binary("Привет\x00 мир".encode())
    # binary files still are: NULs in many places, beside control bytes, or amid bytes not UTF-8
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00")
    assert looks_binary(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xed\x9d")


def test_decode_a_cut_utf16_note_as_utf16():
    """UTF-16 of an odd length (a write cut short) failed to decode and was read as UTF-8: its
    text came out with a NUL after every letter."""
    text, warnings = decode("# Title\r\nbody".encode("utf-16") + b"x")
    assert text == "# Title\nbody\ufffd"
    assert warnings == ["decoded as UTF-16; invalid at byte 28, undecodable bytes replaced"]


def test_decode_reads_russian_with_its_punctuation_as_cp1251():
    """Russian in cp1251 with its «», — and № was replaced: those bytes counted against the share
    of Cyrillic letters among the bytes over 127. Its punctuation is left out of that count now,
    and only Cyrillic words of two letters or more make up the four letters needed: cp1252's
    "×2" is cp1251's "Ч2"."""
    for text in ("Он сказал — «привет», и ушёл.", "Заметка № 5: снег"):
        assert decode(text.encode("cp1251")) == (text, ["not UTF-8 (invalid at byte 0); decoded as cp1251 (Cyrillic)"])
    text = "level ×2 on a hit, ×3 on a crit — it’s ×4, then ×5"  # as a bench vault's note, in cp1252
    assert "Cyrillic" not in decode(text.encode("cp1252"))[1][0]


def test_a_long_legacy_note_is_told_by_64_kb_from_its_first_byte_not_utf8():
    """The legacy rules read every word of a note (0.85 s for 1 MB of cp1252) and took all of
    it to decode: one byte cp1251 leaves undefined, anywhere, sent a Russian note to KOI8-R, its
    letters scrambled. They read 64 KB from its first byte that is not UTF-8 now; a byte the
    codec leaves undefined past those is replaced, with a warning."""
    text = "Москва зимой: снег и мороз.\n" * 5000  # 140 KB
    assert decode(text.encode("cp1251") + b"\x98") == (
        text + "\ufffd",
        ["not UTF-8 (invalid at byte 0); decoded as cp1251 (Cyrillic); undecodable bytes replaced"],
    )


def test_decode_reads_utf16_without_a_bom():
    """UTF-16 without a byte-order mark (.NET's Encoding.Unicode, Notepad++'s "UCS-2 LE w/o
    BOM") was taken for binary, its NULs in every other byte, and skipped."""
    for text in (
        "---\r\ntitle: Réunion\r\n---\r\n# Notes\r\nsee [[Plan]], café, 5 €\r\n",
        "# Заметка\nМосква зимой: снег и мороз.\n",
        "# 会议记录\n\n今天的问题和答案。\n",
        "это.\n",  # its only NULs: the high bytes of "." and "\n", the last one cut as padding
    ):
        for codec, name in (("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE")):
            data = text.encode(codec)
            assert not looks_binary(data), (text, codec)
            assert decode(data) == (text.replace("\r\n", "\n"), [f"decoded as {name} (no byte-order mark)"])
    data = "# Plan\nhello\n".encode("utf-16-le") + b"\x00" * 5  # padded by a crashed write
    assert not looks_binary(data)
    assert decode(data) == ("# Plan\nhello\n", ["decoded as UTF-16LE (no byte-order mark)", "5 NUL bytes removed"])
    note = parse_note("w.md", "---\r\ntitle: T\r\ntags: [a]\r\n---\r\nsee [[X]]\r\n".encode("utf-16-le"), 0.0)
    assert (note.title, note.tags, note.body) == ("T", ["a"], "see [[X]]\n")


def test_binary_files_are_not_taken_for_utf16_without_a_bom(tmp_path):
    """What reads as UTF-16 without a BOM must not let binaries in: each of these holds NULs
    in every other byte somewhere, or pairs of bytes that are no text."""
    import sqlite3
    import struct
    import zipfile
    import zlib

    with sqlite3.connect(tmp_path / "db.sqlite") as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES (?)", ("a note " * 50,))
    conn.close()
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        archive.writestr("note.md", "# Note\n" + "text " * 200)
    stream = zlib.compress(bytes(range(256)) * 8)
    pdf = b"%PDF-1.4\n1 0 obj\n<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream\n"
    rows = b"".join(struct.pack("<HH", i, i * 7 % 300) for i in range(400))  # 16-bit numbers
    private = b"".join(struct.pack("<HH", 0x61, 0xE041 + i) for i in range(100))  # "a", then U+E041...
    utf8_with_nuls = bytearray()
    for char in "plain ASCII text with a NUL here and there, more than a few " * 4:
        utf8_with_nuls += char.encode() + (b"\x00" if len(utf8_with_nuls) % 7 == 5 else b"")
    binaries = {
        "sqlite": (tmp_path / "db.sqlite").read_bytes(),
        "zip": (tmp_path / "a.zip").read_bytes(),
        "pdf": pdf,
        "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x02" + stream,
        "UTF-32": "# Note\nsome text\n".encode("utf-32"),
        "UTF-32LE": "# Note\nsome text\n".encode("utf-32-le"),
        "UTF-32BE": "# Note\nsome text\n".encode("utf-32-be"),
        "16-bit rows": rows,
        "private-use characters": private,
        "ASCII with NULs": bytes(utf8_with_nuls),
        "ASCII with NULs at odd bytes": b"".join(b"ab" + b"c\x00" for _ in range(40)).replace(b"c\x00", b"\x00c"),
    }
    for name, data in binaries.items():
        assert looks_binary(data), name


def test_decode_reads_western_european_legacy_text_as_cp1252():
    """Latin-1 and cp1252 notes (French, German, Spanish from old Windows editors) were read
    with U+FFFD in place of every accented letter, quote and euro sign: lost on display and in
    search."""
    for text in (
        "# Café\n\nLa crème brûlée, à bientôt, déjà vu; l’été.\n",
        "Grüße aus Köln: Größe, Äpfel, Straße.",
        "¿Qué tal? ¡Hola! El niño, mañana, 20°C, 5 m².",
        "“quoted” – 5 € … ",
        "Noël",
    ):
        decoded, warnings = decode(text.encode("cp1252"))
        assert decoded == text
        assert warnings[0].endswith("decoded as cp1252 (Western European)"), warnings
    assert decode(b"caf\xe9 \x93quoted\x94 \x80") == (
        "café “quoted” €",
        ["not UTF-8 (invalid at byte 3); decoded as cp1252 (Western European)"],
    )


def test_cp1252_and_cp1251_are_not_taken_for_each_other():
    """Russian keeps to cp1251/KOI8-R, down to short notes; what is too short to tell is not
    read as cp1252 ("Äà" for "Да"); cp1252 is not read as Cyrillic; Polish (cp1250) is not read
    as cp1252."""
    assert decode("Привет, мир".encode("cp1251")) == (
        "Привет, мир",
        ["not UTF-8 (invalid at byte 0); decoded as cp1251 (Cyrillic)"],
    )
    for short in ("Да", "я?\n", "в о а"):
        for codec in ("cp1251", "koi8_r"):
            assert "cp1252" not in decode(short.encode(codec))[1][0], (short, codec)
    text = "Être ou ne pas être, déjà, écrit à l’école"
    assert decode(text.encode("cp1252"))[1][0].endswith("cp1252 (Western European)")
    for polish in ("Zażółć gęślą jaźń", "mąż już był w Łodzi", "są, łza, że"):
        text, warnings = decode(polish.encode("cp1250"))
        assert "cp1252" not in warnings[0], (polish, text)


# Czech, Polish, Hungarian, Greek and Turkish as saved by old Windows (or Linux) editors: a
# paragraph and a one-line note of each.
OTHER_LEGACY = {
    "Czech": (
        "# Výlet\n\nPříliš žluťoučký kůň úpěl ďábelské ódy. Dnes ráno jsme šli do města, kde jsme "
        "potkali přátele a povídali si o počasí.\n",
        "Příliš žluťoučký kůň",
    ),
    "Polish": (
        "# Notatka\n\nZażółć gęślą jaźń. Wczoraj byłem w Łodzi i widziałem, że mąż już śpi, a "
        "dzieci bawią się w ogrodzie.\n",
        "Zażółć gęślą jaźń",
    ),
    "Hungarian": (
        "# Hírek\n\nÁrvíztűrő tükörfúrógép. A főváros új hídja őszre készül el, mondta a "
        "polgármester a sajtótájékoztatón.\n",
        "Árvíztűrő tükörfúrógép",
    ),
    "Greek": (
        "# Σημειώσεις\n\nΗ Αθήνα είναι η πρωτεύουσα της Ελλάδας. Σήμερα ο καιρός είναι ζεστός και "
        "ηλιόλουστος, και πολλοί άνθρωποι πηγαίνουν στη θάλασσα.\n",
        "Καλημέρα κόσμε, τι κάνεις;",
    ),
    "Turkish": (
        "# Notlar\n\nPijamalı hasta yağız şoföre çabucak güvendi. İstanbul'da bugün hava çok "
        "güzel, değil mi? Akşam yemeğinde balık yedik.\n",
        "Iğdır'da şöyle bir gün",
    ),
}


def test_decode_reads_central_european_greek_and_turkish_legacy_text():
    """Czech, Polish and Hungarian in cp1250 were read as cp1252 ("Árvíztûrõ", "Pøíliš") or
    replaced ("Za\ufffd\ufffd\ufffd"), Greek in cp1253 as cp1251 ("КблзмЭсб" for "Καλημέρα"),
    Turkish in cp1254 as cp1252 ("yaðýz þoföre"): not what the user wrote, in what brain showed
    and indexed. Each is read in the encoding whose letters are one language's now, the
    warning naming it."""
    names = {
        "cp1250": "cp1250 (Central European)",
        "iso8859_2": "ISO-8859-2 (Central European)",
        "cp1253": "cp1253 (Greek)",
        "cp1254": "cp1254 (Turkish)",
    }
    codecs_of = {"Czech": ("cp1250", "iso8859_2"), "Polish": ("cp1250", "iso8859_2"), "Hungarian": ("cp1250",)}
    codecs_of |= {"Greek": ("cp1253",), "Turkish": ("cp1254",)}
    for language, texts in OTHER_LEGACY.items():
        for text in texts:
            for codec in codecs_of[language]:
                decoded, warnings = decode(text.encode(codec))
                assert decoded == text, (language, codec, decoded)
                assert len(warnings) == 1 and warnings[0].endswith(f"decoded as {names[codec]}"), warnings
    note = parse_note(
        "cs.md", "---\r\ntitle: Výlet\r\ntags: [příroda]\r\n---\r\nŽluťoučký kůň\r\n".encode("cp1250"), 0.0
    )
    assert (note.title, note.tags, note.body) == ("Výlet", ["příroda"], "Žluťoučký kůň\n")


def test_the_other_legacy_encodings_leave_western_and_russian_text_as_it_was():
    """What cp1252 and cp1250 both hold the same ("Grüße", "Noël") stays cp1252; French,
    Spanish, Danish and Icelandic, whose letters other code pages hold at the same bytes
    ("très" is cp1250's "trčs", "þ" cp1254's "ş"), are read as cp1252; Russian stays
    cp1251/KOI8-R."""
    for text in (
        "Grüße aus Köln: Größe, Äpfel, Straße.",
        "Noël",
        "Il est très tôt, à côté de l’église, où l’on parle français.",
        "El niño está en España, mañana vamos a Peñíscola.",
        "Søren og Åse på færgen til Ærø.",
        "Þetta er íslenska: það var góður dagur, ýmislegt gerðist.",
        "Não sei, ação e coração, português.",
        # English quoting names of two languages: Czech has both letters (cp1250's "Bernabň")
        "The siege of Alcácer do Sal was won in 1217 by a fleet of crusaders on their way to the "
        "Holy Land, who stopped on the coast to help the king; a century later Bernabò Visconti "
        "ruled Milan with his brother.",
        # words of Western languages: Slovak has cp1250's "cittŕ", "giŕ", "Äpfel" and "está"
        "el città of über by già à by les le città mañana Äpfel die está die is.",
        "A pulse of 5 µs; the battery is a Li-ion cell.",  # cp1250's "µ" is ISO-8859-2's "ľ"
    ):
        assert decode(text.encode("cp1252")) == (text, [decode(text.encode("cp1252"))[1][0]])
        assert decode(text.encode("cp1252"))[1][0].endswith("cp1252 (Western European)"), text
    for codec, name in (("cp1251", "cp1251"), ("koi8_r", "KOI8-R")):
        text = "Москва зимой: снег и мороз, ёлка. Привет, мир!"
        assert decode(text.encode(codec))[1][0].endswith(f"decoded as {name} (Cyrillic)")


# Hebrew, Arabic, the Baltic languages and Ukrainian as saved by old Windows (or Linux)
# editors: a paragraph and a one-line note of each, and the code pages each is read in.
HEBREW_ARABIC_BALTIC = {
    "Hebrew": (
        ("cp1255", "iso8859_8"),
        "# פגישה\n\nשלום לכולם! מחר בבוקר ניפגש בבית הספר בירושלים, ואחר כך נלך לים בתל אביב. "
        "אל תשכחו להביא ספרים, מים ולחם.\n",
        "תודה רבה על הכול",
    ),
    "Hebrew, pointed": (("cp1255",), "בְּרֵאשִׁית בָּרָא אֱלֹהִים אֵת הַשָּׁמַיִם וְאֵת הָאָרֶץ", "שָׁלוֹם עֲלֵיכֶם"),
    "Arabic": (
        ("cp1256",),
        "# ملاحظات\n\nمرحبا بالعالم! غدا في الصباح سنذهب إلى المدرسة في القاهرة، ثم نزور المكتبة "
        "لشراء كتب جديدة. الطقس جميل اليوم، أليس كذلك؟\n",
        "ألف ليلة وليلة",
    ),
    "Lithuanian": (
        ("cp1257",),
        "# Užrašai\n\nŠiandien žiūrėjau į dangų ir mačiau, kaip ąžuolo šakos linguoja vėjyje. Rytoj "
        "važiuosime į Vilnių aplankyti senelių.\n",
        "Ačiū už pagalbą, labai gražu",
    ),
    "Latvian": (
        ("cp1257",),
        "# Piezīmes\n\nŠodien ir jauka diena: ķirbji ir gatavi, un maize ir ļoti garšīga. Rīt mēs "
        "brauksim uz Rīgu apciemot vecmāmiņu.\n",
        "Labdien, ķirbji ir ļoti garšīgi",
    ),
    "Estonian": (
        ("cp1257",),
        "# Märkmed\n\nTere hommikust! Täna on ilus päev, õunad on küpsed ja žürii otsustas, et "
        "šokolaad võidab. Homme sõidame Tallinna.\n",
        "Šokolaad ja žürii, õun ja müük",
    ),
    "Ukrainian": (
        ("cp1251", "koi8_u"),
        "# Нотатки\n\nПривіт! Сьогодні в Києві гарна погода, їжак сидить на ґанку, а ми їмо яблука "
        "й груші. Європейський день мов - свято.\n",
        "Їжак і ґанок, європейський",
    ),
    "Belarusian": (
        ("cp1251",),
        "# Нататкі\n\nПрывітанне! Сёння ў Мінску цёплае надвор'е, і ўсё добра. Заўтра мы паедзем да бабулі ў вёску.\n",
        "Ўсё добра, дзякуй",
    ),
}
LEGACY_NAMES = {
    "cp1255": "cp1255 (Hebrew)",
    "iso8859_8": "cp1255 (Hebrew)",  # the same letters at the same bytes: ISO-8859-8 only for "‗"
    "cp1256": "cp1256 (Arabic)",
    "cp1257": "cp1257 (Baltic)",
    "cp1251": "cp1251 (Cyrillic)",
    "koi8_u": "KOI8-U (Cyrillic)",
}


def test_decode_reads_hebrew_arabic_baltic_and_ukrainian_legacy_text():
    """Hebrew in cp1255 was read as Russian in cp1251 ("щмен" for "שלום": its letters are
    cp1251's small ones), Arabic in cp1256 replaced, Lithuanian in cp1257 as cp1252 ("Aèiû"),
    Ukrainian in KOI8-U replaced (KOI8-R has box lines at "і", "ї", "є", "ґ"). Each is read in
    its code page now, the warning naming it; Ukrainian and Belarusian in cp1251 as before."""
    for language, (codecs, *texts) in HEBREW_ARABIC_BALTIC.items():
        for text in texts:
            for codec in codecs:
                decoded, warnings = decode(text.encode(codec))
                assert decoded == text, (language, codec, decoded)
                assert len(warnings) == 1 and warnings[0].endswith(f"decoded as {LEGACY_NAMES[codec]}"), warnings
    # ISO-8859-8's "‗" (0xDF) is no character in cp1255
    assert decode("‗ שלום עולם ‗".encode("iso8859_8")) == (
        "‗ שלום עולם ‗",
        ["not UTF-8 (invalid at byte 0); decoded as ISO-8859-8 (Hebrew)"],
    )


def test_hebrew_and_arabic_rules_leave_russian_greek_and_western_text_as_it_was():
    """Hebrew and Arabic are tried first: Russian read in cp1255 breaks Hebrew's final letters
    ("привет" is "ןנטגוע") and in cp1256 mixes French letters with Arabic ones; a Latin note
    quoting two Hebrew words with no final letter among them reads as Cyrillic, as before
    (too little to tell)."""
    for text in (
        "Москва зимой: снег и мороз, ёлка. Привет, мир!",
        "где дом",
        "привет мир",
        "Это его дело, а не наше.",
    ):
        for codec, name in (("cp1251", "cp1251"), ("koi8_r", "KOI8-R")):
            decoded, warnings = decode(text.encode(codec))
            assert (decoded, warnings[0]) == (text, f"not UTF-8 (invalid at byte 0); decoded as {name} (Cyrillic)")
    for text, name in (
        ("Καλημέρα κόσμε, τι κάνεις;", "cp1253 (Greek)"),
        ("Il est très tôt, à côté de l’église.", "cp1252 (Western European)"),
        ("Zażółć gęślą jaźń", "cp1250 (Central European)"),
    ):
        codec = name.split()[0]
        assert decode(text.encode(codec))[1][0].endswith(f"decoded as {name}"), text


def test_decode_reads_a_one_line_note_of_one_script_in_utf16_without_a_bom():
    """A one-line Greek or Russian note in UTF-16 without a BOM has one NUL, its one space's high
    byte: it was taken for binary and skipped. One NUL will do when every other high byte is
    one script's (0x03 Greek, 0x04 Cyrillic): no binary file's bytes alternate so."""
    for text in ("Καλημέρα κόσμε", "Привет мир", "Příliš žluťoučký"):
        for codec, name in (("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE")):
            data = text.encode(codec)
            assert not looks_binary(data), (text, codec)
            assert decode(data) == (text, [f"decoded as {name} (no byte-order mark)"])
    # one NUL amid bytes of no such pattern is still binary
    assert looks_binary(bytes(range(1, 40)) + b"\x00" + bytes(range(41, 90)))
    assert looks_binary(b"\x03\xb1\x03\xb2\x00\x20\x07\x03")  # high bytes 0x03 and 0x07


# ----- the decoding rules' digest ----------------------------------------------------------


def decoding_digest(source: str) -> str:
    """What ``notes.DECODING`` must be for this source of brain/notes.py: a digest of
    ``decode``, ``looks_binary`` and every top-level definition they use, directly or not, less
    ``DECODING`` itself, comments, docstrings and blank lines. Source text rather than an AST
    dump, whose form changes between Python versions."""
    tree = ast.parse(source)
    defined: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    defined[target.id] = node
    used: set[str] = set()
    wanted = ["decode", "looks_binary"]
    while wanted:
        name = wanted.pop()
        if name not in used and name in defined and name != "DECODING":
            used.add(name)
            wanted.extend(n.id for n in ast.walk(defined[name]) if isinstance(n, ast.Name))
    nodes = sorted({id(defined[name]): defined[name] for name in used}.values(), key=lambda n: n.lineno)
    lines = source.splitlines()
    cut: set[int] = set()  # the docstrings' lines
    for node in nodes:
        for inner in ast.walk(node):
            body = getattr(inner, "body", None)
            first = body[0] if isinstance(inner, (ast.FunctionDef, ast.ClassDef)) and body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                cut.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.start[1]
    digest = hashlib.sha256()
    for node in nodes:
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            line = lines[number - 1][: comments.get(number)].rstrip()
            if line and number not in cut:
                digest.update(line.encode() + b"\n")
    return digest.hexdigest()[:12]


def test_decoding_is_the_digest_of_the_decoding_rules():
    """``notes.DECODING`` was a number to bump by hand with any change to ``decode`` or
    ``looks_binary``: forgotten, an index kept the notes it had read the old way (U+FFFDs, a
    file skipped as binary) until their bytes changed. It is the rules' digest, held here."""
    source = Path(brain.notes.__file__).read_text(encoding="utf-8")
    expected = decoding_digest(source)
    assert expected == brain.notes.DECODING, (
        f"brain/notes.py's decoding rules changed: set DECODING = {expected!r} there, so that an "
        "index reads again the notes it decoded with a warning and the files it took for binary"
    )


def test_the_decoding_digest_covers_every_rule_and_no_more():
    source = Path(brain.notes.__file__).read_text(encoding="utf-8")
    digest = decoding_digest(source)
    for changed in (
        source.replace("_STRAY_NULS = 4", "_STRAY_NULS = 5"),  # a constant of looks_binary's rules
        source.replace("_MIN_CYRILLIC_LETTERS = 4", "_MIN_CYRILLIC_LETTERS = 3"),  # a constant of a helper of decode
        source.replace(
            "best: tuple[int, str, str] | None = None\n", "best: tuple[int, str, str] | None = None\n    pass\n"
        ),
    ):
        assert changed != source and decoding_digest(changed) != digest
    for unchanged in (
        source.replace("# Seen in real vaults:", "# Seen in real notes:"),  # a comment
        source.replace("Bytes → text, line endings", "Bytes to text, line endings"),  # a docstring
        source.replace("MAX_TITLE_CHARS = 1_000", "MAX_TITLE_CHARS = 2_000"),  # not decoding
        source.replace(f'DECODING = "{brain.notes.DECODING}"', 'DECODING = "x"'),
    ):
        assert unchanged != source and decoding_digest(unchanged) == digest


def test_a_tag_holds_what_obsidian_reads_in_one():
    # Obsidian's tag is every character up to a space or one of its punctuation (the pattern its
    # plugins copy from app.js: not U+2000-206F, U+2E00-2E7F, nor '!"#$%&()*+,.:;<=>?@^`{|}~[]\),
    # with one that is no digit. brain's [\w/-] stopped at a combining mark: a Devanagari, Tamil
    # or vowelled Arabic tag was cut after its first letters (#हिन्दी was "ह"), one decomposed as
    # macOS writes names (é as e + U+0301) lost its accent, and an emoji tag was none.
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "#café")
    body = f"#हिन्दी #தமிழ் #कर्म #العَرَبِيَّة {decomposed} #🌱/seedling #📚 #2024-05 #tag's end #a+b #x=y #1984\n"
    assert inline_tags(body) == [
        "हिन्दी",
        "தமிழ்",
        "कर्म",
        "العَرَبِيَّة",
        decomposed[1:],
        "🌱/seedling",
        "📚",
        "2024-05",
        "tag",
        "a",
        "x",
    ]
