"""The README's table of contents: near the top, every `## ` section in order, each link leading
to its heading as GitHub names the anchor; and every `](#…)` link in the README leads to a
heading it has (a renamed section broke the links to it, with nothing to say so)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _outside_fences(text: str) -> Iterator[str]:
    """The lines of ``text`` outside fenced code blocks (a note quoted in a ```text block has
    `## ` headings of its own, which are no sections of the README)."""
    fence: str | None = None
    for line in text.splitlines():
        opening = re.match(r"\s*(`{3,}|~{3,})", line)
        if opening:
            if fence is None:
                fence = opening.group(1)
            elif line.strip().startswith(fence):
                fence = None
            continue
        if fence is None:
            yield line


def _headings(text: str) -> list[tuple[int, str]]:
    found = []
    for line in _outside_fences(text):
        heading = re.match(r"(#{1,6}) (.+?)\s*$", line)
        if heading:
            found.append((len(heading.group(1)), heading.group(2)))
    return found


def _slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for _, title in _headings(text):
        slug = _slug(title)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_the_slug_is_githubs_for_the_headings_the_readme_links_already():
    assert _slug("Memory over time: `--as-of`, `--valid-at`, `brain history`") == (
        "memory-over-time---as-of---valid-at-brain-history"
    )
    assert _slug("Does the graph help?") == "does-the-graph-help"
    assert _slug("Automatic recall: the vault's notes on every prompt") == (
        "automatic-recall-the-vaults-notes-on-every-prompt"
    )


def test_the_contents_list_every_section_in_order_before_the_first():
    top = README[: README.index("\n## ")]
    assert "**Contents**" in top, "no table of contents before the first section"
    listed = re.findall(r"^- \[(.+)\]\(#([^)]+)\)$", top.split("**Contents**", 1)[1], flags=re.M)
    sections = [title for level, title in _headings(README) if level == 2]
    assert [title for title, _ in listed] == sections
    assert [anchor for _, anchor in listed] == [_slug(title) for title in sections]


def test_every_link_to_a_heading_leads_to_one():
    prose = "\n".join(_outside_fences(README))
    prose = re.sub(r"`[^`\n]*`", "", prose)  # `[x](#Heading)` is a link shown, not followed
    links = re.findall(r"\]\(#([^)\s]+)\)", prose)
    assert links, "the README links to none of its sections"
    assert sorted(set(links) - _anchors(README)) == []
