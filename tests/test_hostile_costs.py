"""Inputs that made brain's work grow faster than their size (a hostile note, title, query or
prompt, found by reading the patterns and loops and timing them): each now costs its size.

Where a count shows it, the test counts; where only time does, the bound is many times what the
work takes now and a fraction of what it took (the figures are in each test).
"""

from __future__ import annotations

import random
import re
import time

import pytest

from brain.chunking import chunk_note, heading_of
from brain.ledger.transcript import prompt_text
from brain.links import Link, Resolver, mask_code
from brain.reading import headings
from brain.recall import fusion
from brain.recall.gate import normalise_name

_OLD_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# Closing #s close a heading only after a space or a tab (CommonMark): the old pattern took the
# "#" of "## C#" too.
_CLOSING = re.compile(r"(?:^|[ \t])#+$")


def _seconds(work) -> float:
    """The CPU seconds ``work`` takes in this process (one thread, no child): the wall clock's
    seconds on a loaded machine are the other processes' too (at load 18, 100,000 headings read
    4.8 s on it, over the bound of 3, where the work is a small part of that)."""
    started = time.process_time()
    work()
    return time.process_time() - started


def test_a_heading_is_read_as_the_old_pattern_read_it():
    pieces = ["#", "##", "###", "#######", " ", "  ", "\t", "a", "b c", "#x", " #", "\r", "é", "C#"]
    rng = random.Random(48)
    for _ in range(20_000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        old = _OLD_HEADING.match(line)
        if old is None:
            assert heading_of(line) is None, repr(line)
            continue
        text = line[old.start(2) :].strip()  # the old pattern's text, its closing #s not yet taken
        assert heading_of(line) == (len(old.group(1)), _CLOSING.sub("", text).rstrip()), repr(line)


_OLD_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def test_inline_code_is_masked_as_the_old_pattern_masked_it():
    pieces = ["`", "``", "```", "````", "a", " ", "x y", "[[n]]", "#t", "é"]
    rng = random.Random(61)
    for _ in range(20_000):
        line = "a" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))  # "a": no fence
        assert mask_code(line) == _OLD_INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line), repr(line)


def test_a_line_of_backtick_runs_of_growing_length_costs_its_length():
    # Runs of 1, 2, ..., 2,000 backticks, each then a letter (2 MB): 13 s to mask (each shorter
    # opening of each run scanned the rest of the line); now some milliseconds.
    line = "".join("`" * n + "x" for n in range(1, 2_000))
    assert _seconds(lambda: mask_code(line)) < 2


def test_a_heading_of_spaces_or_hashes_costs_its_length():
    # "# a" + 1,600 spaces + "b" took 5 s to read (cubic); 40,000 hashes 12 s (quadratic).
    for line in ("# a" + " " * 20_000 + "b", "# a" + "#" * 40_000 + "b"):
        assert _seconds(lambda line=line: chunk_note(line + "\n\nbody\n")) < 2
    assert heading_of("## Setup ##") == (2, "Setup")


def test_a_note_of_tiny_sections_is_chunked_whole():
    # Each tiny section merged summed the sizes of all the blocks merged before it (bounded by a
    # chunk's size: a constant factor, 3×, not a square, so no CPU-time bound here; idle, 1 MB of
    # one-line headings 4.8-5.0 s before, 1.4-1.5 s now, and under CI's load 2.4 s).
    chunks = chunk_note("# h\n" * 250_000)
    assert len(chunks) == 782 and all(len(c.text) <= 1_600 for c in chunks)


def test_a_long_heading_is_carried_by_its_chunks_cut_short():
    # Every chunk of a section carries its heading path: a 200 KB heading over 200 KB of text
    # was 48 MB of index. The path keeps 1,000 characters of each heading.
    chunks = chunk_note("# " + "long " * 40_000 + "\n\n" + "Some words here. " * 2_000)
    assert len(chunks) > 10 and all(len(c.heading) <= 1_000 for c in chunks)


def test_section_ends_are_found_in_one_pass():
    # Each heading scanned every later one: 20,000 headings took 9 s (`brain note`, MCP get_note).
    rng = random.Random(7)
    body = "\n".join(f"{'#' * rng.randint(1, 4)} h{i}\nline" for i in range(300))
    found = headings(body)
    lines = body.split("\n")
    for i, section in enumerate(found):  # what the scan found: the next heading at its level or above
        later = [s["line"] for s in found[i + 1 :] if s["level"] <= section["level"]]
        assert section["end"] == (later[0] if later else len(lines))
    assert _seconds(lambda: headings("# h\n" * 100_000)) < 3


def test_a_run_of_dots_in_a_name_or_query_costs_its_length():
    # "[?!.]+$" retried the run from every dot: 40,000 dots and an "x" took 4.5 s a query.
    assert normalise_name("What is it?!..") == "what is it"
    assert _seconds(lambda: normalise_name("." * 200_000 + "x")) < 1


