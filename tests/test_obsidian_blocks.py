"""Blocks Obsidian renders as they are written, no link nor tag in them: math (``$$ … $$``) and
indented code; and headings it does not list: one inside a quote or a callout."""

from __future__ import annotations

import random

import pytest

from brain.chunking import _sections
from brain.links import extract_links
from brain.notes import inline_tags
from brain.reading import headings


def _targets(body: str) -> list[str]:
    return [link.target for link in extract_links(body)]


def test_math_holds_no_link_nor_tag():
    # Obsidian renders $$ … $$ with MathJax (on a line or over lines): a [[link]] or a #tag in
    # it is TeX. brain counted both.
    body = "Euler:\n\n$$\ne^{i\\pi} = -1 \\quad [[Not a link]] #nottag\n$$\n\nSee [[Seen]] #real and $$[[In]]$$.\n"
    assert _targets(body) == ["Seen"]
    assert inline_tags(body) == ["real"]
    # an unclosed (or escaped) $$ hides nothing, and $$ in code is no math
    assert _targets("Costs $$ and [[Seen]] #real\n") == ["Seen"]
    assert _targets("\\$$ [[A]] $$ [[B]]\n") == ["A", "B"]  # the second $$ opens one not closed
    assert _targets("`$$` [[A]] `$$` [[B]]\n") == ["A", "B"]
    # math is on one line, or a block whose $$ opens its line, never past a blank line: prices
    # ("$$", "$$$") on lines of text are no math, and a link between them no less a link
    assert _targets("- [[Cafe]] $$\n- [[Bistro]] $$$\n- [[Diner]] $\n") == ["Cafe", "Bistro", "Diner"]
    assert _targets("Price $$ [[A]]\n\nmore $$ [[B]]\n") == ["A", "B"]
    assert _targets("$$\nx [[A]]\n\ny\n$$\n") == ["A"]
    assert _targets("> $$\n> x [[Hidden]]\n> $$\n[[Seen]]\n") == ["Seen"]


def test_indented_code_holds_no_link_nor_tag():
    # CommonMark (and Obsidian's editor, preview and metadata) read a line indented four spaces
    # or a tab, after a blank line or a heading and outside a list, as code to the next line
    # indented less. brain counted its links and tags.
    body = "Run it:\n\n    make [[Not a link]] #nottag\n\n\tstill code [[Neither]]\nBack [[Seen]] #real\n"
    assert _targets(body) == ["Seen"]
    assert inline_tags(body) == ["real"]
    assert _targets("# Setup\n    [[Code]]\n") == []
    assert _targets("```\nx\n```\n    [[Code]]\n \t\n\t[[Code]]\n") == []  # after a fence, a blank line of spaces
    assert _targets("    [[Code]]\n\n[[Seen]]\n") == ["Seen"]
    # not a paragraph's next line (lazy), nor a list item's next paragraph, nor in a fence
    assert _targets("Text\n    [[Lazy]]\n") == ["Lazy"]
    assert _targets("- item\n\n    more [[Item]]\n\n\t1. and [[Nested]]\n") == ["Item", "Nested"]
    assert inline_tags("1. item\n\n\tmore #itemtag\n") == ["itemtag"]
    kept = "```statblock\nname: x\n\n    desc: [[Goblin]]\n```\n"
    assert [link.target for link in extract_links(kept, frozenset({"statblock"}))] == ["Goblin"]
    # a list ends at a line a blank line parts from it: indented code may follow
    assert _targets("- item\n\nText.\n\n\t[[Code]]\n") == []


def test_a_heading_in_a_quote_or_a_callout_is_not_the_notes():
    # Obsidian's outline (and its [[Note#Heading]] links) lists no heading inside a quote or a
    # callout. brain did not either: this keeps it so.
    body = "> [!note] Title\n> # Inside\n> text\n\n> ## Quoted\n\n# Real\n"
    assert [h["path"] for h in headings(body)] == ["Real"]
    assert [section.heading_path for section in _sections(body)] == [(), ("Real",)]


