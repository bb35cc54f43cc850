"""The ledger's masker's speed over real texts, this checkout's against another's, interleaved: MB/s of
each over the texts ``bench/mask_compare.py`` reads (each line of the Claude Code transcripts as written
and each string in it, each file of the two bench vaults), round after round in turn (old, this, old,
this …), so a machine's load weighs on both alike; then the ratio of their best rounds, and whether
every text came out the same. CPU seconds (``time.process_time``), the texts read into memory first.

    git archive main | tar -x -C /tmp/main-tree
    python bench/mask_speed.py --old /tmp/main-tree [--rounds 3] [--min-ratio 1.5]

``--min-ratio R`` exits 1 when this checkout is not R times as fast as ``--old`` (its best round
against the other's best), as a speed target for a change that is meant to make the masker faster.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mask_compare import HERE, SHARED, load_redact, masker, texts


def one_round(redact: Callable[[str], str], corpus: list[str]) -> tuple[float, list[str]]:
    """(the CPU seconds ``redact`` takes over every text of ``corpus``, what it gives)."""
    started = time.process_time()
    masked = [redact(text) for text in corpus]
    return time.process_time() - started, masked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, required=True, help="the other checkout (its brain/ledger/redact.py)")
    parser.add_argument("--shared", type=Path, default=SHARED, help=f"fixtures/ and bench/ (default: {SHARED})")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-ratio", type=float, help="exit 1 unless this checkout is this many times as fast")
    args = parser.parse_args()
    transcripts, vaults = args.shared / "fixtures" / "claude-code", args.shared / "bench" / "vaults"
    if not any(transcripts.glob("*.jsonl")) or not vaults.is_dir():
        parser.exit(2, f"mask_speed.py: no transcripts in {transcripts} or no vaults in {vaults}\n")
    if masker(args.old) is None:
        parser.exit(2, f"mask_speed.py: --old {args.old}: no brain/ledger/redact.py nor redact/ there\n")
    corpus = [text for _, _, text in texts(transcripts, vaults, [])]
    megabytes = sum(len(text.encode()) for text in corpus) / 1e6
    old, new = load_redact(args.old, "redact_old"), load_redact(HERE, "redact_new")
    old(corpus[0]), new(corpus[0])  # each compiles its first patterns outside the rounds
    best = {"old": float("inf"), "this": float("inf")}
    same = True
    print(f"{len(corpus):,} texts, {megabytes:.1f} MB")
    for number in range(1, args.rounds + 1):
        old_seconds, before = one_round(old, corpus)
        new_seconds, after = one_round(new, corpus)
        same = same and before == after
        best["old"], best["this"] = min(best["old"], old_seconds), min(best["this"], new_seconds)
        print(
            f"round {number}: --old {old_seconds:.2f} s ({megabytes / old_seconds:.2f} MB/s), "
            f"this {new_seconds:.2f} s ({megabytes / new_seconds:.2f} MB/s)",
            flush=True,
        )
    ratio = best["old"] / best["this"]
    print(
        f"best: --old {megabytes / best['old']:.2f} MB/s, this {megabytes / best['this']:.2f} MB/s, "
        f"{ratio:.2f} times as fast; every text masked the same: {'yes' if same else 'NO'}"
    )
    if not same or (args.min_ratio is not None and ratio < args.min_ratio):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
