"""What the ledger's ``clip`` costs on a 16 MB prompt (masked in windows at its head and tail),
with this checkout's code and, given ``--old DIR``, another checkout's: CPU seconds, best of
``--repeat``, interleaved, and whether a secret's part is left in what is kept.

    python bench/clip_cost.py [--old DIR] [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
MB = 16 * 1024 * 1024
TEXTS = {
    "many lines": "a word or two\n" * (MB // 14),
    "one line": "a word " * (MB // 7),
    "password then 15,000": "x " * (MB // 2) + "password=" + "A" * 15_000,
    "password then 15,000 at a line": "x\n" * (MB // 2) + "password=" + "A" * 15_000,
    "a last line of 60,000 words": "x\n" * (MB // 2) + "a word " * (60_000 // 7),
}


def load(root: Path):  # type: ignore[no-untyped-def]
    for name in [m for m in sys.modules if m == "brain" or m.startswith("brain.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module("brain.ledger.transcript")
    finally:
        sys.path.remove(str(root))
    return module.clip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, help="another checkout, timed against this one")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    clips = {"this": load(HERE)}
    if args.old:
        clips["old"] = load(args.old)
    print(f"{'text':32} {'code':5} {'ms':>8}  secret kept")
    for kind, text in TEXTS.items():
        best = {name: float("inf") for name in clips}
        kept = {}
        for _ in range(args.repeat):
            for name, clip in clips.items():
                started = time.process_time()
                out = clip(text, 4000)
                best[name] = min(best[name], time.process_time() - started)
                kept[name] = out.count("A")
        for name in clips:
            print(f"{kind:32} {name:5} {best[name] * 1000:8.1f}  {kept[name]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