def test_a_heading_inside_math_is_none():
    # Obsidian renders a $$ block with MathJax: "# x" or a "---" under a line in it is math,
    # no heading of the outline, of the chunks' heading paths nor of brain history's sections
    from brain.links import outline

    body = "Intro\n\n$$\n# x\n\\frac{a}{b}\n---\n$$\n\n# Real\n\nText.\n"
    assert [(h.level, h.text) for h in outline(body)] == [(1, "Real")]
    assert [section.heading_path for section in _sections(body)] == [(), ("Real",)]
    assert [h["path"] for h in headings(body)] == ["Real"]
    # outside a block it stays one, and so does one in a fence's "$$" or a heading holding math
    body = "# Sum $$x$$\n\n```\n$$\n```\n# After\n\n$$ unclosed\n\n# Last\n"
    assert [h.text for h in outline(body)] == ["Sum $$x$$", "After", "Last"]
    # nor in indented code, which outline never read as one
    assert outline("Intro\n\n    # code\n\n# Real\n")[0].text == "Real"


def test_a_dollar_pair_inside_an_html_comment_opens_no_math():
    # Obsidian hides the comment: its "$$" opens no math, over the link below, nor over a heading
    body = "<!--\n$$\n-->\n[[L]] #tag\n$$\n"
    assert _targets(body) == ["L"]
    assert inline_tags(body) == ["tag"]
    assert [h.text for h in _outline("<!--\n$$\n-->\n# H\n$$\n")] == ["H"]
    assert _targets("x <!-- a\n$$ -->\n[[L]] $$\n") == ["L"]
    # inside math a comment's "<!--" is math, and its "$$" closes the block
    assert _targets("$$\n[[M]]\n<!-- $$ -->\n[[L]]\n") == ["L"]


def _outline(body: str) -> list:
    from brain.links import outline

    return outline(body)


def test_an_index_that_counted_them_reads_those_notes_again(tmp_path, closing):
    """m036: the notes with math or indented code (and a link's or a tag's mark) are read again
    once by the next run, their links and tags as Obsidian reads them."""
    import sqlite3

    from index_helpers import IndexView, history_problems, index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("Text.\n\n$$\nx [[B]]\n$$\n", encoding="utf-8")
    (vault / "B.md").write_text("Run:\n\n\tmake [[A]] #build\n", encoding="utf-8")
    (vault / "C.md").write_text("- item\n\n    more [[A]]\n", encoding="utf-8")  # read the same, read again
    (vault / "D.md").write_text("Plain [[A]] #tag.\n", encoding="utf-8")
    (vault / "E.md").write_text("$$\nx = 1\n$$\n", encoding="utf-8")  # no link, no tag
    (vault / "F.md").write_text("Intro\n$$\nx\n---\n$$\n\nText.\n", encoding="utf-8")  # a heading in math
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    a, b = (conn.execute("SELECT id FROM notes WHERE path = ?", (p,)).fetchone()[0] for p in ("A.md", "B.md"))
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm036_math_and_indented_code'")
    conn.commit()
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()
    assert "m036_math_and_indented_code" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (4, 2)  # A, B, C and F; not D nor E
    with IndexView(directory) as view:
        assert view.conn.execute("SELECT count(*) FROM links WHERE source_id IN (?, ?)", (a, b)).fetchone()[0] == 0
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
    assert history_problems(db) == []
    assert index_into(home, vault)[0].changed == 0  # once


@pytest.mark.parametrize("chunking", ["note", "windows", "note+path"])
def test_m036_reads_again_a_first_line_of_indented_code_whose_chunk_lost_its_indent(
    tmp_path, monkeypatch, chunking, closing
):
    """BRAIN_CHUNKING=note and windows strip a chunk's text: a note whose indented code is its
    first line kept no sign of it in its chunks, and m036 read it not again."""
    import sqlite3

    from index_helpers import index_into

    from brain.migrations import connect

    monkeypatch.setenv("BRAIN_CHUNKING", chunking)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("    make [[B]] #build\n\nText.\n", encoding="utf-8")
    (vault / "B.md").write_text("Text.\n\nPlain [[A]] #tag.\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm036_math_and_indented_code'")
    conn.commit()
    conn.close()
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (1, 1)  # A; not B
    conn = closing(sqlite3.connect(db))
    assert conn.execute("SELECT value FROM meta WHERE key = 'chunking'").fetchone()[0] == chunking


