"""Wikilinks and markdown links: extraction from a note body, and resolution as Obsidian does.

Extraction ignores code (fenced, indented, inline) and math (``$$ … $$``). Resolution order: a
path from the linking note's folder (``[[../Other/Note]]``, ``[[./Note]]``), vault-relative path
(with or without ``.md``), then file name regardless of case (of several notes of that name, the
one Obsidian opens: ``first_match``), then a frontmatter alias. What is left is dangling.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote

# Links to these are attachments, not notes; they are neither resolved nor dangling.
_ATTACHMENT_EXT = re.compile(
    r"\.(png|jpe?g|gif|svg|webp|avif|heic|tiff?|ico|bmp|pdf|mp3|mp4|wav|ogg|oga|opus|flac|m4a|3gp|webm|ogv|mkv|mov"
    r"|canvas|excalidraw|base|zip|csv|xlsx?|docx?|pptx?)$",
    re.IGNORECASE,
)

# A fence opens a line (three spaces at most before it). Not a run of backticks with another
# backtick after it on its line: "```code```" is inline code (CommonMark: a backtick fence's
# info string holds no backtick), and read as a fence it hid the rest of the note's links,
# tags and headings.
_FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`\n]*(?:\n|\Z))|~{3,})")
# An ATX heading's start; its text is the rest of the line less closing #s (``heading_of``).
HEADING_START = re.compile(r"^ {0,3}(#{1,6})\s")
_HEADING_AT = re.compile(r" {0,3}#{1,6}[ \t]")  # a heading line's start, at a position in a text
_BACKTICKS = re.compile(r"`+")
# Both start at the bracket, a literal, which the regex engine finds by a fast scan (an optional
# "!" in front made it try every position: half a note's parse); an embed is a link with "!"
# just before it. Neither reads past the next "[": that is where the next try starts, so a line
# of a thousand unclosed "[x](" costs its length, not its length squared (a hostile note of
# 40 KB took 16 s to parse).
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_URL_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
# A markdown link's target: between <> anything but "<", ">" and a line break; else runs of
# characters (spaces between them, read as before) holding balanced parentheses, one level:
# "Meeting%20(2024).md", what Obsidian writes for such a name (CommonMark). Ended at the
# first ")", it was a dangling "Meeting (2024", the note's link lost. Neither part reads a "[".
_MD_PART = r"(?:[^\[()\s<>]|\([^\[()\n]*\))+"
_MDLINK = re.compile(
    r"\[([^\[\]\n]*)\]\(\s*(?:<([^<>\[\n]*)>|(" + _MD_PART + r"(?:\s" + _MD_PART + r")*?))"
    r"(?:\s+(?:\"[^\"\[\n]*\"|'[^'\[\n]*'|\([^()\[\n]*\)))?\s*\)"  # a title: "…", '…' or (…)
)


@dataclass(frozen=True)
class Link:
    """A link as written in a note."""

    target: str  # the note part: "Folder/Note", "Note", "note.md"; "" for a same-note anchor
    kind: str  # wikilink | embed | markdown | property (a "[[link]]" as a frontmatter value)
    anchor: str | None  # "Heading", "^block", or None
    display: str | None  # the alias after "|" or the markdown link text
    line: int  # 1-based line of the link in the body; 0 for a property's, above the body


def fence_language(line: str) -> str:
    """The language of a fence's opening line ("```statblock" → "statblock"), lowercased; "" if none."""
    match = _FENCE.match(line)
    info = line[match.end() :].strip() if match else ""
    return info.split()[0].lower().strip("{}.") if info else ""


def has_fence_of(text: str, languages: frozenset[str]) -> bool:
    """Whether a fenced block of one of these languages opens anywhere in ``text``: only such a
    note's links depend on whether those languages' links count."""
    if not languages or ("```" not in text and "~~~" not in text):
        return False
    # in a quote, a callout or a list item too ("> ```statblock", "\t```statblock": mask_code)
    heads = (line.lstrip(" \t>") for line in text.splitlines())
    return any(fence_language(head) in languages for head in heads if _FENCE.match(head))


def heading_of(line: str) -> tuple[int, str] | None:
    """(level, text) of a heading line ("## Setup ##" → (2, "Setup")), else None. Closing #s
    are closing only after a space or a tab (CommonMark, and Obsidian's outline): "## C#" is
    (2, "C#"), not (2, "C").

    An HTML comment in it is not its text ("# Plan <!-- draft -->" → (1, "Plan")): Obsidian
    hides it, as it hides a heading inside one (chunking). In code (`<!-- -->`) it is text.

    In two steps, not one regex: "\\s+(.*?)\\s*#*\\s*$" split a run of spaces every way it
    could at every position (a heading of 1,600 spaces took 5 s to read)."""
    match = HEADING_START.match(line)
    if match is None:
        return None
    text = line[match.end() :]
    if "<!--" in text:
        text = _without_comments(text)
    text = text.strip()
    unclosed = text.rstrip("#")
    if not unclosed or unclosed[-1] in " \t":
        text = unclosed.rstrip()
    return len(match.group(1)), text


def _without_comments(line: str) -> str:
    """One line without the HTML comments closed on it (outside inline code), as
    ``mask_comments`` finds them; the spaces either side of one are one ("A <!-- x --> B" → "A B")."""
    found = mask_code(line) if "`" in line else line
    parts: list[str] = []
    done = 0
    while (start := found.find("<!--", done)) >= 0:
        end = found.find("-->", start + 2)
        if end < 0:
            break
        before = line[done:start]
        parts.append(before)
        done = end + 3
        if not before or before[-1] in " \t":  # one space of those either side of it
            while done < len(line) and line[done] in " \t":
                done += 1
    parts.append(line[done:])
    return "".join(parts)


