"""What the vault walk and ``vault.excluded`` cost on a deep vault and on a wide one.

Two vaults are made: ``--depth`` folders one in the other with a note in each (default 1,000,
named "d": a longer name reaches the system's PATH_MAX, 4,096 bytes, before 1,000 levels, and
the folders below it are skipped as "read-error", File name too long), and a wide one,
``--wide`` notes in ``--folders`` folders (default 100,000 in 2,000). For each it prints the
CPU seconds of the walk alone (``vault.walk``, no helper process), the median of ``--repeat``
runs, and for the deep one the CPU of ``vault.excluded`` (what `brain serve` asks of every
path an event names, and a read of a note) on its deepest note, with and without a
.brainignore, now and as it was (each folder on the way joined and asked by itself), with
their ratio. With ``--index`` it also times a whole `brain index` of each, then a no-op one
(the fake embedder of bench/scale.py).

    python bench/deep_walk.py [--depth 1000] [--wide 100000 --folders 2000] [--index]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain import vault

HERE = Path(__file__).resolve().parent


def chain(top: Path, depth: int, name: str = "d") -> None:
    """``depth`` folders, one in the other, a note in each: made by descriptor, never by a path
    that long (mkdir of a path over PATH_MAX fails)."""
    top.mkdir(parents=True)
    fd = os.open(top, os.O_RDONLY)
    try:
        for level in range(depth):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
            note = os.open(f"Note {level}.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(note, f"# Note {level}\n\nA note {level} folders deep.\n".encode())
            os.close(note)
    finally:
        os.close(fd)


def wide(top: Path, notes: int, folders: int) -> None:
    for folder in range(folders):
        (top / f"Folder {folder}").mkdir(parents=True)
    for note in range(notes):
        (top / f"Folder {note % folders}" / f"Note {note}.md").write_text(f"# Note {note}\n\nText {note}.\n")


def cpu(work, repeat: int) -> float:
    spent = []
    for _ in range(repeat):
        started = time.process_time()
        work()
        spent.append(time.process_time() - started)
    return statistics.median(spent)


def excluded_before(rel: str, ignore: vault.IgnoreRules | None, *, is_dir: bool = False) -> str | None:
    """``vault.excluded`` as it was before (stop 64)."""
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        reason = vault.name_rule("/".join(parts[:depth]), ignore, is_dir=True)
        if reason:
            return reason
    return vault.name_rule(rel, ignore, is_dir=is_dir)


def brain_index(root: Path, home: Path) -> float:
    env = {**os.environ, "BRAIN_HOME": str(home), "BRAIN_EMBED_MODEL": "benchfake:384", "BRAIN_RERANK_MODEL": "none"}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(HERE / "pathological.py"), "--brain", "index", "--vault", str(root)],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--wide", type=int, default=100_000)
    parser.add_argument("--folders", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--index", action="store_true", help="time `brain index` too (minutes for the wide vault)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="brain-deep-walk-")
    try:  # rm, not shutil.rmtree: it recurses once a level (a RecursionError at 1,000 deep)
        deep, broad = Path(tmp, "deep"), Path(tmp, "wide")
        chain(deep, args.depth)
        wide(broad, args.wide, args.folders)
        print(f"load {os.getloadavg()[0]:.1f}")
        for label, root in ((f"deep {args.depth}", deep), (f"wide {args.wide}/{args.folders}", broad)):
            found = vault.walk(root)
            seconds = cpu(lambda root=root: vault.walk(root), args.repeat)
            print(f"{label}: walk {seconds:.3f} s CPU, {len(found.notes)} notes, {len(found.skipped)} skipped")
        deepest = max((note.path for note in vault.walk(deep).notes), key=len)
        rules = vault._parse_ignore(b"*.tmp\nfoo/\nbar-*\n", None)
        print(f"excluded() of the deepest note ({deepest.count('/')} folders), ms CPU, interleaved:")
        print(f"{'rules':>12} {'before':>9} {'now':>9} {'ratio':>7}")
        for name, ignore in (("none", None), (".brainignore", rules)):
            before, now = [], []
            for _ in range(args.repeat):
                before.append(cpu(lambda ignore=ignore: excluded_before(deepest, ignore), 1))
                now.append(cpu(lambda ignore=ignore: vault.excluded(deepest, ignore), 1))
            b, n = statistics.median(before) * 1e3, statistics.median(now) * 1e3
            print(f"{name:>12} {b:>9.2f} {n:>9.2f} {b / max(n, 1e-6):>6.0f}x")
        if args.index:
            for label, root in (("deep", deep), ("wide", broad)):
                home = Path(tmp, f"home-{label}")
                first, again = brain_index(root, home), brain_index(root, home)
                print(f"brain index {label}: {first:.1f} s, no-op {again:.2f} s")
    finally:
        subprocess.run(["rm", "-rf", tmp], check=False)


if __name__ == "__main__":
    main()
