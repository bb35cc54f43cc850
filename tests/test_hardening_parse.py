"""Issue 9, reading notes: hostile or odd input in frontmatter, `.brainignore` and long lines
never stops a run, never costs unbounded memory, and never loses more than the bad part.

Item 6: YAML alias bombs; 9: a bad `.brainignore`; 14: the chunker cutting words;
15: an impossible date; 16: null and empty aliases. (Item 18's query-file checks are in
test_eval.py.)
"""

from __future__ import annotations

import json
import os
import re
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import IndexView

from brain import config
from brain.chunking import MAX_CHARS, TARGET_CHARS, chunk_body
from brain.cli import cli
from brain.index.indexer import index_vault
from brain.index.status import vault_status
from brain.index.store import dumps
from brain.notes import MAX_STORED_FRONTMATTER_CHARS, parse_note, split_frontmatter, world_time
from brain.vault import load_ignore, scan


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def _view(vault: Path) -> IndexView:
    return IndexView(config.index_dir(vault))


def _warnings_of(report, path: str) -> list[str]:
    return [w["message"] for w in report.warnings if w["path"] == path]


# ----- item 6: a YAML alias bomb in frontmatter -------------------------------------------


def alias_bomb(levels: int, extra: str = "") -> bytes:
    """The "billion laughs": each level lists the previous one nine times (9**levels leaves)."""
    lines = ["---", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return ("\n".join(lines) + f"\n{extra}---\nThe body of the bomb note mentions zeppelins.\n").encode()


@pytest.mark.parametrize("levels", [6, 9])
def test_alias_bomb_frontmatter_is_refused_with_a_warning_and_bounded_memory(levels):
    data = alias_bomb(levels, extra="title: Not used\n")
    assert len(data) < 600  # 9 levels: a 500-byte note that expands to 387 million strings
    tracemalloc.start()
    try:
        note = parse_note("notes/bomb.md", data, 0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024
    assert note.frontmatter == {} and len(dumps(note.frontmatter)) == 2
    assert note.title == "bomb"  # from the file name: nothing of the bomb is trusted
    assert "zeppelins" in note.body
    assert any("alias" in w and "frontmatter ignored" in w for w in note.warnings), note.warnings


def test_alias_bomb_note_is_indexed_with_a_small_row_and_a_warning(tmp_path):
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "bomb.md").write_bytes(alias_bomb(7))  # 4.8 million strings: 39 MB of JSON before
    write(vault, "other.md", "An ordinary note that links to [[bomb]].\n")
    report = _index(vault)
    assert report.notes == 2
    assert any("alias" in m for m in _warnings_of(report, "notes/bomb.md"))
    with _view(vault) as view:
        size = view.conn.execute("SELECT max(length(frontmatter)) FROM notes").fetchone()[0]
        assert size <= MAX_STORED_FRONTMATTER_CHARS
        row = view.note("notes/bomb.md")
        assert row["title"] == "bomb" and row["frontmatter"] == {}
        assert any("zeppelins" in c["text"] for c in view.chunks("notes/bomb.md"))
        assert view.targets("other.md") == {"notes/bomb.md"}


def test_alias_that_refers_to_itself_is_refused_not_a_crash():
    for yaml_text in ("a: &a [*a]", "a: &a {b: *a}", "title: T\nx: &x [1, [2, *x]]"):
        note = parse_note("loop.md", f"---\n{yaml_text}\n---\nbody\n".encode(), 0)
        assert note.frontmatter == {} and note.title == "loop"
        assert note.warnings == ["frontmatter ignored: a YAML alias refers to itself"]


def test_deeply_nested_frontmatter_is_refused_not_a_crash():
    note = parse_note("deep.md", ("---\na: " + "[" * 900 + "]" * 900 + "\n---\nbody\n").encode(), 0)
    assert note.frontmatter == {} and note.body == "body\n"
    assert note.warnings == ["frontmatter ignored: nested more than 64 levels deep"]


def test_oversized_frontmatter_text_is_not_parsed():
    big = "---\ntitle: Big\nabstract: " + "word " * 20_000 + "\n---\nbody\n"
    meta, body, warnings = split_frontmatter(big)
    assert meta == {} and body == "body\n"
    assert warnings == ["frontmatter ignored: 97 KB is over the 64 KB limit"]


def test_large_frontmatter_is_stored_without_its_largest_fields():
    """Aliases that expand within the budget still must not make a huge row: the largest
    fields are left out of the stored copy, the small ones brain reads stay."""
    extra = "superseded_by: '[[Newer]]'\naliases: [Laughs]\n"
    note = parse_note("notes/big.md", alias_bomb(4, extra=extra), 0)
    stored = dumps(note.frontmatter)
    assert len(stored) <= MAX_STORED_FRONTMATTER_CHARS
    assert note.frontmatter["superseded_by"] == "[[Newer]]"
    assert "a3" not in note.frontmatter and "a0" in note.frontmatter
    assert note.aliases == ["Laughs"]
    assert any(w.startswith("frontmatter fields not stored in the index") and "a3" in w for w in note.warnings)


def test_unknown_yaml_tag_keeps_the_frontmatter_and_runs_nothing():
    text = "---\ntitle: Tagged\ntags: !custom [x, y]\nrun: !!python/object/apply:os.system ['echo hi']\n---\nbody\n"
    note = parse_note("t.md", text.encode(), 0)
    assert note.title == "Tagged" and note.tags == ["x", "y"]
    assert note.frontmatter["run"] == ["echo hi"]  # a plain list, never a call
    assert note.warnings == []


# ----- item 9: a bad .brainignore -------------------------------------------------------


def _ignore_vault(tmp_path: Path, brainignore: str) -> Path:
    vault = tmp_path / "vault"
    write(vault, ".brainignore", brainignore)
    write(vault, "kept.md", "A kept note.\n")
    write(vault, "private/secret.md", "Not for the index.\n")
    write(vault, "draft.tmp.md", "A draft.\n")
    return vault


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [("!", ""), ("[z-a].md", " (bad character range z-a)"), ("\\", "")],
)
def test_bad_brainignore_line_is_reported_and_the_other_lines_still_apply(tmp_path, bad_line, reason):
    vault = _ignore_vault(tmp_path, f"private/\n{bad_line}\n*.tmp.md\n")
    rules = load_ignore(vault)
    assert rules.warnings == [f"line 2: {bad_line!r} is not a valid pattern{reason}; line ignored"]
    files, skipped = scan(vault, rules)
    assert [f.path for f in files] == ["kept.md"]
    assert {s.path for s in skipped} == {"private/", "draft.tmp.md"}