def mask_code(text: str, keep: frozenset[str] = frozenset(), *, indented: str | None = None) -> str:
    """Blank out fenced code blocks and inline code, keeping line structure and offsets.

    The body of a fence whose language is in ``keep`` is left as it is: some plugins render
    their blocks, links and all (Fantasy Statblocks renders ```statblock YAML).

    A fence inside a blockquote or a callout (``> ```python``) is one too, as CommonMark and
    Obsidian read it: its lines keep their ``>`` and lose the rest, and it ends at its closing
    fence or where the quote does (a line with fewer ``>``). So is one indented by four columns
    or more (a tab: a fence in a list item, as Obsidian indents them, or in indented code): it
    ends at its closing fence or at a line indented less (the list item ended).

    Indented code (a line indented four columns or more after a blank line or a heading, outside
    a list, ``_mask_indented_code``) and math (``$$ … $$``, ``_mask_math``) are blanked too:
    Obsidian renders both as they are written, no link nor tag in them. ``indented``: what
    ``mask_indented_code(text)`` gave, when the caller has it (a note's links and its tags
    mask the same body: ``notes.parse_note`` reads its indented code once for both).
    """
    text = mask_indented_code(text) if indented is None else indented
    if "`" in text or "~" in text:  # a fence or inline code
        text = _mask_fences(text, keep)
    if "$" in text and "$$" in text:  # "$" first: a search for one character is the faster
        # a "$$" inside an HTML comment opens and closes no math: Obsidian hides the comment
        text = _mask_math(text, mask_comments(text) if "<!--" in text else text)
    return text


def _mask_fences(text: str, keep: frozenset[str]) -> str:
    """``mask_code``'s fences and inline code."""
    out: list[str] = []
    fence: str | None = None
    depth = 0  # the quote the open fence is in: how many ">" its lines start with
    deep = 0  # the columns an indented fence is indented by (0: three spaces or fewer)
    kept = False
    for line in text.split("\n"):
        if fence is not None and deep:
            stripped = line.strip()
            match = _FENCE.match(stripped)
            if match and match.group(1).startswith(fence) and stripped == match.group(1):
                fence = None
                out.append(" " * len(line))
                continue
            if not stripped or _columns(line) >= deep:
                out.append(line if kept else " " * len(line))
                continue
            fence = None  # the list item (or the indented code) ended, and the fence with it
        if fence is not None and depth:
            quoted = _quote_prefix(line, depth)
            if quoted is None:  # the quote ended, and the fence with it
                fence = None
            else:
                content = line[quoted:]
                match = _FENCE.match(content)
                if match and match.group(1).startswith(fence) and content.strip() == match.group(1):
                    fence = None
                    out.append(line[:quoted] + " " * len(content))
                else:
                    out.append(line if kept else line[:quoted] + " " * len(content))
                continue
        match = _FENCE.match(line)
        if fence is None:
            quoted = 0
            deep = 0
            if match is None and ">" in line[:4]:
                quoted = _QUOTE.match(line).end()  # type: ignore[union-attr]
                match = _FENCE.match(line[quoted:]) if quoted else None
            elif match is None and line[:1] in " \t" and (match := _INDENTED_FENCE.match(line)):
                deep = _columns(line)
            if match:
                fence = match.group(1)[0] * len(match.group(1))
                depth = line[:quoted].count(">")
                kept = bool(keep) and fence_language(line[quoted:].lstrip(" \t")) in keep
                out.append(line[:quoted] + " " * (len(line) - quoted))
                continue
            out.append(_mask_inline_code(line) if "`" in line else line)
        else:
            # A fence closes on a line of at least as many of the same character.
            if match and match.group(1).startswith(fence) and line.strip() == match.group(1):
                fence = None
                out.append(" " * len(line))
                continue
            out.append(line if kept else " " * len(line))
    return "\n".join(out)


# A list item's marker ("- ", "* ", "+ ", "1. ", "2) "), three spaces in at most.
_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# What opens a block after a paragraph's line, ending a list a blank line did not: a heading, a
# fence, a quote or a thematic break.
_OPENS_BLOCK = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|>|(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$)")


# Where indented code may start (``_mask_indented_code``): a line indented four columns or more
# (a tab) after a blank line, a heading or a fence's line, or first. Most notes with indented lines
# (nested list items) have none, and are not read line by line; a literal "\n" first, as the
# regex engine looks for it fast (an "^" in MULTILINE tried every position: 4x the time).
_MAY_OPEN_CODE = re.compile(r"\n(?:[ \t]*| {0,3}[#`~][^\n]*)\n(?: {4}| {0,3}\t)")
_FIRST_MAY_OPEN_CODE = re.compile(r" {0,3}[#`~][^\n]*\n(?: {4}| {0,3}\t)")


def _may_open_indented_code(text: str) -> bool:
    return text[:1] in (" ", "\t") or bool(_MAY_OPEN_CODE.search(text) or _FIRST_MAY_OPEN_CODE.match(text))


def mask_indented_code(text: str) -> str:
    """``text`` with its indented code blanked (``_mask_indented_code``); ``text`` itself when
    no line may open any (most notes)."""
    return _mask_indented_code(text) if _may_open_indented_code(text) else text


_BLOCK_FIRST = frozenset(" \t-+*#`~>_0123456789")  # the first characters of the lines but a paragraph's


