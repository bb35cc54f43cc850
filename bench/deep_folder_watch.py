"""What `brain serve`'s watcher pays for a deep folder moved into the vault.

A folder moved in is reported as one event, its notes not at all: the watcher walks it for a
note the scan would index (``VaultWatcher._holds_notes``). For each ``--depths`` a chain of
folders that deep with one note at the bottom is made, and the script prints the CPU seconds
of ``_relevant`` on that event, the median of ``--repeat`` runs, now and as before (each
folder's name and every folder's above it asked of the rules again, and each folder's whole
path made relative again, at each level), interleaved, with their ratio.

    python bench/deep_folder_watch.py [--depths 100 300 1100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from watchfiles import Change

from brain.server.watcher import VaultWatcher
from brain.vault import excluded, walk_tree


def holds_notes_before(watcher: VaultWatcher, path: str, limit: int = 20_000) -> bool:
    """``_holds_notes`` as it was before (stop 63)."""
    seen = 0
    for dirpath, dirnames, filenames in walk_tree(path):
        rel_dir = watcher._rel(dirpath) or ""
        spec = watcher._spec
        dirnames[:] = [d for d in dirnames if not excluded(f"{rel_dir}/{d}".lstrip("/"), spec, is_dir=True)]
        for name in filenames:
            if name.lower().endswith(".md") and not excluded(f"{rel_dir}/{name}".lstrip("/"), spec):
                return True
        seen += len(filenames) + len(dirnames)
        if seen > limit:
            return True
    return False


def chain(top: Path, depth: int) -> None:
    """``depth`` folders, one in the other, made a level at a time (os.makedirs recurses)."""
    top.mkdir(parents=True)
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        Path("Deep.md").write_text("# Deep\n")
    finally:
        os.chdir(here)


def seconds(watcher: VaultWatcher, top: Path, holds_notes) -> float:
    """The CPU seconds of the watcher's look at the event "``top`` added", with ``holds_notes``."""
    watcher._holds_notes = holds_notes  # type: ignore[method-assign]
    started = time.process_time()
    news = watcher._relevant([(Change.added, str(top))])
    spent = time.process_time() - started
    if news != {"Moved/"}:
        sys.exit(f"the deep note was no news: {news}")
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 300, 1100])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'depth':>6} {'before s':>9} {'now s':>9} {'ratio':>7}")
        for depth in args.depths:
            vault = Path(tmp) / f"vault-{depth}"
            chain(vault / "Moved", depth)
            watcher = VaultWatcher(vault, lambda batch: None)
            now_holds = watcher._holds_notes
            before_holds = partial(holds_notes_before, watcher)
            before, now = [], []
            for _ in range(args.repeat):
                now.append(seconds(watcher, vault / "Moved", now_holds))
                before.append(seconds(watcher, vault / "Moved", before_holds))
            b, n = statistics.median(before), statistics.median(now)
            print(f"{depth:>6} {b:>9.3f} {n:>9.3f} {b / max(n, 1e-6):>6.0f}x", flush=True)
        # TemporaryDirectory's rmtree recursed once a level before Python 3.12: take the chains
        # down a level at a time
        for depth in args.depths:
            os.chdir(Path(tmp) / f"vault-{depth}" / "Moved")
            for _ in range(depth):
                os.chdir("d")
            os.unlink("Deep.md")
            for _ in range(depth):
                os.chdir("..")
                os.rmdir("d")
        os.chdir(os.path.dirname(tmp))


if __name__ == "__main__":
    main()