def _user(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}}


def test_an_unclosed_command_tag_in_a_prompt_costs_its_length():
    # Past the Stop hook's deadline: 8,000 unclosed tags took 8.4 s, 2,000 spaces after one 4 s.
    command = "<command-name>/model</command-name>\n<command-args>opus</command-args>"
    assert prompt_text(_user(command)) == "/model opus"
    assert prompt_text(_user("<command-name> review </command-name>")) == "/review"
    for text in ("x <command-name>" * 50_000, "<command-name>" + " " * 50_000 + "x"):
        assert _seconds(lambda text=text: prompt_text(_user(text))) < 1


def _old_successors_first(order: list[int], successor: dict[int, int]) -> list[int]:
    """The order as the former passes left it (each pass moved each successor above its note)."""
    result = list(order)
    for _ in range(len(successor) + 1):
        moved = False
        for old, new in successor.items():
            if old not in result:
                continue
            i = result.index(old)
            if new in result and result.index(new) < i:
                continue
            if new in result:
                result.remove(new)
            result.insert(i, new)
            moved = True
        if not moved:
            break
    return result


def _has_cycle(successor: dict[int, int]) -> bool:
    for start in successor:
        seen, note = set(), start
        while note in successor:
            if note in seen:
                return True
            seen.add(note)
            note = successor[note]
    return False


def test_successors_first_in_one_pass_as_the_passes_ordered_them():
    rng = random.Random(16)
    tried = 0
    while tried < 3_000:
        order = rng.sample(range(12), rng.randint(1, 8))
        successor = dict(tuple(rng.sample(range(12), 2)) for _ in range(rng.randint(0, 5)))
        if _has_cycle(successor):  # it ends, each note once
            out = fusion.order_successors_first(order, successor)
            assert len(out) == len(set(out)) and set(order) <= set(out)
            continue
        tried += 1
        assert fusion.order_successors_first(order, successor) == _old_successors_first(order, successor)
    # A chain of a thousand notes, each replaced by the one before it, took 17 s a query.
    chain = {i + 1: i for i in range(1_000)}
    assert _seconds(lambda: fusion.order_successors_first(list(range(1_001)), chain)) < 1
    assert fusion.order_successors_first([5, 3], chain)[:6] == [0, 1, 2, 3, 4, 5]


def test_the_first_of_many_notes_of_one_name_in_steps_of_the_source_depth():
    # Every note of a name was weighed for every link to it: a thousand notes named alike, each
    # linked from its own folder, took 3.8 s to resolve (4,000: 14 s). Found in steps of the
    # source's depth now, the same note as weighing them all.
    from brain.links import _Spread, first_match

    rng = random.Random(48)
    folders = ["", "a", "b", "a/x", "a/y", "b/x", "a/x/z", "c/d/e", "bb", "a/longer", "ab/x"]
    for _ in range(2_000):
        names = rng.sample(folders, rng.randint(2, len(folders)))
        candidates = sorted(f"{f}/same.md".lstrip("/") for f in names)
        source = f"{rng.choice(folders + ['q', 'a/q', 'a/x/q/r'])}/src.md".lstrip("/")
        assert _Spread(candidates).first(source) == first_match(candidates, source), (candidates, source)
    paths = [f"f{i}/g/same.md" for i in range(4_000)] + ["hub/hub.md"]
    resolver = Resolver(paths)
    link = Link(target="same", kind="wikilink", anchor=None, display=None, line=1)

    def resolve_all() -> None:
        for i in range(4_000):
            assert resolver.resolve(link, f"f{i}/g/same.md") == f"f{i}/g/same.md"
        for _ in range(20_000):
            assert resolver.resolve(link, "hub/hub.md") == "f0/g/same.md"

    assert _seconds(resolve_all) < 3


# The turn ledger's masker, over a pasted log or .env dump of many secrets: for each one, the text
# was searched whole (for an escaped line break, and back to its start for a code fence), n secrets
# cost n². CPU seconds before (5878e56, at load 10 to 15) and now, for each text below: prose
# 27.0 s, 0.5 s; .env 26.8 s, 0.6 s; a shell's block 24.5 s, 0.3 s; YAML block scalars 29.5 s,
# 0.3 s; plain scalars going on below 34.4 s, 0.5 s; quoted ones 18.8 s, 0.3 s; JSON 35.1 s,
# 0.2 s; one line of "password: |" 45.6 s, 0.5 s. The Stop hook masks a turn within 2 s.
_MANY_SECRETS = {
    "prose": ("the wifi password: a b c d\n", 20_000, "the wifi password: ***\n"),
    "env": ("DB_PASSWORD=x y\n", 30_000, "DB_PASSWORD=***\n"),
    "shell": ("```bash\nDB_PASSWORD=x make test\n```\n", 20_000, "```bash\nDB_PASSWORD=*** make test\n```\n"),
    "block": ("password: |\n  s3cr3t\n", 40_000, "password: |\n  ***\n"),
    "plain": ("password: correct\n  horse battery\n", 20_000, "password: ***\n  ***\n"),
    "quoted": ("password: 'correct\n  horse'\n", 20_000, "password: '***\n  ***'\n"),
    "json": ('{"password": "hunter22"}\n', 40_000, '{"password": "***"}\n'),
    "one line": ("password: | ", 40_000, "password: *** "),
    # A Markdown table's rows (a rule new with them): each row read once, its line found by looking
    # back to the break before it, not over a fixed window.
    "table": (
        "| key | value |\n|---|---|\n| password | hunter22x |\n",
        20_000,
        "| key | value |\n|---|---|\n| password | *** |\n",
    ),
}