def test_brainignore_byte_order_mark_is_stripped_as_git_does(tmp_path):
    vault = tmp_path / "vault"
    (vault / "private").mkdir(parents=True)
    (vault / ".brainignore").write_bytes(b"\xef\xbb\xbfprivate/\n")
    write(vault, "private/secret.md", "x")
    write(vault, "kept.md", "y")
    files, skipped = scan(vault)
    assert [f.path for f in files] == ["kept.md"]
    assert [s.path for s in skipped] == ["private/"]
    assert load_ignore(vault).warnings == []


def test_unreadable_brainignore_is_a_warning_not_a_crash(tmp_path, monkeypatch):
    vault = _ignore_vault(tmp_path, "private/\n")
    ignore_file = vault / ".brainignore"
    real_read_bytes = Path.read_bytes

    def read_bytes(self):  # chmod 000 binds no root user: fail the read as it would
        if self == ignore_file:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    rules = load_ignore(vault)
    assert rules.warnings == ["cannot be read (Permission denied); no ignore rules applied"]
    files, _ = scan(vault, rules)
    assert {f.path for f in files} == {"kept.md", "private/secret.md", "draft.tmp.md"}
    report = _index(vault)
    assert _warnings_of(report, ".brainignore") == rules.warnings


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_brainignore_that_is_a_broken_symlink_is_a_warning(tmp_path):
    vault = tmp_path / "vault"
    write(vault, "kept.md", "y")
    (vault / ".brainignore").symlink_to(tmp_path / "nowhere")
    rules = load_ignore(vault)
    assert rules.warnings == ["cannot be read (No such file or directory); no ignore rules applied"]
    assert [f.path for f in scan(vault, rules)[0]] == ["kept.md"]


