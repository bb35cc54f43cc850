"""``links.outline`` (and chunking's sections) reads a paragraph's lines as a setext heading's text only when an underline
follows it: the same outline as reading every line of every paragraph (kept here, as it was)."""

from __future__ import annotations

import random

from brain.chunking import MAX_HEADING_CHARS, _Section, _sections
from brain.links import (
    _BREAK,
    _FENCE,
    _MARKED,
    _NOT_SETEXT_TEXT,
    _SETEXT,
    Heading,
    _without_comments,
    comment_hidden_lines,
    heading_in_comment,
    heading_of,
    mask_code,
    outline,
)


def _outline_before(body: str) -> list[Heading]:
    """``links.outline`` as it was before it tested a paragraph only under an underline."""
    found: list[Heading] = []
    lines = body.split("\n")
    # a heading inside an HTML comment is none, and a line of a comment alone is no paragraph's
    hidden = comment_hidden_lines(body)
    code = mask_code(body).split("\n") if hidden is not None else None
    fence: str | None = None
    para = -1  # the first line of the paragraph being read, -1 outside one
    plain = True  # whether that paragraph may be a setext heading's text
    for number, line in enumerate(lines):
        marked = _MARKED.match(line)  # most lines open no fence, heading, underline nor rule
        if fence is not None:
            match = _FENCE.match(line) if marked else None
            if match and match.group(1).startswith(fence) and line.strip() == match.group(1):
                fence = None
            continue
        if marked and (match := _FENCE.match(line)):
            fence, para = match.group(1), -1
            continue
        if hidden is not None and code is not None and hidden[number] != code[number]:
            masked, shown = code[number], hidden[number]
            if not "".join(line[i] for i in range(len(line)) if masked[i] == shown[i]).strip():
                para = -1  # a line of a comment alone: an HTML block, no paragraph's
                continue
        heading = heading_of(line) if marked else None
        if heading is not None:
            if hidden is None or not heading_in_comment(line, hidden[number]):
                found.append(Heading(number, number, *heading))
                para = -1
            continue
        if not line or line.isspace():
            para = -1
            continue
        if marked:  # "=", "-", "*" or "_" first: an underline, a rule or neither
            if para >= 0 and (underline := _SETEXT.fullmatch(line)):
                if plain:
                    text = " ".join(part.strip() for part in lines[para:number])
                    text = _without_comments(text).strip() if "<!--" in text else text
                    level = 1 if underline.group(1)[0] == "=" else 2
                    found.append(Heading(number, para, level, text))
                    para = -1
                    continue
                if underline.group(1)[0] == "-":  # a break after a list item, a quote or a table
                    para = -1
                    continue
            if _BREAK.fullmatch(line):
                para = -1
                continue
        if para < 0:
            para = number
            plain = not line.startswith(("    ", "\t", " \t", "  \t", "   \t"))
        if plain:
            plain = not _NOT_SETEXT_TEXT.match(line)
    return found


def _sections_before(body: str) -> list[_Section]:
    """``chunking._sections`` as it was before it tested a line for a fence only by its start."""
    sections = [_Section((), [])]
    stack: list[tuple[int, str]] = []
    paragraph: list[str] = []
    fence: str | None = None
    code: list[str] = []

    def flush() -> None:
        if paragraph and any(line.strip() for line in paragraph):
            sections[-1].blocks.append("\n".join(paragraph).strip("\n"))
        paragraph.clear()

    marks = {heading.line: heading for heading in outline(body)}  # ATX and setext, none in a comment
    for number, line in enumerate(body.split("\n")):
        fence_match = _FENCE.match(line)
        if fence is not None:
            code.append(line)
            if fence_match and fence_match.group(1).startswith(fence) and line.strip() == fence_match.group(1):
                sections[-1].blocks.append("\n".join(code))
                code, fence = [], None
            continue
        if fence_match:
            flush()
            fence = fence_match.group(1)
            code = [line]
            continue
        heading = marks.get(number)
        if heading:
            # a setext heading's text is the paragraph read so far: it opens the new section
            above = paragraph[len(paragraph) - min(number - heading.first, len(paragraph)) :]
            del paragraph[len(paragraph) - len(above) :]
            flush()
            level, text = heading.level, heading.text[:MAX_HEADING_CHARS]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, text))
            sections.append(_Section(tuple(t for _, t in stack), ["\n".join([*above, line]).strip()]))
            continue
        if line.strip():
            paragraph.append(line)
        else:
            flush()
    flush()
    if code:  # an unclosed fence runs to the end of the note
        sections[-1].blocks.append("\n".join(code))
    return [s for s in sections if s.blocks]


# Lines of every kind outline reads: headings, underlines, rules, tables, lists, quotes, fences,
# comments (opened, closed, whole, on a heading), indented code, blanks and prose.
PIECES = [
    "",
    " ",
    "\t",
    "Intro",
    "plain text here",
    "  two spaces in",
    "    indented code",
    "\tTabbed",
    " \tmixed",
    "# Title",
    "## Sub",
    "###### Deep",
    "#NoSpace",
    "   ### Indented heading",
    "#",
    "=",
    "==",
    "===",
    "  ===  ",
    "    ===",
    "-",
    "--",
    "---",
    " - - -",
    "***",
    "* * *",
    "___",
    "_ _ _",
    "=-=",
    "- item",
    "-item",
    "+ plus",
    "* star",
    "1. one",
    "12) twelve",
    "1234567890. long",
    "> quote",
    "> [!note] callout",
    "<div>",
    "| a | b |",
    "| --- | --- |",
    "a | b",
    "--- | ---",
    ":-- | --:",
    "```",
    "```python",
    "````",
    "~~~",
    "~~~~",
    "  ```",
    "``` not ``` a fence",
    "<!--",
    "-->",
    "<!-- whole -->",
    "text <!-- open",
    "close --> text",
    "# h <!-- c -->",
    "## Setup <!-- todo",
    "# h --> more",
    "<!-- # hidden -->",
    "| <!-- x --> | --- |",
    "%% obsidian %%",
    "Title with `code`",
    "\u00a0# nbsp",
]


def _note(rng: random.Random) -> str:
    return "\n".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))


def test_outline_is_the_same_as_reading_every_paragraph_line() -> None:
    rng = random.Random(20261206)
    notes = [_note(rng) for _ in range(6000)]
    differ = [note for note in notes if outline(note) != _outline_before(note)]
    assert not differ, differ[:3]
    # the notes do hold what is compared: setext headings of both levels, over text and not
    found = [heading for note in notes for heading in outline(note)]
    assert {h.level for h in found if h.first < h.line} == {1, 2}
    assert sum(h.first < h.line for h in found) > 500


def test_a_heading_in_a_comment_inside_a_paragraph_is_read_as_before() -> None:
    # "# h --> | --- |": a heading whose "#" is inside the comment opened above: a line of the
    # paragraph, but never asked whether it opens a table (it does not end the paragraph)
    note = "text <!-- open\n# h --> | --- |\nmore\n==="
    assert outline(note) == _outline_before(note)


def test_sections_are_the_same_as_testing_every_line_for_a_fence() -> None:
    rng = random.Random(61206)
    for _ in range(3000):
        note = _note(rng)
        new = [(s.heading_path, s.blocks) for s in _sections(note)]
        assert new == [(s.heading_path, s.blocks) for s in _sections_before(note)], note