def _mask_indented_code(text: str) -> str:
    """``text`` with its indented code blanked: a line indented four columns or more (a tab)
    opening no list item, after a blank line, a heading or a fence's end, outside a list, to the
    next line indented less (CommonMark; Obsidian renders it as code, and reads no link or tag
    in it: its editor, preview and metadata follow CommonMark). Not a list item's next paragraph
    ("- item", a blank line, "\tmore"): a list runs to a line indented less than two columns
    that a blank line (or a heading, a fence, a quote, a rule) parts from it. Indented code
    inside a list item (indented four columns past its text) is read as text, as before."""
    lines = text.split("\n")
    fence: str | None = None
    in_list = False
    after_block = True  # the line before ends no paragraph: the start, a blank line, a heading, a fence
    code = False
    for number, line in enumerate(lines):
        if fence is not None:
            match = _FENCE.match(line)
            if match and match.group(1).startswith(fence) and line.strip() == match.group(1):
                fence, after_block = None, True
            continue
        if not line or line.isspace():
            after_block = True
            continue
        if line[0] not in _BLOCK_FIRST:  # a paragraph's line (most lines): it ends a list after a blank line
            in_list = in_list and not after_block
            code = after_block = False
            continue
        if in_list and line.startswith(("  ", "\t", " \t")):  # the list's next line, or code in it: text
            after_block = False
            continue
        indented = line[0] in " \t" and _columns(line) >= 4
        if indented and (code or (after_block and not in_list)):
            code = True
            lines[number] = " " * len(line)
            continue
        code = False
        if _LIST_ITEM.match(line):
            in_list, after_block = True, False
            continue
        opens = _OPENS_BLOCK.match(line)
        if in_list and _columns(line) < 2 and (after_block or opens):
            in_list = False
        match = _FENCE.match(line) if opens else None
        if match:
            fence = match.group(1)[0] * len(match.group(1))
        after_block = bool(opens) and line.lstrip(" ")[:1] == "#"  # a heading is one line
    return "\n".join(lines)


def _mask_math(text: str, seen: str | None = None) -> str:
    """``text`` with its math blanked (Obsidian renders it with MathJax, no link or tag in it):
    ``$$ … $$`` on one line, or a block whose ``$$`` opens its line (after spaces or a quote's
    ``>``), over lines to its closing ``$$`` but never past a blank line. An unclosed ``$$`` (or
    ``\\$$``, escaped) hides nothing, nor do two on different lines of text ("- [[Cafe]] $$" over
    "- [[Bistro]] $$$": prices, not math): a link wrongly hidden is a link lost. A loop of
    ``find``: a note of a thousand ``$$`` costs its length. ``seen``: ``text`` as the ``$$``
    that open math are looked for in, of the same length: its HTML comments blanked, as a
    ``$$`` inside one opens nothing (``<!--`` over a line ``$$``); one closes math opened before
    it, a comment's ``<!--`` inside math being math."""
    seen = text if seen is None else seen
    parts: list[str] = []
    done = search = 0
    line_start = line_end = -1  # the line "$$" was last found on: one long line is searched once
    while (start := seen.find("$$", search)) >= 0:
        if start and text[start - 1] == "\\":
            search = start + 2
            continue
        if start > line_end:
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            line_end = len(text) if line_end < 0 else line_end
        end = text.find("$$", start + 2, line_end)
        if end < 0 and not text[line_start:start].strip(" \t>"):  # a block: "$$" opens its line
            end = text.find("$$", start + 2)
            if end >= 0 and _BLANK_LINE.search(text, start, end):
                end = -1
        if end < 0:
            search = start + 2
            continue
        end += 2
        math = text[start:end]
        blank = " " * len(math) if "\n" not in math else "\n".join(" " * len(line) for line in math.split("\n"))
        parts += [text[done:start], blank]
        done = search = end
    parts.append(text[done:])
    return "".join(parts)


_BLANK_LINE = re.compile(r"\n[ \t]*\n")


# A blockquote's markers at a line's start ("> ", ">> ", "> > "): a callout is one too.
_QUOTE = re.compile(r"(?: {0,3}> ?)*")
_ONE_QUOTE = re.compile(r" {0,3}> ?")


# A fence indented by four columns or more (``_columns``): in a list item, or in indented code.
_INDENTED_FENCE = re.compile(r"[ \t]+(`{3,}(?=[^`\n]*\Z)|~{3,})")


def _columns(line: str) -> int:
    """The columns a line is indented by, a tab to the next multiple of four (CommonMark)."""
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(4))


def _quote_prefix(line: str, depth: int) -> int | None:
    """Where a line's content starts past ``depth`` quote markers; None when it has fewer."""
    end = 0
    for _ in range(depth):
        match = _ONE_QUOTE.match(line, end)
        if match is None:
            return None
        end = match.end()
    return end


def _mask_inline_code(line: str) -> str:
    """Blank out a line's inline code as the pattern ``(`+)(?:(?!\\1).)+?\\1`` did, in one pass
    over its runs of backticks. The pattern tried every shorter opening of a run and scanned the
    rest of the line for each: a line of runs of growing length (1, 2, 3, ... backticks, each
    followed by a letter) cost its length to the power 1.5 (500 KB: 1.4 s; 2 MB: 13 s).

    What the pattern matched: a run of L backticks, M the lesser of L and the longest run after
    it, opens a span that the first run of at least M closes, M backticks wide; the whole run
    opens it when M > L / 2, else its last 2M - 1 backticks (a shorter opening met the rest of
    its own run first). What the closing run has left over is the next opening."""
    runs = [(match.start(), match.end() - match.start()) for match in _BACKTICKS.finditer(line)]
    longest_after = [0] * (len(runs) + 1)  # the longest run from index i on
    for i in range(len(runs) - 1, -1, -1):
        longest_after[i] = max(runs[i][1], longest_after[i + 1])
    spans: list[tuple[int, int]] = []
    k = 0
    start, length = runs[0] if runs else (0, 0)
    while k + 1 < len(runs):
        width = min(length, longest_after[k + 1])
        j = k + 1
        while runs[j][1] < width:
            j += 1
        close = runs[j][0]
        spans.append((start + max(0, length - 2 * width + 1), close + width))
        k = j
        if runs[j][1] > width:
            start, length = close + width, runs[j][1] - width
        else:
            k = j + 1
            if k < len(runs):
                start, length = runs[k]
    if not spans:
        return line
    parts: list[str] = []
    done = 0
    for begin, end in spans:
        parts += [line[done:begin], " " * (end - begin)]
        done = end
    parts.append(line[done:])
    return "".join(parts)


