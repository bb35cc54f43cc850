"""`brain history` compares each version with the one before through brain/recall/line_diff.py,
not difflib.SequenceMatcher (quadratic in a log's repeated blank lines): the same opcodes, so
the same `+N −M lines; sections: …` to the byte, on random edits of every kind. Fake embedder."""

from __future__ import annotations

import difflib
import json
import random
import tracemalloc
from types import SimpleNamespace

from click.testing import CliRunner
from conftest import write

from brain.cli import cli
from brain.index.indexer import index_vault
from brain.index.store import IndexStore
from brain.index.version_text import SEGMENTS_FROM
from brain.links import heading_of
from brain.notes import decode, split_frontmatter
from brain.recall import timeline
from brain.recall.line_diff import _longest, changed_ranges


def difflib_ranges(old, new) -> list[tuple[int, int, int, int]]:
    """What `brain history` took from difflib before: the opcodes but 'equal'."""
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def _edited(rng: random.Random, lines: list[str], pool: list[str]) -> list[str]:
    """``lines`` after a few edits of the kinds a note sees."""
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["append", "insert", "rewrite", "delete", "move", "duplicate", "empty", "same"])
        at = rng.randint(0, len(out))
        if kind == "append":
            out += [rng.choice(pool) for _ in range(rng.randint(1, 6))]
        elif kind == "insert":
            out[at:at] = [rng.choice(pool) for _ in range(rng.randint(1, 4))]
        elif kind == "rewrite" and out:
            out[min(at, len(out) - 1)] = rng.choice(pool)
        elif kind == "delete":
            del out[at : at + rng.randint(1, 5)]
        elif kind == "move" and out:  # a block cut and put back elsewhere (a reorder)
            block = out[at : at + rng.randint(1, 6)]
            del out[at : at + len(block)]
            where = rng.randint(0, len(out))
            out[where:where] = block
        elif kind == "duplicate" and out:
            block = out[at : at + rng.randint(1, 4)]
            out[at:at] = block
        elif kind == "empty" and rng.random() < 0.2:
            out = []
    return out


def test_changed_ranges_are_difflib_opcodes():
    """Random pairs of line lists, from a few kinds of lines (many ties, as a log's blank lines
    and repeated bullets make) to many, edited as notes are: the same ranges, in the same order."""
    rng = random.Random(7)
    for trial in range(4000):
        pool = [f"line {n}" for n in range(rng.choice([1, 2, 3, 5, 20, 200]))] + [""]
        old = [rng.choice(pool) for _ in range(rng.choice([0, 1, 3, 10, 40, 120]))]
        new = _edited(rng, old, pool)
        if trial % 5 == 0:
            old, new = new, old
        assert changed_ranges(old, new) == difflib_ranges(old, new), (old, new)


def test_changed_ranges_of_edges():
    assert changed_ranges([], []) == []
    assert changed_ranges([], ["a"]) == [(0, 0, 0, 1)]
    assert changed_ranges(["a", "b"], []) == [(0, 2, 0, 0)]
    assert changed_ranges(["a"] * 5, ["a"] * 5) == []
    # The longest run is found wherever it is, the earliest of equal ones, as difflib finds it.
    for old, new in (
        (["a", "b", "a"], ["a", "b", "c", "a", "b", "a"]),
        (["x", "a", "a", "y"], ["a", "a", "x", "a", "a"]),
        (["b", "a", "a"], ["b", "a", "c", "b", "a", "a"]),
        (list("abcabc"), list("cbacba")),
    ):
        assert changed_ranges(old, new) == difflib_ranges(old, new)


def test_changed_ranges_of_long_texts_are_difflib_opcodes():
    """Texts of thousands of lines, few distinct (a log's) to all distinct, edited many times
    over: the automaton's many states, its clones and their transitions, as difflib says."""
    rng = random.Random(5)
    for distinct in (2, 3, 40, 5000):
        pool = [f"line {n}" for n in range(distinct)] + [""]
        old = [rng.choice(pool) for _ in range(rng.choice([2000, 3000]))]
        new = list(old)
        for _ in range(12):
            new = _edited(rng, new, pool)
        for pair in ((old, new), (new, old)):
            assert changed_ranges(*pair) == difflib_ranges(*pair)


def test_the_longest_run_search_holds_little_beside_the_lines():
    """The suffix automaton kept a dict for each of its states: 330 bytes a line of the new text
    when every line is distinct, 556 when two are (two states a line), 33 MB and 53 at 100,000
    lines; its states' first transitions are now in arrays (91 and 290 bytes a line)."""
    rng = random.Random(2)
    for distinct, per_line in ((None, 200), (2, 400)):
        draw = rng.sample(range(10**6), 20000) if distinct is None else [rng.randrange(distinct) for _ in range(20000)]
        new = [f"line {n}" for n in draw]
        old = ["not in new"] + new[::-1][:10000]
        tracemalloc.start()
        try:
            _longest(old, 0, len(old), new, 0, len(new))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < per_line * len(new), (distinct, peak / len(new))


