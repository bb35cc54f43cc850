"""What a snippet costs `brain ask`, `--json`, MCP search and `brain serve` for a long query: the
search of the passage once a query word (before) against one pass over its words (now), and
whether both centre every snippet on the same word.

Passages: notes of 200 wikilinks each (a hub), and prose; queries: a pasted text of N distinct
words (10,000 characters at most, as a query is cut), one word repeated, a short question; plus
20,000 fuzzed texts of the letters re.IGNORECASE and casefold disagree on (ß, ſ, ı, İ, ς, the
Greek dialytika, a ligature) for the equality. Prints the CPU of each over a dozen passages (an ask's results) and their ratio.

    python bench/snippet_cost.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain.output import _centred_words, _first_word_start
from brain.text import word_chars


def per_word(text: str, words: list[str]) -> int | None:
    """The search before: the text searched once for each word, in order."""
    for word in words:
        found = re.search(f"(?<![{word_chars()}]){re.escape(word)}", text, re.IGNORECASE)
        if found is not None:
            return found.start()
    return None


def fuzz_equal(count: int) -> tuple[int, int]:
    letters = list("abcsSſßẞiIıİσςΣkKK") + ["\u0301", " ", ".", "-", "ΐ", "ΐ", "ﬅ", "ﬆ", "ё", "Ё", "е"]
    rng = random.Random(7)
    same = 0
    for _ in range(count):
        text = "".join(rng.choices(letters, k=rng.randint(0, 60)))
        words = _centred_words("".join(rng.choices(letters, k=rng.randint(0, 40))))
        same += per_word(text, words) == _first_word_start(text, words)
    return same, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    hub = " ".join(f"[[Chapter {n} of the harbour manual]]" for n in range(200))[:2000]
    prose = ("The harbour crane schedule moves to dawn shifts after the winter storms. " * 30)[:2000]
    pasted = " ".join(f"token{n}x" for n in range(1400))[:10_000]
    cases = {
        "pasted 1,400 words": pasted,
        "one word x 1,400": ("garden " * 1430)[:10_000],
        "short question": "when does the harbour crane work",
    }
    for name, query in cases.items():
        words = _centred_words(query)
        for kind, text in (("hub", hub), ("prose", prose)):
            timings: dict[str, list[float]] = {"before": [], "now": []}
            for _ in range(args.rounds):  # interleaved: a loaded machine slows both alike
                for label, find in (("before", per_word), ("now", _first_word_start)):
                    start = time.process_time()
                    for _ in range(12):  # a dozen results an ask
                        answer = find(text, words)
                    timings[label].append(time.process_time() - start)
            before, now = min(timings["before"]), min(timings["now"])
            same = per_word(text, words) == answer
            print(
                f"{name:20} {kind:6} before {before * 1000:9.2f} ms  now {now * 1000:7.2f} ms  "
                f"now/before {now / max(before, 1e-9):6.3f}  same word: {same}"
            )
    same, count = fuzz_equal(20_000)
    print(f"fuzzed texts centred on the same word: {same:,} of {count:,}")


if __name__ == "__main__":
    main()