@pytest.mark.parametrize("kind", list(_MANY_SECRETS))
def test_masking_many_secrets_costs_their_length(kind):
    from brain.ledger.redact import redact

    unit, count, masked = _MANY_SECRETS[kind]
    assert redact(unit * 3) == masked * 3
    text = unit * count
    seconds = _seconds(lambda: redact(text))
    assert seconds < 2, f"{len(text):,} characters masked in {seconds:.1f} s"


def test_the_fence_before_a_line_is_the_one_searched_back_for():
    from brain.ledger.redact import _Fences

    rng = random.Random(13)
    for _ in range(2_000):
        text = "".join(rng.choice(["`", "``", "```", "````", "a", "\n"]) for _ in range(rng.randint(0, 12)))
        fences = _Fences(text)
        for end in range(len(text) + 2):
            assert fences.last_before(end) == text.rfind("```", 0, end), (text, end)


def test_a_line_s_lead_is_read_back_as_the_patterns_searched_for_it():
    # Each secret's name asked _LINE_LEAD, _LIST_ITEM or _ESCAPED_LEAD to search the 100 characters
    # before it (a hundred tries of the pattern each), and _key_column one the 200 before: the most
    # of a .env dump's or a transcript's masking. Reading the lead backwards gives the same answers.
    from brain.ledger.redact import (
        _ESCAPED_LEAD,
        _LINE_LEAD,
        _LIST_ITEM,
        _depth_of_run,
        _key_column,
        _line_depth,
        _runs_to_line_end,
        _starts_line,
    )

    def old_depth(text: str, at: int) -> int:
        lead = _ESCAPED_LEAD.search(text, max(0, at - 100), at)
        if lead is None:
            return 0
        if lead.group("run") is not None:
            return _depth_of_run(len(lead.group("run")))
        return _depth_of_run(len(lead.group("quote")) + 1)

    def old_column(text: str, at: int) -> int:
        lead = re.search(r"[ \t]*(?:-[ \t]+)?\Z", text[max(0, at - 200) : at])
        return len(lead.group().expandtabs()) if lead else 0

    pieces = [" ", "\t", "-", "export", "\\", "\\\\", "n", '"', "\r", "\n", "x", "e"]
    rng = random.Random(29)
    for _ in range(1_200):
        pad = rng.choice(
            ["", "x" * rng.randint(90, 105), " " * rng.randint(90, 105), "\\" * rng.randint(95, 102)]
            + [" -" + " " * rng.randint(194, 202), "\n" + "\t " * rng.randint(97, 101)]
        )
        text = pad + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        for at in range(max(0, len(pad) - 3), len(text) + 1):
            low = max(0, at - 100)
            assert _starts_line(text, at) == (_LINE_LEAD.search(text, low, at) is not None), (text, at)
            assert _runs_to_line_end("=", text, at) == (_LIST_ITEM.search(text, low, at) is not None), (text, at)
            assert _line_depth(text, at) == old_depth(text, at), (text, at)
            assert _key_column(text, at, depth=1) == old_column(text, at), (text, at)


def test_a_stated_secret_is_found_near_its_trigger_as_the_search_found_it():
    # Each trigger of a stated secret had the pattern search the 1,000 characters after it, tried at
    # each, for a match starting within 12 of it: 62,500 Russian "пароль:" lines (1 MB) took 2.3 s.
    # Trying only the positions that may start one finds the same match.
    from brain.ledger.redact import _STATED_AT, _stated_at

    def old(text: str, start: int):
        found = _STATED_AT.search(text, start, start + 1000)
        return None if found is None or found.start() > start + 12 else found.span()

    pieces = ["password is ", "пароль — ", "PIN: ", "pin is ", "secret is ", "api token is ", "x", " ", "\n"]
    pieces += ["hunter22", "'a b c d'", "The cat sat down.", "pass phrase: ", "Пароль от почты – ", "a" * 990]
    rng = random.Random(41)
    for _ in range(1_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        for start in range(0, len(text) + 1, 1 + len(text) // 60):
            found = _stated_at(text, start)
            assert (found.span() if found else None) == old(text, start), (text, start)
