"""Notes read as Obsidian (CommonMark) reads their blocks: setext headings, fences inside quotes
and callouts, an HTML comment opened on a heading line, and the timeline's sections."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from brain.chunking import _sections, chunk_body
from brain.links import extract_links
from brain.notes import inline_tags
from brain.reading import headings


def _targets(body: str) -> list[str]:
    return [link.target for link in extract_links(body)]


def test_a_comment_opened_on_a_heading_line_and_closed_below_hides_nothing():
    # A heading is one line: a comment it opens and does not close is text in it (CommonMark;
    # Obsidian's editor), and the lines below are read. brain hid them to the "-->": their
    # links, tags and headings.
    body = "## Setup <!-- todo\nSee [[Later]] and #later.\n\n# Next\n\nwords -->\n\nEnd [[Last]].\n"
    assert _targets(body) == ["Later", "Last"]
    assert inline_tags(body) == ["later"]
    assert [h["path"] for h in headings(body)] == ["Setup <!-- todo", "Next"]
    assert [section.heading_path for section in _sections(body)] == [("Setup <!-- todo",), ("Next",)]
    # a comment opened on a line that is no heading still runs over the lines, as before
    assert _targets("Text <!-- todo\n[[Hidden]]\n-->\n[[Seen]]\n") == ["Seen"]
    assert _targets("<!--\n## Inside <!-- x\n[[Hidden]]\n-->\n[[Seen]]\n") == ["Seen"]


SETEXT = "Title\n=====\n\nThe intro.\n\nSub part\n--------\n\nThe details.\n"


def test_setext_headings_are_headings_for_chunks_and_the_outline():
    # Obsidian renders "Title" over "===" as a heading (level 1) and "Sub" over "---" as one of
    # level 2; brain read them as text, the underline too, under the heading above.
    assert [(h["path"], h["level"], h["line"], h["end"]) for h in headings(SETEXT)] == [
        ("Title", 1, 0, 10),
        ("Title > Sub part", 2, 5, 10),
    ]
    sections = _sections(SETEXT)
    assert [section.heading_path for section in sections] == [("Title",), ("Title", "Sub part")]
    assert sections[1].blocks[0] == "Sub part\n--------"  # the heading's lines open its section
    long = SETEXT.replace("The details.", "The details. " * 150)
    assert [chunk.heading_path for chunk in chunk_body(long)][-1] == ("Title", "Sub part")
    # inline code is text of it, beside a comment too (the comment's line alone is none)
    assert [h["heading"] for h in headings("<!-- draft -->\n`Title` <!-- x -->\n---\n")] == ["`Title`"]
    # a paragraph of two lines is one heading's text
    assert [h["heading"] for h in headings("One line\nand another\n===\n")] == ["One line and another"]


@pytest.mark.parametrize(
    "body",
    [
        "Text.\n\n---\n\nMore.\n",  # a break after a blank line
        "- item\n---\n",  # after a list item: a break
        "> quoted\n---\n",  # after a quote
        "| a | b |\n| - | - |\n| 1 | 2 |\n---\n",  # after a table
        "    code\n---\n",  # after indented code
        "Text.\n***\n",  # "***" is a break, never an underline
        "```\nText\n---\n```\n",  # in code
        "<!--\nText\n---\n-->\n",  # in a comment
        "- item\n\n===\n",  # "===" alone is text
    ],
)
def test_a_rule_or_a_line_of_equals_that_is_no_underline_is_no_heading(body):
    assert headings(body) == []
    assert [chunk.heading_path for chunk in chunk_body(body)] == [()]


CALLOUT = (
    "> [!example] Build\n> ```c\n> #include <stdio.h>\n> x = [[Not a link]];\n> # not a heading\n> ```\n"
    "> See [[Seen]] #real\n\n> ```\n> [[Also code]]\nAfter the quote: [[After]]\n"
)


def test_a_fence_in_a_quote_or_a_callout_is_code():
    # Obsidian renders "> ```" as a code block inside the quote: no link, no tag in it. brain
    # read a fence only at a line's start, and counted [[Not a link]] and the tag #include.
    assert _targets(CALLOUT) == ["Seen", "After"]  # the quote ended, and the fence with it
    assert inline_tags(CALLOUT) == ["real"]
    assert _targets("> > ```\n> > [[Code]]\n> > ```\n> > [[Quoted]]\n") == ["Quoted"]
    assert headings(CALLOUT) == []


LISTED = (
    "3. Open it in an editor\n4. Type and save:\n\t```bash\n\t#!/bin/bash\n\tsee [[Not a link]] #nottag\n\n"
    "\tfi\n\t```\n5. Then [[Seen]] #real\n- nested:\n    ~~~\n    [[Code]]\n  [[Item]]\n"
)


def test_a_fence_in_a_list_item_indented_by_a_tab_is_code():
    # Obsidian indents a list item's content by a tab: a fence there (four columns in or more) is
    # the item's code block. brain read a fence only up to three spaces in, and counted its links
    # and tags; it ends at its closing fence or at a line indented less (the item ended).
    assert _targets(LISTED) == ["Seen", "Item"]
    assert inline_tags(LISTED) == ["real"]


def test_a_kept_fence_in_a_quote_or_a_list_item_keeps_its_links():
    # BRAIN_LINK_FENCES (statblock) keeps its links wherever the fence is, and a note holding
    # one is found as holding one (read again when the setting changes)
    from brain.links import has_fence_of

    keep = frozenset({"statblock"})
    for body in ("> ```statblock\n> [[Goblin]]\n> ```\n", "- monster:\n\t```statblock\n\t[[Goblin]]\n\t```\n"):
        assert [link.target for link in extract_links(body, keep)] == ["Goblin"]
        assert _targets(body) == []
        assert has_fence_of(body, keep)


def test_the_timelines_sections_are_the_notes_headings():
    # brain history's "sections:" took a "# comment" in a code block (or an HTML comment) for a
    # heading, and saw no setext heading.
    from brain.recall.timeline import _summary

    version = SimpleNamespace(frontmatter="{}", title="T")
    old = ["# Deploy", "", "```sh", "# build it", "make", "```", "", "Notes", "-----", "", "one"]
    new = ["# Deploy", "", "```sh", "# build it", "make all", "```", "", "Notes", "-----", "", "two"]
    summary, added, removed = _summary(version, old, version, new)
    assert (summary, added, removed) == ("+2 −2 lines; sections: Deploy, Notes", 2, 2)
    comment = ["# Plan", "<!--", "# Draft", "-->", "text"]
    changed = ["# Plan", "<!--", "# Draft", "-->", "text!"]
    assert _summary(version, comment, version, changed)[0] == "+1 −1 lines; sections: Plan"


def test_an_index_that_read_these_otherwise_reads_those_notes_again(tmp_path, closing):
    """m034: the notes with a chunk holding a setext underline under text, a fence in a quote or
    indented in a list item, or a heading line opening a comment it does not close are read again
    once by the next run."""
    import sqlite3

    from index_helpers import IndexView, history_problems, index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("Intro\n=====\n\nThe intro, long enough.\n", encoding="utf-8")
    (vault / "B.md").write_text("> ```\n> [[C]]\n> ```\n", encoding="utf-8")
    (vault / "C.md").write_text("# Setup\n\nNo such thing, and [[A]].\n\n---\n\nA rule.\n", encoding="utf-8")
    (vault / "D.md").write_text("## Setup <!-- todo\n\nSee [[A]].\n\n-->\n", encoding="utf-8")
    (vault / "E.md").write_text("- build:\n\t```\n\t[[A]]\n\t```\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("UPDATE chunks SET heading = '' WHERE heading = 'Intro'")  # as an older brain filed it
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm034_setext_headings_and_nested_fences'")
    conn.commit()
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()
    assert "m034_setext_headings_and_nested_fences" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (4, 1)  # all but C, whose rule is no heading
    with IndexView(directory) as view:
        assert [chunk["heading"] for chunk in view.chunks("A.md")] == ["Intro"]
        assert view.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
    assert history_problems(db) == []
    assert index_into(home, vault)[0].changed == 0  # once


def test_a_setext_heading_underlined_by_one_mark_is_read_again(tmp_path, closing):
    """m034's first look for a chunk worth its pattern took a "--" or a "==": an underline of
    one mark ("Intro" over "=", "Sub" over "-", as CommonMark reads any length) was passed over,
    its note left filed under the heading above it."""
    import sqlite3

    from index_helpers import IndexView, index_into

    from brain.index.schema import INDEX_MIGRATIONS
    from brain.migrations import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("Intro\n=\n\nThe intro, long enough.\n", encoding="utf-8")
    (vault / "B.md").write_text("# Top\n\nText.\n\nSub\n  - \n\nUnder it.\n", encoding="utf-8")
    (vault / "C.md").write_text("Plain text - with a dash.\n\n- a list\n-\n", encoding="utf-8")
    home = tmp_path / "home"
    _, directory = index_into(home, vault)
    db = directory / "index.db"
    conn = connect(str(db))
    conn.execute("UPDATE chunks SET heading = '' WHERE heading = 'Intro'")  # as an older brain filed them
    conn.execute("UPDATE chunks SET heading = 'Top' WHERE heading = 'Top > Sub'")
    conn.execute("DELETE FROM _migrations WHERE db = 'index' AND name = 'm034_setext_headings_and_nested_fences'")
    conn.commit()
    conn.close()
    assert "m034_setext_headings_and_nested_fences" in INDEX_MIGRATIONS.pending(closing(sqlite3.connect(db)))
    report, _ = index_into(home, vault)
    assert (report.changed, report.unchanged) == (2, 1)  # not C: its "-" is a list item's
    with IndexView(directory) as view:
        assert [chunk["heading"] for chunk in view.chunks("A.md")] == ["Intro"]
