"""Heading-aware chunking.

A note body is split at headings into sections (each knowing its heading path), then each
section by size into pieces of about ``target`` characters with ``overlap`` characters carried
over. Fenced code blocks stay whole where they fit in ``max_chars``; tiny sections are merged
into their neighbour. Prose is cut at sentence ends, and a sentence longer than ``target`` at
whitespace: never inside a word or a link, so BM25 still finds every word whole. The text that gets embedded carries the note title and heading path.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .config import DEFAULT_CHUNKING
from .links import _FENCE, fence_language, heading_of, outline
from .text import for_search

TARGET_CHARS = 1100
MAX_CHARS = 1600  # a section up to this size stays one chunk
MAX_CODE_CHARS = 2400  # a fenced code block up to this size is kept whole, in a chunk of its own if need be
OVERLAP_CHARS = 165  # ~15% of the target
MIN_CHARS = 200  # sections shorter than this merge into a neighbour

MAX_HEADING_CHARS = 1000  # a heading's text in a chunk's path: every chunk of its section carries it


@dataclass(frozen=True)
class Chunk:
    ordinal: int  # position in the note, from 0
    heading_path: tuple[str, ...]  # ("Setup", "Linux") for a chunk under ## Setup / ### Linux
    text: str  # the chunk's own text (what is shown as a snippet)

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)


def embedding_text(title: str, chunk: Chunk, path: str | None = None, *, searched: bool = True) -> str:
    """What the embedder sees: the note title and heading path give the chunk its context.

    With ``path`` (the note's vault-relative path; ``BRAIN_CHUNKING=…+path``) its folders come
    first: "Project Management > PM Software > Testing PM Software > Trello" says what a
    three-line note is. All of it as the index searches it (``text.for_search``: no tag
    characters, no word split by an invisible one); ``searched=False``: as the note holds it.
    """
    head = title if not chunk.heading_path else f"{title} > {chunk.heading}"
    folders = path.split("/")[:-1] if path else []
    if folders:
        head = " > ".join(folders) + " > " + head
    text = f"{head}\n\n{chunk.text}"
    return for_search(text) if searched else text


@dataclass
class _Section:
    heading_path: tuple[str, ...]
    blocks: list[str]  # paragraphs and whole code blocks

    @property
    def size(self) -> int:
        return sum(len(b) for b in self.blocks) + 2 * max(0, len(self.blocks) - 1)


_FENCE_FIRST = frozenset(" `~")  # the first characters a fence's line may have


def _sections(body: str) -> list[_Section]:
    sections = [_Section((), [])]
    stack: list[tuple[int, str]] = []
    paragraph: list[str] = []
    fence: str | None = None
    code: list[str] = []

    def flush() -> None:
        if paragraph:  # its lines are none blank
            sections[-1].blocks.append("\n".join(paragraph).strip("\n"))
        paragraph.clear()

    marks = {heading.line: heading for heading in outline(body)}  # ATX and setext, none in a comment
    for number, line in enumerate(body.split("\n")):
        fence_match = _FENCE.match(line) if line[:1] in _FENCE_FIRST else None
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


def _merge_tiny(sections: list[_Section], max_chars: int) -> list[_Section]:
    """``sections`` with the tiny ones merged into a neighbour (they are merged into in place).
    Each size is summed once and kept: summed again at each merge over the blocks merged so
    far, a note of 250,000 one-line headings (1 MB) took 3.3 s to chunk."""
    merged: list[_Section] = []
    kept = 0  # the size of merged[-1]
    for section in sections:
        size = section.size
        if merged and (kept < MIN_CHARS or size < MIN_CHARS):
            previous = merged[-1]
            if kept + size + 2 <= max_chars:
                # Keep the deeper context only when the pieces share it; otherwise the parent's.
                path = _common_prefix(previous.heading_path, section.heading_path)
                previous.heading_path = path or previous.heading_path
                previous.blocks.extend(section.blocks)
                kept += size + 2
                continue
            if (
                kept < MIN_CHARS
                and size > max_chars
                and section.heading_path[: len(previous.heading_path)] == previous.heading_path
            ):
                # A lone parent heading (or a line or two) before a section that is split by
                # size anyway: it opens the section's first piece instead of being a chunk alone.
                previous.heading_path = section.heading_path
                previous.blocks.extend(section.blocks)
                kept += size + 2
                continue
        merged.append(section)
        kept = size
    return merged


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return tuple(out)


def _split_long_block(block: str, target: int, max_chars: int) -> list[str]:
    """A block over max_chars: code by lines, prose by sentences, then between words."""
    if len(block) <= max_chars:
        return [block]
    is_code = bool(_FENCE.match(block))
    # (piece, the separator before it): lines keep their line breaks (lists, tables, code).
    pieces: list[tuple[str, str]] = []
    for line in block.split("\n"):
        sentences = [line] if is_code else re.split(r"(?<=[.!?…])\s+", line)
        pieces.extend((sentence, " " if i else "\n") for i, sentence in enumerate(sentences))
    out: list[str] = []
    current = ""
    for piece, joiner in pieces:
        if len(piece) > target:  # a single enormous line or sentence
            if current:
                out.append(current)
                current = ""
            parts = _split_words(piece, target)
            if not parts:  # nothing but spaces
                continue
            *whole, piece = parts
            out.extend(whole)
        if current and len(current) + len(piece) + 1 > target:
            out.append(current)
            current = piece
        else:
            current = f"{current}{joiner}{piece}" if current else piece
    if current:
        out.append(current)
    return out


# Links stay whole: a cut inside `[[target note]]` breaks the link in snippets and the words
# in BM25. Neither kind spans lines; a markdown link's target may hold parentheses, balanced
# (`[x](<Meeting (2024) notes.md>)`, as links.py reads it).
_LINK_SPAN = re.compile(r"!?\[\[[^\[\]\n]*\]\]|\[[^\[\]\n]*\]\((?:[^()\n]|\([^()\n]*\))*\)")
_UP_TO_LAST_NONWORD = re.compile(r".*\W", re.DOTALL)


def _link_spans(text: str) -> tuple[list[int], list[int]]:
    starts, ends = [], []
    for match in _LINK_SPAN.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def _inside_link(position: int, spans: tuple[list[int], list[int]]) -> int | None:
    """The start of the link that a cut at ``position`` (between two characters) would break."""
    starts, ends = spans
    i = bisect.bisect_left(starts, position) - 1
    if i >= 0 and position < ends[i]:
        return starts[i]
    return None


def _split_words(text: str, limit: int) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, cut at whitespace outside links, else
    after punctuation outside links, else at whitespace inside a link longer than ``limit``;
    only a single token longer than ``limit`` is cut inside."""
    spans = _link_spans(text)
    parts: list[str] = []
    start = 0
    while len(text) - start > limit:
        end = start + limit
        cut, skip = _break_before(text, start, end, spans)
        part = text[start:cut].rstrip()
        if part:
            parts.append(part)
        start = cut + skip
        while start < len(text) and text[start] in " \t":
            start += 1
    if start < len(text):
        parts.append(text[start:])
    return parts


def _break_before(text: str, start: int, end: int, spans: tuple[list[int], list[int]]) -> tuple[int, int]:
    """(cut position in (start, end], characters to skip after it) for ``_split_words``."""
    hi = end + 1
    while True:  # the last space or tab not inside a link
        space = max(text.rfind(" ", start + 1, hi), text.rfind("\t", start + 1, hi))
        if space < 0:
            break
        link_start = _inside_link(space, spans)
        if link_start is None:
            return space, 1
        hi = link_start + 1  # a space before the link, or the link's own start
    # After the last punctuation ("a/b", "a,b", CJK "、"); one inside a link gives way to a cut
    # just before that link.
    match = _UP_TO_LAST_NONWORD.match(text, start + 1, end)
    cut = match.end() if match else end
    link_start = _inside_link(cut, spans)
    if link_start is None and match:
        return cut, 0
    if link_start is not None and link_start > start:
        return link_start, 0  # the link opens the next part
    space = max(text.rfind(" ", start + 1, end + 1), text.rfind("\t", start + 1, end + 1))
    if space > 0:  # a link longer than the limit: between its words
        return space, 1
    return end, 0  # one token longer than the limit


def _closed_code(block: str) -> bool:
    """A whole fenced code block: opening and closing fence both in it."""
    lines = block.rstrip().split("\n")
    match = _FENCE.match(lines[0])
    return match is not None and len(lines) > 1 and lines[-1].strip().startswith(match.group(1))


def _overlap_tail(text: str, overlap: int) -> str:
    """The last ~overlap characters, starting at a line start (code, lists) or a word boundary
    outside a link; none when the tail is one unbroken token."""
    if overlap <= 0 or len(text) <= overlap:
        return text if overlap > 0 else ""
    offset = len(text) - overlap
    tail = text[offset:]
    newline = tail.find("\n")
    if 0 <= newline < overlap // 2:
        return tail[newline + 1 :]
    spans = _link_spans(text)
    space = tail.find(" ")
    while space >= 0:
        link_start = _inside_link(offset + space, spans)
        if link_start is None:
            return tail[space + 1 :]
        space = tail.find(" ", space + 1)
    return tail[newline + 1 :] if newline >= 0 else ""


def chunk_body(
    body: str,
    target: int = TARGET_CHARS,
    overlap: int = OVERLAP_CHARS,
    max_chars: int = MAX_CHARS,
    max_code: int = MAX_CODE_CHARS,
) -> list[Chunk]:
    """Split a note body into heading-aware, size-bounded, overlapping chunks."""
    chunks: list[Chunk] = []
    for section in _merge_tiny(_sections(body), max_chars):
        if section.size <= max_chars:
            chunks.append(Chunk(len(chunks), section.heading_path, "\n\n".join(section.blocks)))
            continue
        blocks: list[str] = []
        for block in section.blocks:
            blocks.extend(_split_long_block(block, target, max_code if _FENCE.match(block) else max_chars))
        current: list[str] = []
        size = 0
        for block in blocks:
            # A lone heading or overlap tail is too little to stand alone: keep filling.
            if current and size >= MIN_CHARS and size + len(block) + 2 > target:
                text = "\n\n".join(current)
                chunks.append(Chunk(len(chunks), section.heading_path, text))
                # No overlap into a code block, nor a fragment of a whole code block carried out.
                tail = "" if _FENCE.match(block) or _closed_code(current[-1]) else _overlap_tail(text, overlap)
                current, size = ([tail] if tail else []), len(tail)
            current.append(block)
            size += len(block) + 2
        if current:
            chunks.append(Chunk(len(chunks), section.heading_path, "\n\n".join(current)))
    return chunks


# ----- strategies (BRAIN_CHUNKING: their names in config.py) ---------------------------------

WINDOW_CHARS = 1200
WINDOW_OVERLAP = 200
# "short": heading-aware, cut to what a 256-token model (all-MiniLM-L6-v2) reads whole: a
# section up to MAX_CHARS (1600) stays one chunk, but such a model sees only its first ~1000
# characters, so a long section's tail was invisible to the dense lane.
SHORT_TARGET, SHORT_OVERLAP, SHORT_MAX = 700, 110, 1000


def chunk_windows(body: str, size: int = WINDOW_CHARS, overlap: int = WINDOW_OVERLAP) -> list[Chunk]:
    """Plain overlapping character windows, blind to headings (each cut moved back to a space)."""
    text = body.strip()
    if not text:
        return []
    chunks: list[Chunk] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = max(text.rfind(" ", start + size // 2, end), text.rfind("\n", start + size // 2, end))
            end = cut if cut > start else end
        chunks.append(Chunk(len(chunks), (), text[start:end].strip()))
        if end >= len(text):
            break
        next_start = max(end - overlap, start + 1)
        space = text.find(" ", next_start, end)
        start = space + 1 if 0 <= space < end - overlap // 2 else next_start
    return [c for c in chunks if c.text]


EXCALIDRAW_KEY = "excalidraw-plugin"  # the property the Excalidraw plugin marks its drawings with


def is_drawing(path: str, frontmatter: dict[str, object]) -> bool:
    """Whether a note is an Excalidraw drawing (``Sketch.excalidraw.md``, ``excalidraw-plugin: parsed``)."""
    return EXCALIDRAW_KEY in frontmatter or path.lower().endswith(".excalidraw.md")


def without_drawing(body: str) -> str:
    """An Excalidraw note's body less its drawing: the ``## Drawing`` heading and the fenced
    ``compressed-json`` (or ``json``) block after it, the scene the plugin draws, tens or
    hundreds of KB of base64 or coordinates that are no one's words; and the banner the plugin
    puts atop each ("Switch to EXCALIDRAW VIEW ..."). What stays is what the plugin writes for
    Obsidian to read: the drawing's text (``## Text Elements``), its links and embedded files."""
    lines = body.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("==⚠") and "EXCALIDRAW VIEW" in lines[i]:  # the plugin's banner, in every drawing
            i += 1
            continue
        heading = heading_of(lines[i])
        if heading is not None and heading[1] == "Drawing":
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            match = _FENCE.match(lines[j]) if j < len(lines) else None
            if match and fence_language(lines[j]) in ("compressed-json", "json"):
                fence = match.group(1)
                k = j + 1
                while k < len(lines) and not _closes(lines[k], fence):
                    k += 1
                i = k + 1  # past the closing fence (an unclosed one runs to the end, as a fence does)
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a fence opened with ``fence``: as many of its character or more, alone."""
    match = _FENCE.match(line)
    return match is not None and match.group(1).startswith(fence) and line.strip() == match.group(1)


def chunk_note(body: str, strategy: str = DEFAULT_CHUNKING) -> list[Chunk]:
    """Chunks by strategy (without "+path"): ``heading`` (heading-aware, the default), ``short``
    (heading-aware, at most SHORT_MAX characters), ``note`` (a note that fits in MAX_CHARS is
    one chunk, headings and all; longer notes heading-aware) or ``windows`` (plain overlapping
    windows, the pilot's recipe)."""
    if strategy == "windows":
        return chunk_windows(body)
    if strategy == "short":
        return chunk_body(body, SHORT_TARGET, SHORT_OVERLAP, SHORT_MAX)
    if strategy == "note" and len(body.strip()) <= MAX_CHARS:
        text = body.strip()
        return [Chunk(0, (), text)] if text else []
    return chunk_body(body)