def _old_summary(old, old_text, new, new_text) -> tuple[str, int, int]:
    """timeline._summary as it was (difflib on each text's lines, read from its decoded text)."""
    _, old_body, _ = split_frontmatter(old_text)
    _, new_body, _ = split_frontmatter(new_text)
    old_lines, new_lines = old_body.splitlines(), new_body.splitlines()
    added = removed = 0
    sections: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        removed += i2 - i1
        added += j2 - j1
        inside = [h[1] for line in new_lines[j1:j2] + old_lines[i1:i2] if (h := heading_of(line))]
        if not inside:
            above = _old_heading_above(new_lines, j1) if j2 > j1 else _old_heading_above(old_lines, i1)
            inside = [above] if above else []
        sections += [heading for heading in inside if heading not in sections]
    parts = [f"+{added} −{removed} lines"]
    if sections:
        parts.append(
            "sections: " + ", ".join(sections[:3]) + (f" and {len(sections) - 3} more" if len(sections) > 3 else "")
        )
    return "; ".join(parts), added, removed


def _old_heading_above(lines: list[str], index: int) -> str | None:
    """timeline._heading_above as it was: the first line at or above ``index`` read as a heading
    (no code block nor setext heading in these notes: ``links.outline`` reads them alike)."""
    for line in reversed(lines[: index + 1]):
        heading = heading_of(line)
        if heading:
            return heading[1]
    return None


def _note(rng: random.Random, lines: list[str]) -> bytes:
    """Lines as a note's bytes: with or without frontmatter, LF or CRLF (or a mix), a final
    newline or not."""
    head = ["---", f"date: 2026-01-{rng.randint(10, 28)}", "---"] if rng.random() < 0.3 else []
    end = rng.choice(["\n", "\r\n"])
    text = end.join(head + lines) + (end if rng.random() < 0.8 else "")
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n", 1)
    return text.encode()


def test_a_summary_is_what_difflib_made_of_it():
    """`+N −M lines; sections: …` of random versions (headings, blank lines, repeated bullets,
    CRLF, frontmatter, emptied notes): what difflib over the decoded lines said, to the byte."""
    rng = random.Random(11)
    pool = ["", "", "- [ ] call", "- [x] call", "Some words.", "More words here.", "> quoted"]
    pool += [f"## Day {n}" for n in range(8)] + [f"# Part {n}" for n in range(3)]
    row = SimpleNamespace(frontmatter="{}", title="Log")
    for _ in range(1500):
        lines = [rng.choice(pool) for _ in range(rng.randint(0, 60))]
        old_data = _note(rng, lines)
        new_data = _note(rng, _edited(rng, lines, pool))
        got = timeline._summary(row, timeline._lines(old_data), row, timeline._lines(new_data))
        want = _old_summary(row, decode(old_data)[0], row, decode(new_data)[0])
        assert got == want, (old_data, new_data)


def _history(root, *args) -> str:
    out = CliRunner().invoke(cli, ["history", "--vault", str(root), "Log", *args])
    assert out.exit_code == 0, out.output
    return out.output


def test_history_of_random_edits_is_what_difflib_and_whole_reads_gave(tmp_path, monkeypatch):
    """A log long enough to be kept in segments, edited at random 40 times (appends, lines
    rewritten, deleted, moved, repeated, CRLF, the note emptied): `brain history` and its --json
    are byte for byte what difflib over texts read one by one gave."""
    root = tmp_path / "v"
    write(root, "Other.md", "# Other\n\nElsewhere.\n")
    rng = random.Random(3)
    pool = ["", "", "- fired to cone 6", "See [[Other]].", "Glaze crawled at the rim."]
    pool += [f"## Firing {n}" for n in range(30)] + [" ".join(rng.choice("abcdefgh") * 9 for _ in range(30))]
    lines = ["# Log", ""] + [rng.choice(pool) for _ in range(300)]
    for step in range(40):
        lines = _edited(rng, lines, pool)
        if len(lines) < 200:  # emptied: it begins again, long
            lines += [rng.choice(pool) for _ in range(300)]
        (root / "Log.md").write_bytes(b"" if step == 20 else _note(rng, lines))
        index_vault(root, progress=False)
    runs = [(_history(root, "--last", "0"), json.loads(_history(root, "--json")))]
    monkeypatch.setattr(timeline, "changed_ranges", difflib_ranges)
    whole = IndexStore.version_bytes
    monkeypatch.setattr(IndexStore, "version_bytes", lambda self, version_id, cache=None: whole(self, version_id))
    runs.append((_history(root, "--last", "0"), json.loads(_history(root, "--json"))))
    assert runs[0] == runs[1]
    versions = runs[0][1]["versions"]
    assert len(versions) >= 35 and sum("lines" in v["changes"] for v in versions) >= 30
    assert sum(v["size"] > SEGMENTS_FROM for v in versions) >= 35  # (past texts kept in segments)