def mask_comments(text: str) -> str:
    """Blank out HTML comments (``<!-- … -->``, over lines too), keeping line structure and offsets.

    Obsidian reads no link and no tag inside one; inside its own ``%% … %%`` comments it reads
    both, as brain does. An unclosed ``<!--`` hides nothing, nor does one opened on a heading
    line and not closed on it (``## Setup <!-- todo``): a heading is one line, and a comment in
    it ends there or is text (CommonMark; Obsidian's editor reads it so), so the lines after it
    are read. A loop of ``find`` (no regex): a note of a thousand unclosed ``<!--`` costs its
    length, not its square.
    """
    if "<!--" not in text:
        return text
    parts: list[str] = []
    done = 0
    search = 0
    end = -1  # the first "-->" after the last "<!--": the same for each "<!--" before it
    while (start := text.find("<!--", search)) >= 0:
        if end < start + 2:
            end = text.find("-->", start + 2)  # "<!-->" closes itself, as CommonMark reads it
            if end < 0:
                break
        line_end = text.find("\n", start)
        if 0 <= line_end < end and _HEADING_AT.match(text, text.rfind("\n", 0, start) + 1):
            search = line_end  # text in its heading, not a comment over the lines below
            continue
        end += 3
        parts.append(text[done:start])
        parts.append(re.sub(r"[^\n]", " ", text[start:end]))
        done = search = end
        end = -1
    parts.append(text[done:])
    return "".join(parts)


def comment_hidden_lines(body: str) -> list[str] | None:
    """``body``'s lines with its code and HTML comments blanked, for ``heading_in_comment``; None
    when it holds no comment. A "# heading" inside ``<!-- … -->`` is none: Obsidian hides the
    comment, and reads no link or tag in it. Inside ``%% … %%`` a heading stays one, as its
    links and tags count there."""
    return mask_comments(mask_code(body)).split("\n") if "<!--" in body else None


def heading_in_comment(line: str, hidden: str) -> bool:
    """Whether a heading ``line``'s "#" is inside an HTML comment (``hidden``: that line of
    ``comment_hidden_lines``), so it is no heading."""
    start = len(line) - len(line.lstrip())
    return hidden[start : start + 1] != line[start : start + 1]


@dataclass(frozen=True)
class Heading:
    """A heading of a note's outline (``outline``)."""

    line: int  # its line in the body, from 0: a setext heading's underline
    first: int  # its first line: a setext heading's text starts above its underline
    level: int
    text: str


# A setext heading's underline: "===" (level 1) or "---" (level 2), alone on its line.
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
# A thematic break ("***", "- - -", "___"): it ends a paragraph, as does a line that opens
# another block: a list item, a quote or callout, a table's row, HTML. A paragraph holding such
# a line (or one opened indented by four spaces: code) is no setext heading's text: the "---"
# after it is a break (or, after "===", the line is the paragraph's text).
# What a fence, an ATX heading, an underline or a rule opens with (what ``outline`` looks at further).
_MARKED = re.compile(r" {0,3}[`~#=*_-]")
_MARK_FIRST = frozenset(" `~#=*_-")  # the first characters _MARKED may match
_FENCE_MARKS = frozenset("`~")
_BREAK = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")
_NOT_SETEXT_TEXT = re.compile(
    r" {0,3}(?:[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|>|<|\|)|.*\|[ \t]*:?-+:?[ \t]*(?:\||$)"
)


def _plain_paragraph(lines: list[str], first: int, end: int, skipped: list[int]) -> bool:
    """Whether the paragraph of ``lines[first:end]`` may be a setext heading's text: not opened
    indented as code, and no line of it (but the ``skipped`` ones) opening another block."""
    if lines[first].startswith(("    ", "\t", " \t", "  \t", "   \t")):
        return False
    tested = range(first, end)
    return not any(_NOT_SETEXT_TEXT.match(lines[n]) and n not in skipped for n in tested)


def _math_lines(body: str) -> frozenset[int]:
    """The lines of ``body`` that open inside math (``_mask_math``: a ``$$`` block over lines),
    outside code: "# x" there is no heading, Obsidian renders it with MathJax."""
    text = mask_indented_code(body)
    if "`" in text or "~" in text:
        text = _mask_fences(text, frozenset())
    masked = _mask_math(text, mask_comments(text) if "<!--" in text else text)
    if masked == text:
        return frozenset()
    lines: set[int] = set()
    for number, (line, blanked) in enumerate(zip(text.split("\n"), masked.split("\n"), strict=True)):
        first = len(line) - len(line.lstrip(" \t"))
        if first < len(line) and blanked[first] == " ":
            lines.add(number)
    return frozenset(lines)


