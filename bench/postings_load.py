"""Loading a BM25 postings base (brain/index/postings.py ``load``) and searching with it, on an
index built with postings (``BRAIN_LEXICAL_POSTINGS=1 brain index --vault V``).

Prints the descriptors of postings.bin one base holds, the wall time of ``load`` (p50 / p95 of
``--loads``, each base dropped before the next), of a first BM25 search (``IndexStore.fts_search``,
the lexical lane's expression of a note's title) with no base cached, and of searches with the
base cached, and a digest of every answer: two versions of brain answer alike when their digests
match. The machine is shared: run each version in turn, several rounds, and compare ratios.

    BRAIN_HOME=... PYTHONPATH=<checkout> python bench/postings_load.py --vault V [--loads 200]
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE.parent))  # after PYTHONPATH: another checkout may be measured

from brain import config  # noqa: E402
from brain.index import postings  # noqa: E402
from brain.index.store import IndexStore  # noqa: E402
from brain.recall import lexical  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _line(name: str, ms: list[float]) -> str:
    return f"{name:<28} p50 {statistics.median(ms):8.3f} p95 {_pct(ms, 0.95):8.3f} ms ({len(ms)})"


def _held(path: Path) -> int:
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            held += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:
            pass
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vault", type=Path, required=True, help="a vault indexed with postings")
    parser.add_argument("--loads", type=int, default=200)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ["BRAIN_LEXICAL_POSTINGS"] = "1"
    directory = config.index_dir(args.vault.resolve())
    path = directory / "postings.bin"
    if not path.exists():
        sys.exit(f"no postings.bin in {directory}: index the vault with BRAIN_LEXICAL_POSTINGS=1")
    print(f"{postings.__file__}, {path.stat().st_size / 1e6:.1f} MB, load {os.getloadavg()[0]:.1f}")

    base = postings.load(directory)
    assert base is not None, "postings.bin not readable"
    print(f"descriptors of postings.bin held by a base: {_held(path)}")
    del base
    loads = []
    for _ in range(args.loads):
        wall = time.perf_counter()
        base = postings.load(directory)
        loads.append((time.perf_counter() - wall) * 1000)
        del base
    print(_line("load", loads))

    titles = sorted(p.stem for p in args.vault.rglob("*.md"))
    step = max(1, len(titles) // args.queries)
    store = IndexStore.open_snapshot(directory)
    try:
        expressions = [e for e in (lexical.match_expression(store, t) for t in titles[::step]) if e]
        digest = hashlib.sha256()
        first, warm = [], []
        for expression in expressions:
            store.close()  # no base cached (the process's, the snapshot's): this search loads it
            postings._bases.clear()
            store = IndexStore.open_snapshot(directory)
            wall = time.perf_counter()
            answer = store.fts_search(expression, lexical.WEIGHTS, 300)
            first.append((time.perf_counter() - wall) * 1000)
            for _ in range(3):
                wall = time.perf_counter()
                again = store.fts_search(expression, lexical.WEIGHTS, 300)
                warm.append((time.perf_counter() - wall) * 1000)
                assert again == answer
            digest.update(repr(answer).encode())
    finally:
        store.close()
    print(_line("first search (loads base)", first))
    print(_line("search, base cached", warm))
    print(f"{len(expressions)} queries, answers' digest {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
