"""How many of a vault's notes and chunks each rule of ``text.for_model`` touches (what a model is
handed of a note: the prompt hook's context, the MCP tools, `brain ask --context` and `--json`),
and how many hold the HTML comments Obsidian's reading view hides, which it leaves.

For each vault given, every note brain indexes (its walk: ``.obsidian``, ``.brainignore`` left
out) is parsed and chunked as the index does, and each chunk's text, title and heading passed
through ``for_model``. Printed per vault: runs of tag characters marked ``[hidden text removed]``
and subdivision flags kept; bidi controls written as their escape; other invisible characters
dropped and kept (per character); HTML comments ``<!-- -->`` (and Obsidian's ``%% %%``), how
many of them outside code, and up to ``--examples`` of what those hold; then what ``for_model``
costs a chunk (every chunk's text once, best of 3 passes).

    python bench/hidden_text.py VAULT [VAULT ...] [--examples 5]
"""

from __future__ import annotations

import argparse
import collections
import re
import time
import unicodedata
from pathlib import Path

from brain.chunking import chunk_note
from brain.links import mask_code, mask_comments
from brain.notes import parse_note
from brain.text import _BIDI_CONTROL, _FLAG_OR_TAGS, _INVISIBLE, for_model
from brain.vault import scan

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_OBSIDIAN_COMMENT = re.compile(r"%%.*?%%", re.DOTALL)


class Tally:
    def __init__(self) -> None:
        self.notes: collections.Counter[str] = collections.Counter()  # rule -> notes it touched
        self.chunks: collections.Counter[str] = collections.Counter()  # rule -> chunks it touched
        self.count: collections.Counter[str] = collections.Counter()  # rule -> times
        self.examples: list[str] = []

    def add(self, rules: collections.Counter[str], seen: set[str], *, chunk: bool) -> None:
        for rule, n in rules.items():
            if n:
                self.count[rule] += n
                if chunk:
                    self.chunks[rule] += 1
                seen.add(rule)


def judged(text: str) -> collections.Counter[str]:
    """What ``for_model`` does to ``text``, by rule."""
    rules: collections.Counter[str] = collections.Counter()
    for run in _FLAG_OR_TAGS.findall(text):
        rules["tags: flag kept" if run[0] == "\U0001f3f4" else "tags: run marked"] += 1
    rules["bidi control escaped"] += len(_BIDI_CONTROL.findall(text))
    shown = for_model(text)
    for ch in set(_INVISIBLE.findall(text)) - set(_BIDI_CONTROL.findall(text)):
        name = f"U+{ord(ch):04X} {unicodedata.name(ch, '?')}"
        kept = shown.count(ch)
        rules[f"{name}: dropped"] += text.count(ch) - kept
        rules[f"{name}: kept"] += kept
        rules["invisible, any: dropped"] += text.count(ch) - kept
        rules["invisible, any: kept"] += kept
    return rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--examples", type=int, default=5)
    args = parser.parse_args()
    for vault in args.vaults:
        files, _ = scan(vault.resolve())
        tally = Tally()
        texts: list[str] = []
        for file in files:
            note = parse_note(file.path, Path(file.abspath).read_bytes(), 0.0)
            seen: set[str] = set()
            tally.add(judged(note.title), seen, chunk=False)
            for chunk in chunk_note(note.body):
                texts.append(chunk.text)
                rules = judged(chunk.text) + judged(chunk.heading)
                comments = _COMMENT.findall(chunk.text)
                outside = _COMMENT.findall(mask_code(chunk.text))
                rules["HTML comment"] = len(comments)
                rules["HTML comment outside code"] = len(outside)
                rules["%% comment %%"] = len(_OBSIDIAN_COMMENT.findall(mask_comments(mask_code(chunk.text))))
                tally.add(rules, seen, chunk=True)
                for comment in comments:
                    if len(tally.examples) < args.examples:
                        tally.examples.append(f"  {file.path}: {comment[:100]!r}")
            for rule in seen:
                tally.notes[rule] += 1
        print(f"{vault}: {len(files):,} notes, {len(texts):,} chunks")
        # The rules a vault may well not touch, said with their 0.
        always = [
            "tags: run marked",
            "tags: flag kept",
            "bidi control escaped",
            "HTML comment",
            "HTML comment outside code",
        ]
        for rule in [*always, *sorted(set(tally.count) - set(always))]:
            print(f"  {rule:<48} {tally.count[rule]:6}  in {tally.chunks[rule]:5} chunks, {tally.notes[rule]:5} notes")
        print("\n".join(tally.examples))
        passes = []
        for _ in range(3):
            start = time.perf_counter()
            for text in texts:
                for_model(text)
            passes.append(time.perf_counter() - start)
        chars = sum(map(len, texts))
        print(
            f"  for_model: {min(passes) / max(1, len(texts)) * 1e6:.1f} µs a chunk ({chars / max(1, len(texts)):,.0f} characters)"
        )


if __name__ == "__main__":
    main()