def outline(body: str) -> list[Heading]:
    """Every heading of a note body, as Obsidian reads them: ATX (``## Setup``) and setext
    (``Title`` over ``===``, ``Sub`` over ``---``) headings outside code fences and HTML
    comments, in order. Chunking, ``brain note``'s outline and the timeline's sections read
    this one list.

    A ``---`` under a paragraph's line is a level-2 heading of the paragraph (CommonMark;
    Obsidian renders it so), not a break; after a blank line, a list item, a quote or a table
    it is a break, and at a note's top the frontmatter's fence (split off before the body)."""
    found: list[Heading] = []
    lines = body.split("\n")
    # a heading inside an HTML comment is none, and a line of a comment alone is no paragraph's
    hidden = comment_hidden_lines(body)
    code = mask_code(body).split("\n") if hidden is not None else None
    math = _math_lines(body) if "$$" in body else ()
    fence: str | None = None
    para = -1  # the first line of the paragraph being read, -1 outside one
    skipped: list[int] = []  # its lines of a heading inside a comment: not its text, nor tested
    for number, line in enumerate(lines):
        # most lines open no fence, heading, underline nor rule: a first character tells
        marked = line[:1] in _MARK_FIRST and _MARKED.match(line)
        mark = marked.group()[-1] if marked else ""  # "`", "~", "#", "=", "*", "_" or "-"
        if fence is not None:
            match = _FENCE.match(line) if mark in _FENCE_MARKS else None
            if match and match.group(1).startswith(fence) and line.strip() == match.group(1):
                fence = None
            continue
        if mark in _FENCE_MARKS and (match := _FENCE.match(line)):
            fence, para = match.group(1), -1
            continue
        if number in math:  # a line of math: no heading, underline nor paragraph (MathJax renders it)
            para = -1
            continue
        if hidden is not None and code is not None and hidden[number] != code[number]:
            masked, shown = code[number], hidden[number]
            if not "".join(line[i] for i in range(len(line)) if masked[i] == shown[i]).strip():
                para = -1  # a line of a comment alone: an HTML block, no paragraph's
                continue
        heading = heading_of(line) if mark == "#" else None
        if heading is not None:
            if hidden is None or not heading_in_comment(line, hidden[number]):
                found.append(Heading(number, number, *heading))
                para = -1
            elif para >= 0:
                skipped.append(number)
            continue
        if not line or line.isspace():
            para = -1
            continue
        if marked:  # "=", "-", "*" or "_" first: an underline, a rule or neither
            if para >= 0 and (underline := _SETEXT.fullmatch(line)):
                # whether the paragraph may be a setext heading's text: asked only here, of a
                # paragraph an underline follows (most paragraphs have none)
                if _plain_paragraph(lines, para, number, skipped):
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
            if skipped:
                skipped.clear()
    return found


def extract_links(body: str, fences: frozenset[str] = frozenset(), *, indented: str | None = None) -> list[Link]:
    """All note links in a body, in order, outside code (but inside fences of the ``fences``
    languages) and outside HTML comments. ``indented``: ``mask_indented_code(body)``, if read."""
    masked = mask_comments(mask_code(body, fences, indented=indented))
    links: list[tuple[int, Link]] = []
    line_starts = _line_starts(masked)
    for match in _WIKILINK.finditer(masked):
        start = match.start()
        embed = _bang_before(masked, start)
        start -= embed  # where the link begins, its "!" included
        inner = match.group(1)
        target_part, _, display = inner.partition("|")
        # Inside a markdown table the alias pipe is escaped: [[Note\|alias]].
        target, anchor = _split_anchor(target_part.strip().removesuffix("\\"))
        if not target and not anchor:
            continue
        links.append(
            (
                start,
                Link(
                    target=target,
                    kind="embed" if embed else "wikilink",
                    anchor=anchor,
                    display=display.strip() or None,
                    line=_line_of(line_starts, start),
                ),
            )
        )
    for match in _MDLINK.finditer(masked):
        text, angled, bare = match.groups()
        href = bare if angled is None else angled
        start = match.start()
        if _URL_SCHEME.match(href):  # http:, mailto:, obsidian: ...
            continue
        path_part, _, fragment = unquote(href).partition("#")
        # As Obsidian reads them: [x](Note), [x](Folder/My%20Note#Heading), [x](#Heading) (this
        # note), [x](file.pdf); with spaces as written only between <> or to a .md file, as
        # before ("[sic](see above)" is prose).
        if not path_part.lower().endswith(".md") and not _plain_target(href, angled is not None):
            continue
        # ![](Note.md) embeds the note and ![](pic.png) an image: still a markdown link, resolved
        # as one (relative to this note first)
        start -= _bang_before(masked, start)
        links.append(
            (
                start,
                Link(
                    target=path_part,
                    kind="markdown",
                    anchor=fragment or None,
                    display=text or None,
                    line=_line_of(line_starts, start),
                ),
            )
        )
    links.sort(key=lambda item: item[0])
    return [link for _, link in links]


def written_targets(text: str, fences: frozenset[str] = frozenset()) -> list[str]:
    """The link targets a passage holds, as ``extract_links`` reads them and the index keeps them
    (``links.target``): ``[[Target|x]]`` → "Target", ``[x](a%20b.md#h)`` → "a b.md", in order;
    not a same-note anchor's "". What the anchor lanes look up, as the index resolved them: a
    second reader of its own counted links in code and lost ``[x](Meeting%20(2024).md)``.

    A passage is cut from its note, so its indentation is not read as indented code: a passage
    opening inside a nested list reads as indented code alone (the SRD's bestiary index, 885
    links in 55 passages lost so). Fences, inline code, comments and math are read as written."""
    if "[" not in text:  # most passages: no link to read, nothing to mask
        return []
    return [link.target for link in extract_links(text, fences, indented=text) if link.target]


_WHOLE_WIKILINK = re.compile(r"\s*\[\[([^\[\]\n]+?)\]\]\s*")


