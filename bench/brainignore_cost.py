"""What a large ``.brainignore`` costs: reading it, and matching the walk's paths against it.

A synthetic vault of ``--notes`` notes (``--folders`` folders) is written to a temporary folder,
then for each count of patterns (0, 1,000, 10,000 by default) its ``.brainignore`` is written
and the script prints, each the median of ``--repeat`` runs:

- ``load``: ``vault.load_ignore`` read afresh (what one ``brain index`` or update check pays
  first), and ``cached``: again, the file unchanged (what `brain serve` pays for each pass and
  each note it reads back);
- ``pathspec``, ``quick``: matching one path, pathspec's ``GitIgnoreSpec`` alone (as before, on
  a sample) and through ``ignore_rules.QuickSpec`` (over every path the walk asks about, each
  note and each folder), whose answers are checked to be the same;
- ``walk``: ``vault.walk`` with those rules, against the same walk with none, and the walk
  before (``walk before``: pathspec's spec alone, each path tried against every pattern);
- ``note``: ``reading.inside_vault`` for one note, what `brain note` and MCP get_note check
  before reading it.

With ``--case-insensitive`` the vault's file system is taken to be one that takes names in
any case (macOS, Windows: ``vault.case_insensitive`` says so there), whose rules match in any
case: every path is matched in lower case.

The patterns are of the kinds people write: one note or folder by path, ``*.ext`` and
``name-*`` globs, ``**/x/`` folders anywhere; a tenth of them match some of the vault's notes.

    python bench/brainignore_cost.py [--notes 10000] [--folders 100] [--patterns 0 1000 10000] [--case-insensitive]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain.ignore_rules import fold_case
from brain.reading import inside_vault
from brain.vault import IGNORE_FILE, IgnoreRules, load_ignore, walk


def make_vault(root: Path, notes: int, folders: int) -> list[str]:
    paths = []
    for i in range(notes):
        rel = f"Folder {i % folders:03d}/Note {i:05d}.md"
        full = root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(f"# Note {i}\n\nsome text {i}\n", encoding="utf-8")
        paths.append(rel)
    return paths


def patterns(count: int, notes: int, folders: int) -> list[str]:
    """``count`` patterns, a tenth of them matching one of the vault's notes each."""
    out = []
    for i in range(count):
        kind = i % 10
        if kind == 0:
            n = (i * 7919) % notes  # one note of the vault, by its path
            out.append(f"Folder {n % folders:03d}/Note {n:05d}.md")
        elif kind in (1, 2, 3):
            out.append(f"Archive {i}/Old note {i}.md")  # a note by path, not in this vault
        elif kind in (4, 5):
            out.append(f"*.draft{i}")
        elif kind == 6:
            out.append(f"scratch-{i}-*")
        elif kind == 7:
            out.append(f"**/private-{i}/")
        elif kind == 8:
            out.append(f"/Exports {i}/")
        else:
            out.append(f"# a comment {i}")
    return out


def median_s(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(root: Path, asked: list[str], note: str, repeat: int) -> str:
    """One row: the costs of the ``.brainignore`` now in ``root``."""
    from brain import vault

    def cold() -> object:
        vault._LOADED.clear()
        return load_ignore(root)

    load = median_s(cold, repeat)
    cached = median_s(lambda: load_ignore(root), repeat)
    rules = load_ignore(root)
    quick = rules.spec
    if quick is not None:
        per_path = median_s(lambda: [quick.match_file(p) for p in asked], repeat) / len(asked)
        # pathspec alone, as before: on a sample (10,000 patterns take ~10 ms a path)
        sample = asked[:: max(1, len(asked) // 500)]
        before = median_s(lambda: [quick.spec.match_file(p) for p in sample], 1) / len(sample)
        fold = fold_case if quick.fold else str  # the spec's patterns are in lower case then
        wrong = [p for p in asked if quick.match_file(p) != quick.spec.match_file(fold(p))]
        assert not wrong, f"QuickSpec and pathspec disagree on {wrong[:5]}"
    else:
        per_path = before = 0.0
    walked = median_s(lambda: walk(root, rules), repeat)
    # the walk as it was, each path tried against every pattern by pathspec (once: it is slow)
    walked_before = median_s(lambda: walk(root, IgnoreRules(quick.spec)), 1) if quick is not None else 0.0
    none = IgnoreRules()
    bare = median_s(lambda: walk(root, none), repeat)
    reading = median_s(lambda: inside_vault(root, note), repeat)
    ignored = sum(s.reason == "brainignore" for s in walk(root, rules).skipped)
    return (
        f"{load * 1e3:>7.1f}ms  {cached * 1e3:>7.2f}ms  {before * 1e6:>9.1f}µs  {per_path * 1e6:>7.2f}µs"
        f"  {walked_before * 1e3:>9.0f}ms  {walked * 1e3:>6.0f}ms  {bare * 1e3:>8.0f}ms  {reading * 1e3:>7.2f}ms  {ignored}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--folders", type=int, default=100)
    parser.add_argument("--patterns", type=int, nargs="+", default=[0, 1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--case-insensitive", action="store_true", help="as on macOS and Windows: rules in any case")
    args = parser.parse_args()
    if args.case_insensitive:
        from brain import vault

        vault.case_insensitive = lambda folder, name: True  # what the probe answers there
    with tempfile.TemporaryDirectory(prefix="brainignore-bench-") as tmp:
        root = Path(tmp)
        paths = make_vault(root, args.notes, args.folders)
        folders = sorted({p.rsplit("/", 1)[0] + "/" for p in paths})
        asked = paths + folders  # what the walk matches: each note and each folder
        print(f"{len(paths)} notes in {len(folders)} folders; {len(asked)} paths matched a walk")
        print(
            f"{'patterns':>8}  {'load':>9}  {'cached':>9}  {'pathspec':>11}  {'quick':>9}"
            f"  {'walk before':>11}  {'walk':>8}  {'no rules':>10}  {'note':>9}  ignored"
        )
        for count in args.patterns:
            ignore_file = root / IGNORE_FILE
            if count:
                ignore_file.write_text("\n".join(patterns(count, args.notes, args.folders)) + "\n", encoding="utf-8")
            elif ignore_file.exists():
                ignore_file.unlink()
            print(f"{count:>8}  {measure(root, asked, paths[1], args.repeat)}")
        print(
            f"(median of {args.repeat}; pathspec and quick: matching one path; {os.cpu_count()} CPUs, shared"
            + ("; rules in any case)" if args.case_insensitive else ")")
        )


if __name__ == "__main__":
    main()
