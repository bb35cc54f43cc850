"""What reading Latin look-alikes as Cyrillic costs (``text.lookalikes_as_cyrillic``), on the texts
that cost it most: one long Cyrillic word with a Latin letter at its end, and a text of mixed words.

Every query of the names, BM25 and dates lanes and every note name is read so. Its first version
matched a mixed word with one regular expression that backtracked: a Cyrillic word of 1,000
letters took 3.6 s, one of 4,000 over 400 s. Prints the seconds for each text at each size (the
least of three runs) and fails (exit 1) where a text of 10,000 characters, the longest query brain
asks (``protocol.MAX_QUERY_CHARS``), takes over 0.05 s. Measured (loaded two-core machine): 0.7 ms,
0.2 ms and 2 ms at 10,000 characters; a note's name is a few dozen.

    python bench/lookalike_cost.py
"""

from __future__ import annotations

import sys
import time

from brain.text import lookalikes_as_cyrillic

SIZES = (1_000, 10_000, 100_000)
MOST = 0.05  # seconds for a query's 10,000 characters
TEXTS = {
    "one word, a Latin letter at its end": lambda n: "я" * n + "a",
    "one word, no Latin letter": lambda n: "я" * n + " a",
    "mixed words": lambda n: "кaкое " * (n // 6),
}


def _timed(text: str) -> float:
    start = time.perf_counter()
    lookalikes_as_cyrillic(text)
    return time.perf_counter() - start


def main() -> int:
    failed = False
    for name, make in TEXTS.items():
        for n in SIZES:
            text = make(n)
            seconds = min(_timed(text) for _ in range(3))  # the least of three: a loaded machine's noise
            print(f"{name:40} {len(text):>9,} characters {seconds:8.4f} s")
            if n == 10_000 and seconds > MOST:
                print(f"  over {MOST} s: {name}")
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
