"""Blocks Obsidian renders as they are written, no link nor tag in them: math (``$$ … $$``) and
indented code; and headings it does not list: one inside a quote or a callout."""

from __future__ import annotations

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
