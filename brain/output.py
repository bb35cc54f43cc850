"""Recall results for people (a ranked list), agents (JSON) and prompts (a context bundle).

What people and prompts are shown passes through ``terminal_safe``: a note's control characters
would act on the terminal, and are shown as their escapes (JSON escapes them too: ``emit_json``). What a
model reads of a note (the snippet, ``--context``'s passages, a title and heading) passes through
``for_model`` first: text the user cannot see in Obsidian does not reach it unseen."""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING

from .moments import iso_recorded, iso_time, local_time
from .recall.types import Candidate, Mode, RecallResult
from .text import for_model, in_column, literal, terminal_safe, word_chars, word_pattern, yo_as_ye

if TYPE_CHECKING:
    from .telemetry import ABRow

SNIPPET_CHARS = 220
# A query word the snippet centres on, with its combining marks ("मेरा", not "म" and "र": too short).
_WORD = re.compile(f"[{word_chars()}]{{3,}}")


def snippet(candidate: Candidate, query: str, width: int = SNIPPET_CHARS) -> str:
    """A short window of the best chunk, centred on the first query word it contains, with no
    hidden text (``for_model``): an agent reads it in ``--json`` and the MCP search."""
    text = re.sub(r"^\s{0,3}#{1,6}\s.*$", "", for_model(candidate.text), flags=re.MULTILINE)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= width:
        return text
    found = _first_word_start(text, _centred_words(query))
    start = 0 if found is None else max(0, found - width // 3)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    piece = text[start : start + width]
    if start + width < len(text):
        piece = piece.rsplit(" ", 1)[0] + " …"
    return ("… " if start else "") + piece


# Letters re.IGNORECASE takes for one another where casefold keeps them apart (every code point
# checked against re's own tables): the dotless and dotted i, two Greek letters, a ligature.
_FOLD_APART = {"ı": "i", "İ": "i", "\u1fd3": "\u0390", "\u1fe3": "\u03b0", "\ufb05": "\ufb06"}


@functools.cache
def _fold_letter(ch: str) -> str:
    """``ch`` as one character that another equals exactly when re.IGNORECASE matches them
    ("ß" stays one: the text's positions are the folded text's)."""
    folded = _FOLD_APART.get(ch) or ch.casefold()
    if len(folded) != 1:
        lower = ch.lower()
        folded = lower if len(lower) == 1 else ch
    return folded


def _fold(text: str) -> str:
    return "".join(map(_fold_letter, text))


def _first_word_start(text: str, words: list[str]) -> int | None:
    """Where in ``text`` the first of ``words`` (in their order) that begins a word of it first
    does, ignoring case: "the" inside "other" is no query word. One pass over the text's words,
    each looked up by its starts of the query words' lengths: a search of the text for each word
    took 4 s of CPU for a pasted query of 1,400 words over 12 passages of 200 links."""
    order: dict[str, int] = {}
    for rank, word in enumerate(words):
        order.setdefault(_fold(word), rank)
    lengths = sorted({len(folded) for folded in order})
    best, at = len(words), None
    for found in word_pattern().finditer(text):
        token = _fold(found.group())
        for length in lengths:
            if length > len(token):
                break
            rank = order.get(token[:length], best)
            if rank < best:
                best, at = rank, found.start()
        if best == 0:
            break
    return at


def _centred_words(query: str) -> list[str]:
    """The query's words a snippet may centre on, in order: its small words ("what", "the")
    only where it has no other."""
    from .recall.names import STOP  # here: brain status imports this module, and shows no snippet
    from .recall.stop_words import RUSSIAN

    every = _WORD.findall(query)
    content = [w for w in every if w.casefold() not in STOP and yo_as_ye(w.casefold()) not in RUSSIAN]
    return content or every


def result_json(result: RecallResult) -> dict:
    """The --json shape, documented in the README."""
    return {
        "query": result.query,
        "mode": result.mode,
        "gate": result.gate.as_dict(),
        "results": [
            {
                "rank": rank,
                "path": c.path,
                "title": for_model(c.title),  # the path stays exact: it opens the file
                "heading": for_model(c.heading),
                "score": round(c.score, 4),
                "dense_score": round(c.dense_score, 4),
                "rerank_score": None if c.rerank_score is None else round(c.rerank_score, 4),
                "snippet": snippet(c, result.query),
                "via": c.via.as_dict() if c.via else None,
                # The lanes that found it, in the order they ran (README, "Output"): what the
                # fused score alone does not say, and an agent cannot ask --explain for.
                "lanes": list(dict.fromkeys(c.sources)),
                "date": c.date,
                "recorded_from": iso_recorded(c.recorded_from),
                "recorded_to": iso_recorded(c.recorded_to),
                # where the note is now (`--as-of` names it by its path then): null, no longer in
                # the index; and whether a different note is at `path` now
                "now": None if c.gone else (c.moved_to or c.path),
                "path_reused": c.path_reused,
            }
            for rank, c in enumerate(result.results, 1)
        ],
        "as_of": iso_time(result.as_of),
        "valid_at": result.valid_at,
        "graph": {"used": result.graph_used, "candidates_added": result.candidates_added},
        "reranked": result.reranked,
        "fallbacks": result.fallbacks,
        "stale_notes": result.stale,
        "timings_ms": result.timings_ms,
        "warnings": result.warnings,
    }


def result_text(result: RecallResult, *, width: int | None = None) -> str:
    """A ranked list: rank, score, title, path › heading, snippet, and `via` for graph hits;
    no terminal control from the notes."""
    import shutil  # here: `brain status` shows no result (shutil imports bz2 and lzma)

    width = width or min(shutil.get_terminal_size((100, 20)).columns, 120)
    lines = _moment_header(result, width)
    dated = bool(lines)
    # The rank and score as wide as the widest: padded to 2 and 6, rank 100 and a reranker's
    # score of -10 moved their row's title a cell on.
    ranks = max(2, len(str(len(result.results))))
    scores = max([6, *(len(f"{c.score:.3f}") for c in result.results)])
    indent = " " * (ranks + scores + 3)
    # Each of the notes' fields cleaned on its own (an escape's start ends with its field), on
    # one line: a line break in a title ended its line, the rest under the rank.
    for rank, c in enumerate(result.results, 1):
        via = f"  via [[{in_column(c.via.from_title)}]]" if c.via else ""
        lines.append(f"{rank:>{ranks}}. {c.score:{scores}.3f}  {in_column(c.title)}{via}")
        location = literal(c.path) + (f" › {in_column(c.heading)}" if c.heading else "")
        lines.append(f"{indent}{location}")
        if dated:
            lines.append(f"{indent}{_dates(c)}")
        for line in _wrap(terminal_safe(snippet(c, result.query)), width - len(indent)):
            lines.append(f"{indent}{line}")
    if not result.results:
        lines.append("no notes found")
    return terminal_safe("\n".join(lines))


def _moment_header(result: RecallResult, width: int) -> list[str]:
    """The lines above an answer about the past (``--as-of``, ``--valid-at``), a blank one last,
    in ``width`` cells; none for the present."""
    lines = []
    if result.as_of is not None:
        lines += hanging(f"as of {local_time(result.as_of)}: the vault as brain knew it then", width)
    if result.valid_at is not None:
        lines += hanging(
            f"valid at {result.valid_at}: notes whose frontmatter says they held then (or says nothing)", width
        )
    return [*lines, ""] if lines else []


def _dates(c: Candidate) -> str:
    """The note's own date and when brain held this version: ``dated 2025-03-11 · version
    2026-01-02 10:00 → 2026-02-10 09:12`` (→ now while current)."""
    until = local_time(c.recorded_to) if c.recorded_to is not None else "now"
    held = f"version {local_time(c.recorded_from)} → {until}" if c.recorded_from is not None else ""
    # by its path then, a note gone since read as the note at that path today
    where = f"{c.gone} since" if c.gone else f"now at {literal(c.moved_to)}" if c.moved_to else ""
    if where and c.path_reused:
        where += f"; a different note is at {literal(c.path)} now"
    return " · ".join(part for part in (f"dated {c.date[:10]}" if c.date else "", held, where) if part)


def side_by_side(a: RecallResult, b: RecallResult, *, width: int | None = None) -> str:
    """Two result lists in columns; notes only B has are marked + (and * when via the graph:
    ``telemetry.via_graph``, what the A/B log counts)."""
    from .telemetry import via_graph

    width = width or ab_width()
    # Two columns in the terminal's width: at least 30 cells each made a row 66 wide, and a
    # terminal narrower than that wrapped every row under the rank. Below MIN_COLUMN, too narrow.
    column = max(MIN_COLUMN, (width - 8) // 2)
    in_a = {c.path for c in a.results}
    linked = {c.path for c in via_graph(a, b, len(b.results))}
    graph_lanes = Mode.parse(b.mode).graph_lanes - Mode.parse(a.mode).graph_lanes
    rows = _moment_header(a, width)  # both runs answer for the same moment
    count = max(len(a.results), len(b.results))
    ranks = max(2, len(str(count)))  # padded to 2, rank 100 moved its row's columns a cell on
    rows += [
        f"{'':{ranks + 2}}{pad(clip(a.mode, column), column)}  {clip(b.mode, column)}",
        f"{'':{ranks + 2}}{pad('-' * (column - 2), column)}  {'-' * (column - 2)}",
    ]
    for i in range(count):
        left = clip(in_column(a.results[i].title), column - 2) if i < len(a.results) else ""
        right = ""
        if i < len(b.results):
            c = b.results[i]
            mark = ("*" if c.path in linked else "+") if c.path not in in_a else " "
            via = f"  via [[{in_column(c.via.from_title)}]]" if c.via else ""
            if c.path in linked and not via:  # found by the lanes that read the links: which
                via = f"  ({_lanes_shown(c.sources, graph_lanes)})"
            right = f"{mark} " + clip(in_column(c.title) + via, column - 2)
        rows.append(f"{i + 1:>{ranks}}. {pad(left, column)}  {right}")
    rows.append("")
    legend = ("+ new in the top k", "* new, brought by the links (the hop, PageRank, anchor or bridge lanes)")
    if display_width("   ".join(legend)) <= width:
        rows.append("   ".join(legend))
    else:
        rows += [line for part in legend for line in hanging(part, width)]
    return terminal_safe("\n".join(rows))


MIN_COLUMN = 10  # cells of a column of --ab: a row fits a terminal 28 cells wide


def ab_width() -> int:
    """The cells ``brain ask --ab``'s lines take: the terminal's (a pipe's: 120), at most 160."""
    import shutil

    return min(shutil.get_terminal_size((120, 20)).columns, 160)


def ab_summary(row: ABRow, k: int, *, width: int | None = None) -> str:
    """The line under ``--ab``'s columns: the gate's decision and what B's graph added, broken to
    the terminal's width (the gate's reason names a note: no terminal control from it)."""
    gate = "entity" if row.gate_entity else "not entity"
    text = (
        f"gate: {gate} ({row.gate_reason}); {row.mode_b} added {row.candidates_added} candidates, "
        f"{len(row.new_in_top_k)} new in the top {k}, {len(row.via_graph)} via links"
    )
    return "\n".join(hanging(terminal_safe(text), width or ab_width()))


def hanging(text: str, width: int, indent: int = 2) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken at spaces, the lines after the first
    indented ``indent`` cells: a line wider than the terminal was wrapped by it, mid-word."""
    if display_width(text) <= width:
        return [text]
    first, *rest = _wrap(text, width - indent)
    return [first, *(" " * indent + line for line in rest)]


def _lanes_shown(sources: list[str], lanes: frozenset[str]) -> str:
    """The lanes of ``lanes`` that found a note, in the order they did, the two anchor lanes as
    one (their names took half a column)."""
    shown = ["anchors" if lane.startswith("anchor_") else lane for lane in sources if lane in lanes]
    return ", ".join(dict.fromkeys(shown))


def flat(text: object, width: int) -> str:
    """``text`` (a prompt, an ask, a summary: anything a row may hold, hand-edited too) flat on
    one line, its runs of white space one space, in at most ``width`` cells, with no terminal
    control: a prompt may hold pasted coloured output. Cut by code points, a CJK prompt took
    twice the cells (the terminal wrapped it under the field names)."""
    return clip(" ".join(terminal_safe("" if text is None else str(text)).split()), width)


def context_bundle(result: RecallResult, budget: int) -> str:
    """The best passages under their note path and heading, cut to ``budget`` characters."""
    return context_parts(result, budget)[0]


def context_parts(result: RecallResult, budget: int) -> tuple[str, int]:
    """``context_bundle``, and how many notes it left out: a header no bundle of ``budget`` holds
    whole (a heading of 2,000 characters) has its heading cut, and a note whose path alone is that
    long is left out, where the bundle ended there, empty if it was the first note."""
    parts: list[str] = []
    used = left_out = 0
    for c in result.results:
        # On the header's line: a line break in a path or heading ended it, the rest read as text.
        path = f"### {literal(for_model(c.path))}"
        heading = f" › {in_column(for_model(c.heading))}" if c.heading else ""
        header = path + heading
        body = terminal_safe(for_model(c.text)).strip()
        room = budget - used
        if budget <= len(header) + 40:
            if room <= len(path) + 40:
                left_out += 1
                continue
            keep = min(room - 42, budget // 2) - len(path) - 1  # with "…", half the budget at most
            header = path + (heading[:keep].rstrip() + "…" if keep > 3 else "")
        block = f"{header}\n{body}\n"
        if room <= len(header) + 40:
            break
        if len(block) > room:
            block = f"{header}\n{body[: room - len(header) - 4].rstrip()} …\n"
        parts.append(block)
        used += len(block) + 1
    return "\n".join(parts), left_out


def cells(ch: str) -> int:
    """Terminal cells one character takes: a wide or full-width one (CJK, most emoji) two, a mark
    that combines with the one before it, or a format character (a zero-width space), none."""
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes (``str.ljust`` counts code points: a CJK title pushed the next
    column out, an accent written as a combining mark pulled it in)."""
    return sum(cells(ch) for ch in text)


def pad(text: str, width: int) -> str:
    return text + " " * max(width - display_width(text), 0)


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells, cut with … (a combining mark stays with its letter)."""
    if display_width(text) <= width:
        return text
    return _fit(text, width - 1) + "…"


def _fit(text: str, width: int) -> str:
    """The longest start of ``text`` that takes at most ``width`` cells, with the marks that
    combine with its last letter."""
    used = 0
    for at, ch in enumerate(text):
        used += cells(ch)
        if used > width:
            return text[:at]
    return text


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken at spaces (a word longer than a line,
    as CJK text without spaces is, cut by its cells). textwrap counts code points: a line of
    CJK took twice the cells counted, and the terminal wrapped it under the rank, out of its
    column."""
    width = max(20, width)
    lines: list[str] = []
    line, used = "", 0
    for word in text.split():
        size = display_width(word)
        if line and used + 1 + size <= width:
            line, used = f"{line} {word}", used + 1 + size
            continue
        if line:
            lines.append(line)
        while size > width:
            head = _fit(word, width) or word[0]  # at least one character a line, however wide
            lines.append(head)
            word = word[len(head) :]
            size = display_width(word)
        line, used = word, size
    if line:
        lines.append(line)
    return lines or [""]