def test_brainignore_that_is_a_folder_is_a_warning(tmp_path):
    vault = tmp_path / "vault"
    (vault / ".brainignore").mkdir(parents=True)
    write(vault, "kept.md", "y")
    rules = load_ignore(vault)
    assert len(rules.warnings) == 1 and rules.warnings[0].startswith("cannot be read (")
    assert [f.path for f in scan(vault, rules)[0]] == ["kept.md"]


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and devices")
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_brainignore_that_is_a_fifo_or_a_device_is_a_warning_not_a_hang(tmp_path, kind):
    # A FIFO waited for a writer for good (brain index, brain serve's passes, every note
    # brain mcp read), and /dev/zero was read until memory ran out.
    import threading

    vault = tmp_path / "vault"
    write(vault, "kept.md", "y")
    ignore_file = vault / ".brainignore"
    if kind == "fifo":
        os.mkfifo(ignore_file)
    else:
        ignore_file.symlink_to("/dev/null")  # as /dev/zero, which was read until memory ran out
    outcome: list = []
    reader = threading.Thread(target=lambda: outcome.append(load_ignore(vault)), daemon=True)
    reader.start()
    reader.join(5)
    finished = not reader.is_alive()
    if kind == "fifo":  # let a read that waits end
        try:
            os.close(os.open(ignore_file, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    reader.join(5)
    assert finished, "load_ignore did not return"
    assert outcome[0].warnings == ["is not a regular file (a FIFO or a device); no ignore rules applied"]
    assert [f.path for f in scan(vault, outcome[0])[0]] == ["kept.md"]


def test_bad_brainignore_is_surfaced_by_brain_index_and_brain_status(tmp_path):
    vault = _ignore_vault(tmp_path, "!\nprivate/\n[z-a].md\n*.tmp.md\n")
    expected = [
        "line 1: '!' is not a valid pattern; line ignored",
        "line 3: '[z-a].md' is not a valid pattern (bad character range z-a); line ignored",
    ]
    result = CliRunner().invoke(cli, ["index", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output + result.stderr
    for message in expected:
        assert f"brain: WARNING: .brainignore: {message}" in result.stderr
    assert "1 notes, " in result.stdout  # private/ and *.tmp.md still ignored

    result = CliRunner().invoke(cli, ["status", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    for message in expected:
        assert f"  .brainignore: {message}" in result.stdout
    assert "pending: 0 new, 0 changed, 0 renamed, 0 deleted  (up to date)" in result.stdout

    result = CliRunner().invoke(cli, ["index", "--vault", str(vault), "--json"])
    assert [w["message"] for w in json.loads(result.stdout)["warnings"]] == expected
    status = vault_status(vault)
    assert [w for w in status.warnings if w["path"] == ".brainignore"] == [
        {"path": ".brainignore", "message": m} for m in expected
    ]


# ----- item 15: one impossible date dropped the whole frontmatter -------------------------


def test_impossible_date_keeps_title_aliases_and_tags_and_warns():
    text = "---\ntitle: Real title\naliases: [Other name]\ntags: [alpha]\ndate: 2026-02-30\n---\nbody #beta\n"
    note = parse_note("notes/n.md", text.encode(), 86400)
    assert note.title == "Real title"
    assert note.aliases == ["Other name"]
    assert note.tags == ["alpha", "beta"]
    assert note.date == "1970-01-02T00:00:00+00:00"  # the file's mtime
    assert note.frontmatter["date"] == "2026-02-30"  # kept as written
    assert note.warnings == [
        "frontmatter date: '2026-02-30' is not a valid date; the file's modification time is used instead"
    ]


def test_impossible_date_does_not_hide_a_valid_later_date_field():
    note = parse_note("n.md", b"---\ndate: 2024-13-45 10:00:00\nupdated: 2024-05-06\n---\nbody\n", 0)
    assert note.date == "2024-05-06"
    assert note.warnings == ["frontmatter date: '2024-13-45 10:00:00' is not a valid date; ignored"]


def test_an_unreadable_validity_date_is_named_in_a_warning():
    """`valid_to: 2026-02-30` (or a bare number) cannot be read, so --valid-at keeps the note
    as if it said nothing: a warning says so, as for `date`; readable ones say nothing."""
    text = "---\nvalid_to: 2026-02-30\nValid-From: 20260101\nvalid_until: 2026-03-01\n---\nbody\n"
    note = parse_note("n.md", text.encode(), 0)
    assert note.warnings == [
        "frontmatter valid_to: '2026-02-30' is not a valid date; ignored",
        "frontmatter Valid-From: '20260101' is not a valid date; ignored",
    ]
    assert world_time(note.frontmatter).valid_to == "2026-03-01"  # the next field that reads
    good = "---\nvalid_from: 2026-01-01 10:00:00\nvalid_to: [[2026-03-01]]\neffective: ''\n---\nbody\n"
    assert parse_note("n.md", good.encode(), 0).warnings == []


def test_impossible_date_note_still_resolves_alias_links(tmp_path):
    vault = tmp_path / "vault"
    write(vault, "Target.md", "---\naliases: [The Alias]\ndate: 2026-02-30\n---\nTarget body.\n")
    write(vault, "Source.md", "Links to [[The Alias]].\n")
    report = _index(vault)
    assert any("not a valid date" in m for m in _warnings_of(report, "Target.md"))
    with _view(vault) as view:
        assert view.targets("Source.md") == {"Target.md"}
        assert view.dangling() == []


def test_expanded_year_date_from_a_real_vault_is_read_not_warned():
    """13th-age-srd has `created: +002023-02-07 2316`: ISO 8601's expanded-year form."""
    note = parse_note("n.md", b"---\ncreated: +002023-02-07 2316\n---\nbody\n", 0)
    assert note.date == "2023-02-07" and note.warnings == []


def test_valid_dates_and_datetimes_are_read_as_before():
    note = parse_note("n.md", b"---\ncreated: 2024-01-05 10:30:00\nother: 2024-01-05\n---\nbody\n", 0)
    assert note.date == "2024-01-05T10:30:00"
    assert note.frontmatter == {"created": "2024-01-05T10:30:00", "other": "2024-01-05"}
    assert note.warnings == []


# ----- item 16: null and empty aliases ----------------------------------------------------


def test_null_and_empty_aliases_are_dropped_numbers_kept_as_text():
    note = parse_note("n.md", b"---\naliases: [2024, null, '', ' ', Name, Name]\n---\nbody\n", 0)
    assert note.aliases == ["2024", "Name"]
    assert "None" not in note.aliases


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [
        ("null", []),
        ("''", []),
        ("[null]", []),
        ("[~, '']", []),
        ("2024", ["2024"]),
        ("{a: 1}", []),
        ("[[x, null], 2024-05-06]", ["x", "2024-05-06"]),
    ],
)
def test_odd_alias_values(yaml_value, expected):
    note = parse_note("n.md", f"---\naliases: {yaml_value}\n---\nbody\n".encode(), 0)
    assert note.aliases == expected


def test_null_and_empty_tags_are_dropped():
    note = parse_note("n.md", b"---\ntags: [null, '', 2024, real]\n---\nbody\n", 0)
    assert note.tags == ["2024", "real"]


def test_null_alias_does_not_become_a_link_target(tmp_path):
    vault = tmp_path / "vault"
    write(vault, "A.md", "---\naliases: [null, '']\n---\nA body.\n")
    write(vault, "B.md", "Links to [[None]].\n")
    _index(vault)
    with _view(vault) as view:
        assert json.loads(view.conn.execute("SELECT aliases FROM notes WHERE path = 'A.md'").fetchone()[0]) == []
        assert view.dangling() == [("B.md", "None")]


# ----- item 14: the chunker cut long sentences mid-word -----------------------------------


def _long_sentence(words: int = 600) -> str:
    """One sentence of ~4,000 characters with no . ! or ?, with links that hold spaces."""
    parts = []
    for i in range(words):
        parts.append(f"word{i:04d}")
        if i % 17 == 5:
            parts.append(f"[[target note {i}]]")
        if i % 23 == 7:
            parts.append(f"[a link {i}](notes/n{i}.md)")
    return " ".join(parts)


def test_long_sentence_is_cut_between_words_not_inside_them():
    sentence = _long_sentence()
    assert len(sentence) > 3 * TARGET_CHARS and not set(".!?") & set(sentence.replace(".md", ""))
    chunks = chunk_body(f"## Notes\n\n{sentence}\n")
    assert len(chunks) >= 4
    words = set(re.findall(r"\w+", sentence))
    for chunk in chunks:
        assert set(re.findall(r"\w+", chunk.text)) <= words | {"Notes"}, chunk.text  # no fragment
        assert len(chunk.text) <= MAX_CHARS
    found = set().union(*(re.findall(r"\w+", c.text) for c in chunks))
    assert found >= words  # every word findable whole by BM25


def test_long_sentence_never_cuts_inside_a_wikilink_or_a_markdown_link():
    sentence = _long_sentence()
    links = re.findall(r"\[\[[^\]]*\]\]|\[[^\]]*\]\([^)]*\)", sentence)
    chunks = chunk_body(sentence)
    for chunk in chunks:
        assert chunk.text.count("[[") == chunk.text.count("]]"), chunk.text
        assert chunk.text.count("](") == len(re.findall(r"\[[^\]]*\]\([^)]*\)", chunk.text))
    texts = "\n".join(c.text for c in chunks)
    assert all(link in texts for link in links)


def test_a_single_token_longer_than_the_limit_is_the_only_hard_cut():
    token = "x" * 2500
    chunks = chunk_body(f"before words {token} after words")
    assert "".join(c.text for c in chunks).count("x") >= 2500
    assert any(c.text.startswith("before words") for c in chunks)
    assert "after words" in chunks[-1].text


def test_a_long_unspaced_path_is_cut_after_punctuation():
    path = "/".join(f"part{i:04d}" for i in range(400))  # 3,600 characters, no space
    chunks = chunk_body(path)
    segments = {f"part{i:04d}" for i in range(400)}
    for chunk in chunks:
        assert set(re.findall(r"\w+", chunk.text)) <= segments, chunk.text[:80]


def test_overlap_opens_at_a_word_not_inside_a_word_or_a_link():
    sentence = " ".join(f"[[linked note number {i}]]" for i in range(200))
    chunks = chunk_body(sentence)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert chunk.text.startswith("[[") and chunk.text.endswith("]]"), chunk.text[:40]


def test_an_old_index_with_a_huge_frontmatter_row_is_reparsed(tmp_path, closing):
    """An index from before the bound keeps its giant frontmatter row until the note's bytes
    change; migration m005 makes the next `brain index` parse it again under the limits."""
    import sqlite3

    from brain import config
    from brain.index.schema import INDEX_MIGRATIONS
    from brain.index.store import IndexStore
    from brain.migrations import connect

    vault = tmp_path / "v"
    write(vault, "bomb.md", "---\ntitle: Bomb\n---\nbody\n")
    write(vault, "fine.md", "---\ntitle: Fine\n---\nbody\n")
    index_vault(vault, embedder=FakeEmbedder(), progress=False)
    path = config.index_dir(vault) / "index.db"
    conn = connect(str(path))
    conn.execute("UPDATE notes SET frontmatter = ? WHERE path = 'bomb.md'", ('{"x": "' + "a" * 300_000 + '"}',))
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm005_reparse_oversized_frontmatter'")
    conn.close()
    assert "m005_reparse_oversized_frontmatter" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(path)))
    report = index_vault(vault, embedder=FakeEmbedder(), progress=False)  # migrates, then re-reads bomb.md
    assert (report.changed, report.unchanged) == (1, 1)
    store = IndexStore.open(config.index_dir(vault))
    try:
        sizes = dict(store.conn.execute("SELECT path, length(frontmatter) FROM notes").fetchall())
    finally:
        store.close()
    assert sizes["bomb.md"] < 100 and sizes["fine.md"] < 100
