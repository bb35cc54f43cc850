"""Notes crafted to hurt, from a vault brain's user did not write: each is read, in time and
memory in step with its size, and costs only itself (a warning at most, never a traceback)."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pathspec
from click.testing import CliRunner
from conftest import FakeEmbedder, write
from index_helpers import IndexView

from brain import config
from brain.chunking import MAX_CHARS
from brain.cli import cli
from brain.ignore_rules import defused
from brain.index.indexer import index_vault
from brain.notes import parse_note


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def test_a_number_too_long_to_print_stays_the_text_it_was():
    # Python prints no int of over 4,300 digits: 0x of 4,000 digits read as an int and made
    # json.dumps raise (a traceback out of brain index); 5,000 decimal digits failed to read,
    # and the whole frontmatter, title and tags too, was dropped.
    hex_digits, decimal = "0x" + "f" * 4_000, "9" * 5_000
    text = f"---\ntitle: Kept\ntags: [a, {hex_digits}]\nbig: {decimal}\n? {hex_digits}\n: key\nsmall: 0x1f\n---\nbody\n"
    note = parse_note("n.md", text.encode(), 0)
    assert note.title == "Kept" and note.tags == ["a", hex_digits]
    assert note.frontmatter["big"] == decimal and note.frontmatter[hex_digits] == "key"
    assert note.frontmatter["small"] == 31  # an int as before
    assert note.warnings == []
    json.dumps(note.frontmatter)


def test_a_key_that_is_a_list_or_a_mapping_costs_only_itself():
    # YAML lets a key be a list ("? [a, b]") or a mapping, which cannot key a dict: the whole
    # frontmatter was dropped with it (title, tags, dates).
    text = "---\ntitle: Kept\n? [a, b]\n: c\n{d: 1}: e\ntags: [x]\nnested: {? [z]: 1, ok: 2}\n---\nbody\n"
    note = parse_note("n.md", text.encode(), 0)
    assert note.title == "Kept" and note.tags == ["x"]
    assert note.frontmatter == {"title": "Kept", "tags": ["x"], "nested": {"ok": 2}}
    assert note.warnings == ["frontmatter: 3 keys that are a list or a mapping ignored"]


def test_a_vault_with_a_number_too_long_to_print_is_indexed(tmp_path):
    vault = tmp_path / "vault"
    write(vault, "big.md", f"---\ndate: 0x{'f' * 4_000}\n---\nA note about zeppelins.\n")
    write(vault, "other.md", "An ordinary note that links to [[big]].\n")
    report = _index(vault)
    assert report.notes == 2
    with IndexView(config.index_dir(vault)) as view:
        assert view.targets("other.md") == {"big.md"}
        assert any("zeppelins" in c["text"] for c in view.chunks("big.md"))


def test_a_long_title_is_cut_before_it_heads_every_chunk(tmp_path):
    # Every chunk's embedded text begins with its note's title: a 60 KB frontmatter title (or
    # 400 KB through YAML aliases) made each of a note's chunks that long to embed.
    vault = tmp_path / "vault"
    body = "\n\n".join(f"Paragraph {i} about zeppelins and harbours. " * 20 for i in range(20))
    write(vault, "long.md", "---\ntitle: " + "word " * 12_000 + "\n---\n" + body)
    embedder = FakeEmbedder()
    report = index_vault(vault, embedder=embedder, progress=False)
    assert len(embedder.embedded) > 5
    assert max(len(text) for text in embedder.embedded) < MAX_CHARS + 1_100
    assert any("title cut to 1,000 of its 59,999 characters" in w["message"] for w in report.warnings)
    with IndexView(config.index_dir(vault)) as view:
        assert view.note("long.md")["title"] == ("word " * 200).strip()


def test_a_warning_about_a_file_whose_name_breaks_a_line_is_one_line(tmp_path):
    # Linux lets a file name hold a line break: the warning brain index printed for such a note
    # went on over two lines (the second one free text), where brain status writes the escape.
    vault = tmp_path / "vault"
    write(vault, "two\nlines\ttabbed.md", "---\ndate: 2026-02-30\n---\nbody\n")
    result = CliRunner().invoke(cli, ["index", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    shown = "two\\nlines\\ttabbed.md: frontmatter date: '2026-02-30' is not a valid date"
    assert [line for line in result.stderr.splitlines() if "WARNING" in line] == [
        f"brain: WARNING: {shown}; the file's modification time is used instead"
    ]
    assert result.stderr.count("\n") == 1


def test_a_brainignore_pattern_of_many_stars_costs_a_names_length(tmp_path, monkeypatch):
    # pathspec let each `*` of a name try every length: this line took 4-6 s on a file name of
    # 28 a's, doubling with each a (this vault, a name of 30: 17.5 s), and one of 40 hung brain
    # index; now the vault takes a fraction of a second.
    vault = tmp_path / "vault"
    write(vault, ".brainignore", "*a" * 15 + "*b.md\n" + "*x*y*z*\n")
    write(vault, "a" * 30 + ".md", "not ignored: no b\n")
    write(vault, "deep/" + "a" * 20 + "b.md", "ignored\n")
    write(vault, "xayaz.md", "ignored\n")
    # CPU time, the walk in this process (no helper): another process's load does not add to
    # it, as it did to the wall time this was bounded by
    monkeypatch.setenv("BRAIN_WALK_WORKERS", "0")
    started = time.process_time()
    report = _index(vault)
    assert time.process_time() - started < 5
    assert report.notes == 1
    with IndexView(config.index_dir(vault)) as view:
        assert view.note("a" * 30 + ".md") is not None


def test_a_defused_pattern_matches_the_paths_pathspec_matches():
    rng = random.Random(5)
    pattern_parts = ["*", "*", "a", "b", "?", "[ab]", "[!a]", "/", "**", ".", "\\*", "é", "[a-c]"]
    path_parts = ["a", "b", "aa", "/", "ab", ".", "*", "é", "c"]
    rewritten = 0
    for _ in range(3_000):
        line = "".join(rng.choice(pattern_parts) for _ in range(rng.randint(2, 7)))
        try:
            regex = pathspec.GitIgnoreSpec.from_lines([line]).patterns[0].regex
        except ValueError:
            continue
        if regex is None or defused(regex.pattern) == regex.pattern:
            continue
        rewritten += 1
        safe = re.compile(defused(regex.pattern), regex.flags)
        for _ in range(20):
            path = "".join(rng.choice(path_parts) for _ in range(rng.randint(1, 9))).strip("/") or "a"
            old, new = regex.match(path), safe.match(path)
            assert (old and old.groupdict().get("ps_d")) == (new and new.groupdict().get("ps_d")), (line, path)
            assert bool(old) == bool(new), (line, path)
    assert rewritten > 100