def property_links(frontmatter: dict[str, Any]) -> list[Link]:
    """The links of a note's properties, as Obsidian reads them (since 1.4): a frontmatter value,
    or an item of a list value, at any depth, that is one quoted wikilink (``up: "[[Index]]"``,
    ``related: ["[[A]]", "[[B|b]]"]``). Obsidian counts them in the graph and backlinks; a
    markdown link there is text to it, and so is ``up: [[Index]]`` unquoted (YAML reads a list
    in a list). In the order written."""
    links: list[Link] = []
    stack: list[Any] = [frontmatter]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            stack.extend(reversed(value))
        elif isinstance(value, str) and "[[" in value and (match := _WHOLE_WIKILINK.fullmatch(value)):
            target_part, _, display = match.group(1).partition("|")
            target, anchor = _split_anchor(target_part.strip())
            if target or anchor:
                links.append(Link(target, "property", anchor, display.strip() or None, 0))
    return links


def pasted_link_target(ref: str) -> str | None:
    """The note a whole wikilink names (``[[Note#Heading|shown]]``, ``![[Note]]``), pasted where
    a note's name is asked for; None when ``ref`` is not one wikilink."""
    text = ref.strip()
    if not (text.startswith(("[[", "![[")) and text.endswith("]]")):
        return None
    links = extract_links(text)
    if len(links) != 1 or links[0].kind == "markdown":
        return None
    return links[0].target or None


def _relative_path(target: str, source: str) -> str | None:
    """The path, without ``.md``, a wikilink's target written from the linking note's folder
    (``[[../Other/Note]]``, ``[[./Note]]``: Obsidian's "Relative path to file" link format)
    names, else None. Not a target whose last part ``normpath`` would take away (``../..``):
    its keys keep the stem the target ends in (``key_stem``)."""
    if not target.startswith(("./", "../")) or posixpath.basename(target) in ("", ".", ".."):
        return None
    return _strip_md(posixpath.normpath(posixpath.join(posixpath.dirname(source), target)))


def _wikilink_path(target: str) -> str:
    """A wikilink's target as ``Resolver.resolve`` reads it: backslashes as slashes
    (``[[..\\Other\\Note]]``), leading slashes dropped (``[[/Note]]``)."""
    return target.strip().replace("\\", "/").lstrip("/")


def written_from_the_notes_folder(target: str) -> bool:
    """Whether a wikilink's target (as written, as ``links.target`` holds it) is resolved from
    the linking note's folder first (``_relative_path``): ``[[../Note]]``, ``[[./Note]]``, and
    read so ``[[..\\Note]]``, ``[[/../Note]]``; not ``[[../]]`` nor ``[[./..]]``, which
    resolve as any other target (m029 reads again the notes holding one)."""
    return _relative_path(_wikilink_path(target), "") is not None


def _plain_target(href: str, angled: bool) -> bool:
    """Whether a markdown link's target (not a .md file's) is one: something, and spaces only
    between ``<`` and ``>`` (``[](<>)`` is empty, ``[sic](see above)`` is prose)."""
    spaced = " " in href or "\t" in href
    return href not in ("", "#") and (angled or not spaced)


def _bang_before(text: str, start: int) -> bool:
    """Whether the link found at ``start`` is an embed (or an image): "!" just before it."""
    return start > 0 and text[start - 1] == "!"


def _split_anchor(target: str) -> tuple[str, str | None]:
    if "#" in target:
        note, _, anchor = target.partition("#")
        return note.strip(), anchor.strip() or None
    return target, None


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)


def is_attachment(target: str) -> bool:
    return bool(_ATTACHMENT_EXT.search(target))


def _norm(path: str) -> str:
    # Case-insensitive and Unicode-normalised: macOS writes file names decomposed (NFD).
    return unicodedata.normalize("NFC", path).casefold()