_PIECES = [
    "",
    "text [[L]]",
    "#tag here",
    "    code [[K]] #c",
    "\tcode [[K]]",
    "  \t[[T]]",
    "- item",
    "1. item",
    "# Heading",
    "$$",
    "  $$ x",
    "$$x [[M]]$$",
    "---",
    "b",
    "x = [[M]] #m",
    "```",
    "\t```",
    "> quote [[Q]]",
    "words " * 40,
]


def _mask_as_before(text: str, keep: frozenset[str] = frozenset(), *, indented: str | None = None) -> str:
    """``links.mask_code`` before m036: fences and inline code, no math nor indented code."""
    from brain.links import _mask_fences

    return _mask_fences(text, keep) if "`" in text or "~" in text else text


def _read(body: str, strategy: str = "heading") -> tuple[list[str], list[str], list[tuple[tuple[str, ...], str]]]:
    from brain.chunking import chunk_note

    chunks = [(chunk.heading_path, chunk.text) for chunk in chunk_note(body, strategy)]
    return [link.target for link in extract_links(body)], inline_tags(body), chunks


@pytest.mark.parametrize("strategy", ["heading", "short", "note", "windows"])
def test_m036_marks_every_note_read_otherwise(strategy):
    # A note whose links, tags or chunks (a heading in math) the new reading changes holds, in the chunks an older brain
    # stored (by every BRAIN_CHUNKING: "note" and "windows" strip a chunk's text, its first
    # line's indent too), what m036's marker looks for: 20,000 random notes of the pieces that matter.
    import brain.links
    import brain.notes
    from brain.index.schema import (
        first_line_may_have_been_code,
        may_hold_heading_line,
        may_hold_math_or_indented_code,
        opens_math_block,
    )

    rng = random.Random(36)
    changed = missed = 0
    for _ in range(20_000):
        body = "\n".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12)))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(brain.links, "mask_code", _mask_as_before)
            patch.setattr(brain.notes, "mask_code", _mask_as_before)
            patch.setattr(brain.links, "_math_lines", lambda body: ())
            before = _read(body, strategy)
        if before == _read(body, strategy):
            continue
        changed += 1
        chunks = before[2]  # as the older brain stored them
        texts = [text for _, text in chunks]
        stripped = strategy in ("note", "windows")  # m036 reads the chunking in the index's meta
        may = [may_hold_math_or_indented_code(t) or (stripped and first_line_may_have_been_code(t)) for t in texts]
        marked = any(may) and any("[[" in t or "](" in t or "#" in t for t in texts)
        # a heading inside math is none: the chunks of a note with a $$ block and a heading differ
        marked |= any(opens_math_block(t) for t in texts) and any(may_hold_heading_line(t) for t in texts)
        missed += not marked
    assert changed > 1000
    assert missed == 0


def test_brain_keeps_no_note_text_once_it_is_parsed():
    # A server parses notes for its life: a module-global cache of the last body masked (and
    # its masked copy) pinned a note of up to BRAIN_MAX_NOTE_MB, and was state the parse
    # pool's threads shared. The body's indented code is read once and handed to links and tags.
    import sys

    from brain.notes import parse_note

    body = "".join(["Intro\n\n    code [[K]] #c\n\n", "text [[L]] #t\n" * 1000])  # built: not interned
    held = sys.getrefcount(body)
    assert _targets(body) == ["L"] * 1000 and set(inline_tags(body)) == {"t"}
    assert sys.getrefcount(body) == held
    note = parse_note("A.md", body.encode(), 0.0)
    assert [link.target for link in note.links] == ["L"] * 1000 and note.tags == ["t"]
    text = note.body
    held = sys.getrefcount(text)
    del note
    assert sys.getrefcount(text) == held - 1  # the note's, and none else
