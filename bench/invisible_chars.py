"""How often real notes hold the invisible format characters `brain`'s output for people judges
(``text.terminal_safe``), and which of them it keeps and which it shows as their escape.

For each vault given, every ``.md`` note is read and each line holding one of them (a bidi
control, a zero-width space, ZWNJ or ZWJ, LRM, RLM or ALM, a word joiner, U+FEFF) is shown as
``brain ask`` or ``brain note`` would show it; the script prints how many notes hold one and in
how many one is shown as its escape, per character how many were kept as they are and how many
were shown as their escape, and up to ``--examples`` lines around one escaped (what a reader
sees as ``\\u200c``).

    python bench/invisible_chars.py VAULT [VAULT ...] [--examples 5]
"""

from __future__ import annotations

import argparse
import collections
import os
import unicodedata
from pathlib import Path

from brain.text import terminal_safe

# What terminal_safe judges: the format characters it writes as their escape after a Latin letter
# (it keeps some of them elsewhere).
JUDGED = [
    chr(c)
    for c in range(0x10000)
    if unicodedata.category(chr(c)) == "Cf" and terminal_safe(f"a{chr(c)}") != f"a{chr(c)}"
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--examples", type=int, default=5)
    args = parser.parse_args()
    for vault in args.vaults:
        kept: collections.Counter[str] = collections.Counter()
        escaped: collections.Counter[str] = collections.Counter()
        notes = holding = shown_escaped = 0
        examples: list[str] = []
        for folder, _, files in os.walk(vault):
            for name in sorted(files):
                if not name.endswith(".md"):
                    continue
                notes += 1
                text = (Path(folder) / name).read_text(encoding="utf-8", errors="replace")
                found = any_escaped = False
                for line in text.split("\n"):
                    present = {ch for ch in JUDGED if ch in line}
                    if not present:
                        continue
                    shown = terminal_safe(line)
                    for ch in present:
                        escape = f"\\u{ord(ch):04x}"
                        n_escaped = shown.count(escape) - line.count(escape)
                        if not n_escaped and ch not in shown:
                            continue  # taken out with a control sequence around it: not judged here
                        found = True
                        kept[f"U+{ord(ch):04X}"] += line.count(ch) - n_escaped
                        escaped[f"U+{ord(ch):04X}"] += n_escaped
                        any_escaped = any_escaped or n_escaped > 0
                        if n_escaped and len(examples) < args.examples:
                            at = shown.index(escape)
                            examples.append(f"  {name}: {shown[max(0, at - 30) : at + 36]!r}")
                holding += found
                shown_escaped += any_escaped
        print(f"{vault}: {notes:,} notes, {holding} holding one, {shown_escaped} with one shown as its escape")
        for code in sorted(set(kept) | set(escaped)):
            name = unicodedata.name(chr(int(code[2:], 16)), "?")
            print(f"  {code} {name:<28} kept {kept[code]:5}  escaped {escaped[code]:5}")
        print("\n".join(examples))


if __name__ == "__main__":
    main()