def _strip_md(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


class Resolver:
    """Resolves link targets to note paths over one snapshot of the vault.

    ``paths`` are vault-relative posix paths of notes (with ``.md``); ``aliases`` maps each
    note path to its frontmatter aliases.
    """

    def __init__(self, paths: Iterable[str], aliases: dict[str, list[str]] | None = None):
        self.by_path: dict[str, str] = {}  # exact path without .md -> path
        self.by_path_ci: dict[str, str] = {}  # casefolded path without .md -> path
        self.by_name: dict[str, list[str]] = {}  # casefolded stem -> paths
        self.by_alias: dict[str, list[str]] = {}
        for path in sorted(paths):
            self.by_path[_strip_md(path)] = path
            path_key, name_key = note_keys(path)
            self.by_path_ci.setdefault(path_key, path)
            self.by_name.setdefault(name_key, []).append(path)
        self.aliases = aliases or {}
        for path, names in sorted(self.aliases.items()):
            for alias in names:
                self.by_alias.setdefault(alias_key(alias), []).append(path)
        # Where each name's notes are, once asked for: weighing every note of a name for every
        # link made a thousand notes of one name linked from their thousand folders a million.
        self._spreads: dict[int, _Spread] = {}  # by id of a by_name / by_alias list: they live as long

    def _first_of(self, candidates: list[str], source: str) -> str:
        if len(candidates) == 1:
            return candidates[0]
        spread = self._spreads.get(id(candidates))
        if spread is None:
            spread = self._spreads[id(candidates)] = _Spread(candidates)
        return spread.first(source)

    def resolve(self, link: Link, source: str) -> str | None:
        """The note path a link points to, or None when dangling."""
        target = link.target.strip()
        if not target:  # [[#Heading]]: a link inside the same note
            return source
        if link.kind == "markdown":
            return self._resolve_markdown(target, source)
        target = _wikilink_path(target)
        relative = _relative_path(target, source)
        if relative is not None:
            if relative in self.by_path:
                return self.by_path[relative]
            if _norm(relative) in self.by_path_ci:
                return self.by_path_ci[_norm(relative)]
        bare = _strip_md(target)
        if bare in self.by_path:
            return self.by_path[bare]
        folded = _norm(bare)
        if folded in self.by_path_ci:
            return self.by_path_ci[folded]
        if "/" in bare:
            hit = self._by_tail(bare, source)
            if hit:
                return hit
        candidates = self.by_name.get(folded if "/" not in bare else _norm(posixpath.basename(bare)))
        if candidates and "/" not in bare:
            return self._first_of(candidates, source)
        aliased = self.by_alias.get(_norm(target))
        if aliased:
            return self._first_of(aliased, source)
        return None

    def answering_step(self, target: str) -> tuple[str, list[tuple[str, list[str]]]]:
        """For a name typed by a person (a wikilink from the vault's root): what the step of
        ``resolve`` that answers it compares (``target`` without ``.md``, or as typed for an
        alias), and every note that step chose among, each with what of it was compared (its
        path, the end of its path or its file name without ``.md``, or its aliases). The steps
        are ``resolve``'s, in its order; ``resolve`` picks one of these notes (``reading.py``
        tells the reader about the others)."""
        bare = _strip_md(target)
        if bare in self.by_path:
            return bare, [(self.by_path[bare], [bare])]
        folded = _norm(bare)
        named = self.by_name.get(_norm(posixpath.basename(bare)), [])  # only these can match: no scan of every path
        same_path = [(p, [_strip_md(p)]) for p in named if _norm(_strip_md(p)) == folded]
        if same_path:  # every note whose path differs only in case, not only the first
            return bare, same_path
        if "/" in bare:
            depth = bare.count("/") + 1
            tails = [(p, "/".join(_strip_md(p).split("/")[-depth:])) for p in named]
            hits = [(p, [tail]) for p, tail in tails if _norm(tail) == folded]
            if hits:
                return bare, hits
        elif named:
            return bare, [(p, [posixpath.basename(_strip_md(p))]) for p in named]
        aliased = self.by_alias.get(alias_key(target), [])
        return target, [(p, [a.strip() for a in self.aliases.get(p, [])]) for p in aliased]

    def _by_tail(self, bare: str, source: str) -> str | None:
        """A partial path ("Spells/Chaos-Ray") matches the notes whose path ends with it."""
        if "/" not in bare or bare.startswith("../"):
            return None
        tail = "/" + _norm(bare)
        stem = _norm(posixpath.basename(bare))
        # Only notes with that file name can match: no scan of every path.
        hits = [p for p in self.by_name.get(stem, []) if ("/" + _norm(_strip_md(p))).endswith(tail)]
        return first_match(hits, source) if hits else None

    def _resolve_markdown(self, target: str, source: str) -> str | None:
        # Markdown links are relative to the linking note's folder, or vault-absolute with "/".
        if target.startswith("/"):
            candidate = posixpath.normpath(target.lstrip("/"))
        else:
            candidate = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        bare = _strip_md(candidate)
        if bare in self.by_path:
            return self.by_path[bare]
        if _norm(bare) in self.by_path_ci:
            return self.by_path_ci[_norm(bare)]
        # Obsidian also writes vault-relative paths in markdown links, and shortest paths
        # that only the end of a note's path matches, or only its file name: it resolves
        # "[x](Note.md)" as "[[Note]]", to the note of that name wherever it is.
        bare = _strip_md(posixpath.normpath(target.lstrip("/")))
        if bare in self.by_path:
            return self.by_path[bare]
        if _norm(bare) in self.by_path_ci:
            return self.by_path_ci[_norm(bare)]
        if "/" in bare:
            return self._by_tail(bare, source)
        candidates = self.by_name.get(_norm(bare))
        return self._first_of(candidates, source) if candidates else None


def note_keys(path: str) -> tuple[str, str]:
    """(path key, name key) of a note: the casefolded path without ``.md``, and its file name
    without ``.md``. ``Resolver`` files a note under these and nothing else (and its aliases
    under ``alias_key``); the index stores them, to find a link's candidates (``lookup_keys``)."""
    bare = _strip_md(path)
    return _norm(bare), _norm(posixpath.basename(bare))


def alias_key(alias: str) -> str:
    """The key ``Resolver`` files a note's alias under."""
    return _norm(alias.strip())


@dataclass(frozen=True)
class LookupKeys:
    """Every key ``Resolver.resolve`` looks a link up by: notes' path keys, name keys, alias keys.

    Its answer depends only on the notes filed under one of them (and on the source path),
    so a ``Resolver`` over any set of notes holding all of those notes answers as one over
    the whole vault does. ``lookup_keys`` must follow ``Resolver.resolve`` step by step.
    """

    paths: frozenset[str]
    names: frozenset[str]
    aliases: frozenset[str]


def lookup_keys(link: Link, source: str) -> LookupKeys:
    """The keys ``Resolver.resolve(link, source)`` consults (see ``LookupKeys``)."""
    target = link.target.strip()
    if not target:  # the source note itself
        return LookupKeys(frozenset(), frozenset(), frozenset())
    if link.kind == "markdown":
        if target.startswith("/"):
            candidate = posixpath.normpath(target.lstrip("/"))
        else:
            candidate = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        relative = _strip_md(candidate)
        rooted = _strip_md(posixpath.normpath(target.lstrip("/")))
        return LookupKeys(
            frozenset({_norm(relative), _norm(rooted)}),
            frozenset({_norm(posixpath.basename(rooted))}),
            frozenset(),
        )
    target = _wikilink_path(target)
    bare = _strip_md(target)
    from_folder = _relative_path(target, source)
    # by_path / by_path_ci, from the source's folder first; _by_tail and by_name (same name key); by_alias.
    return LookupKeys(
        frozenset({_norm(bare)} if from_folder is None else {_norm(bare), _norm(from_folder)}),
        frozenset({_norm(posixpath.basename(bare))}),
        frozenset({_norm(target)}),
    )


def key_stem(key: str) -> str:
    """The file name a key ends in, without ``.md`` (every one: a key of ``x.md.md`` is ``x``).

    Every key ``lookup_keys`` gives one link shares one stem, ``link_stem``, and so do a note's
    path and name keys (its alias keys have their own): a link can only resolve differently
    when a note filed under a key with its stem came, went, or moved (``linking.resolve_links``).
    """
    stem = key.rpartition("/")[2]
    while stem.endswith(".md"):
        stem = stem[:-3]
    return stem


def link_stem(target: str, kind: str) -> str | None:
    """``key_stem`` of each key ``lookup_keys`` gives a link (they are all the same), None for a
    link to its own note (no keys). Taken from the last part of the target as written, without
    building the keys: no step of ``lookup_keys`` moves that part (a markdown link's target ends
    in ``.md``, so normpath keeps it; NFC and casefold neither make nor take a ``/``)."""
    target = target.strip()
    if not target:
        return None
    if kind != "markdown":
        target = target.replace("\\", "/")
    return key_stem(_norm(target.rpartition("/")[2]))


class NameLookup(Protocol):
    """Where the notes filed under some keys are found (``IndexStore``; a past slice)."""

    def notes_named(
        self, path_keys: Iterable[str], name_keys: Iterable[str], alias_keys: Iterable[str]
    ) -> dict[str, int]: ...

    def aliases_of(self, note_ids: Iterable[int]) -> dict[str, list[str]]: ...


def candidate_resolver(
    names: NameLookup, links: Iterable[tuple[Link, str]], sources: dict[str, int]
) -> tuple[Resolver, dict[str, int]]:
    """A Resolver over ``sources`` (path → id of the links' notes) and every note filed under a
    key one of ``links`` (each with its source note's path) can match: for these links it
    answers as one over every note would (``LookupKeys``); and path → id of its notes."""
    path_keys: set[str] = set()
    name_keys: set[str] = set()
    alias_keys: set[str] = set()
    for link, source in links:
        keys = lookup_keys(link, source)
        path_keys |= keys.paths
        name_keys |= keys.names
        alias_keys |= keys.aliases
    id_by_path = names.notes_named(path_keys, name_keys, alias_keys)
    id_by_path.update(sources)
    return Resolver(id_by_path, names.aliases_of(id_by_path.values())), id_by_path


def _folders(path: str) -> tuple[str, ...]:
    return tuple(posixpath.dirname(path).split("/")) if "/" in path else ()


def _js_length(path: str) -> int:
    """A path's length as Obsidian (JavaScript) counts it: in UTF-16 code units, an emoji two."""
    return len(path) + sum(1 for char in path if ord(char) > 0xFFFF)


def _folder_key(path: str) -> tuple[str, ...]:
    """The folders a path is in, as ``first_match`` compares them: case-insensitively, NFC."""
    return _folders(_norm(path))


class _Spread:
    """The notes of one name by folder, for ``first_match`` in steps of the source's depth: each
    folder holds the first (shortest path, then by path) of the notes inside it at any depth; the
    vault's root, of them all. Weighing every note of a name for every link made a thousand
    notes of one name linked from their thousand folders a million steps."""

    def __init__(self, candidates: list[str]):
        self.best: dict[tuple[str, ...], tuple[int, str]] = {}
        for path in candidates:
            folders = _folder_key(path)
            here = (_js_length(path), path)
            for i in range(len(folders) + 1):
                below = self.best.get(folders[:i])
                if below is None or here < below:
                    self.best[folders[:i]] = here

    def first(self, source: str) -> str:
        inside = self.best.get(_folder_key(source))
        return (inside or self.best[()])[1]


def first_match(candidates: list[str], source: str) -> str:
    """The candidate Obsidian opens for a link from ``source`` that several notes answer (its
    ``getLinkpathDest``, read in its app.js; a note at the vault's root named as written was
    taken before, by path): of those inside the linking note's folder, at any depth, the one of
    the shortest path; else the shortest path of them all (JavaScript's length: ``_js_length``).
    Obsidian leaves a tie in its load order; brain takes the first by path. Obsidian's "inside"
    is a prefix of the path's text ("A/B" holds "A/Bc/x.md"); brain's is a folder's."""
    if len(candidates) == 1:  # most names are unique: nothing to weigh
        return candidates[0]
    folder = _folder_key(source)
    inside = [path for path in candidates if _folder_key(path)[: len(folder)] == folder]
    return min(inside or candidates, key=lambda path: (_js_length(path), path))


def nearest(candidates: list[str], source: str) -> str:
    """The candidate nearest the source note: fewest folder steps apart, then shallowest."""
    if len(candidates) == 1:  # most names are unique: no distances to weigh
        return candidates[0]
    source_dirs = posixpath.dirname(source).split("/") if "/" in source else []

    def key(path: str) -> tuple[int, int, str]:
        dirs = posixpath.dirname(path).split("/") if "/" in path else []
        shared = 0
        for a, b in zip(source_dirs, dirs):
            if a != b:
                break
            shared += 1
        distance = (len(source_dirs) - shared) + (len(dirs) - shared)
        return (distance, len(dirs), path)

    return min(candidates, key=key)
