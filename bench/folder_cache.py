"""A one-shot `brain ask`'s first query: CPU with the folders lane's index read from the store
and built (the old tree) against taken from the recall cache (this tree); and the cache's size.

Each ask is a process of its own, as `brain ask` without a server is: it opens the index,
takes what the last run kept (``recall-cache.npz``), asks one hybrid query and closes. The
two trees take turns (old first in odd rounds): the machine's load falls on both. Each tree
has its own BRAIN_HOME (a copy of one index): the two brains' kept files are of two formats,
and each would throw the other's away.

    python bench/folder_cache.py --against /tmp/old-tree --notes 20000 --rounds 7 --dir /tmp/fc

``--digest`` instead proves the answers the same: the labelled queries of /work/shared's two
vaults (the bench embedder), asked by the old tree, by this one as it builds and keeps the
folder index and by this one again as it takes it from the kept file; per set, a digest of
every hit (path, score bit for bit, via) of each.

Prints per tree the median CPU of the first query and of the whole process, the folder index's
share (the calls to ``FolderIndex.from_store`` and their CPU), the ratio this tree / old, and
the kept file's size. Figures, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERY = "how does kalo mize ruti relate to sane"


def child(vault: Path) -> None:
    import brain  # the tree on PYTHONPATH, imported before scale adds this checkout to the path

    sys.path.insert(0, str(HERE))
    import scale

    from brain.recall import folders
    from brain.recall.opening import open_recaller

    scale._register()
    spent = {"calls": 0, "cpu": 0.0}
    real = folders.FolderIndex.from_store.__func__  # type: ignore[attr-defined]

    def counted(cls, store):  # type: ignore[no-untyped-def]
        started = time.process_time()
        try:
            return real(cls, store)
        finally:
            spent["calls"] += 1
            spent["cpu"] += time.process_time() - started

    folders.FolderIndex.from_store = classmethod(counted)  # type: ignore[method-assign,assignment]
    started = time.process_time()
    recaller = open_recaller(vault, build=True, embedder=scale.BenchFakeEmbedder(), rerank_model=None)
    opened = time.process_time()
    recaller.ask(QUERY, "hybrid")
    asked = time.process_time()
    recaller.close()
    from brain import config
    from brain.index.files import RECALL_CACHE_FILE

    kept = config.index_dir(vault.resolve()) / RECALL_CACHE_FILE
    print(
        json.dumps(
            {
                "brain": brain.__file__,
                "first_query_cpu_s": asked - opened,
                "process_cpu_s": time.process_time() - started,
                "folder_builds": spent["calls"],
                "folder_build_cpu_s": spent["cpu"],
                "cache_bytes": kept.stat().st_size if kept.exists() else 0,
            }
        )
    )


def digest_child(vault: Path, queries_file: Path) -> None:
    import hashlib

    import brain  # noqa: F401 - the tree on PYTHONPATH, before scale adds this checkout

    sys.path.insert(0, str(HERE))
    import scale

    from brain.evaluation.queries import load_queries
    from brain.recall import folders
    from brain.recall.opening import open_recaller

    scale._register()
    calls = []
    real = folders.FolderIndex.from_store.__func__  # type: ignore[attr-defined]
    folders.FolderIndex.from_store = classmethod(lambda cls, store: calls.append(1) or real(cls, store))  # type: ignore[method-assign,assignment]
    recaller = open_recaller(vault, build=True, embedder=scale.BenchFakeEmbedder(), rerank_model=None)
    hits, lane = [], 0
    for query in load_queries(queries_file, vault):
        result = recaller.ask(query.query, "hybrid")
        hits.append([[c.path, repr(float(c.score)), c.via.as_dict() if c.via else None] for c in result.results])
        lane += sum("folders" in c.sources for c in result.results)
    recaller.close()
    text = json.dumps(hits, sort_keys=True)
    print(
        json.dumps(
            {
                "digest": hashlib.sha256(text.encode()).hexdigest()[:16],
                "queries": len(hits),
                "folders_hits": lane,
                "folder_builds": len(calls),
            }
        )
    )


def run_child(tree: Path, home: Path, vault: Path, queries: Path | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), BRAIN_HOME=str(home), BRAIN_RERANK_MODEL="none")
    extra = ["--queries", str(queries)] if queries else []
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(vault), *extra], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise SystemExit(f"a run of {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", help="a checkout of the old brain (git archive main | tar -x -C DIR)")
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dir", help="work folder, kept (the vault and its index)")
    parser.add_argument("--digest", action="store_true", help="compare the answers on /work/shared's vaults")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--queries", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.queries:
            digest_child(Path(args.child), Path(args.queries))
        else:
            child(Path(args.child))
        return 0
    if not args.dir:
        parser.error("--dir is required")
    work = Path(args.dir)
    if args.digest:
        return digest(Path(args.against or "."), work)
    vault, new_home, old_home = work / "vault", work / "home-new", work / "home-old"
    this = HERE.parent
    sys.path.insert(0, str(HERE))
    if not vault.exists():
        import scale

        vault.mkdir(parents=True)
        print("vault:", scale.generate(vault, args.notes), flush=True)
    if not new_home.exists():
        run_child(this, new_home, vault)  # indexes it (the bench embedder), and keeps its cache
    if args.against is None:
        print(json.dumps(run_child(this, new_home, vault)))
        return 0
    if not old_home.exists():
        shutil.copytree(new_home, old_home)
    trees = {"old": (Path(args.against), old_home), "new": (this, new_home)}
    for tree, home in trees.values():
        run_child(tree, home, vault)  # each keeps its own
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            runs[name].append(run_child(*trees[name], vault))

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[name])

    for key in ("first_query_cpu_s", "process_cpu_s", "folder_build_cpu_s"):
        old, new = med("old", key), med("new", key)
        ratio = f"{new / old:.2f}" if old else "-"
        print(f"{key:22} old {old:.4f}  new {new:.4f}  new/old {ratio}  (medians of {args.rounds})")
    for name in ("old", "new"):
        builds = [x["folder_builds"] for x in runs[name]]
        print(
            f"{name}: FolderIndex.from_store calls per run {builds}; kept file {runs[name][-1]['cache_bytes']:,} bytes"
        )
    return 0


def digest(old: Path, work: Path) -> int:
    sets = {
        "13th-age": (HERE / "realvault" / "13th-age-srd.queries.jsonl", Path("/work/shared/bench/vaults/13th-age-srd")),
        "vok": (
            HERE / "realvault" / "vaultofknowledge.queries.jsonl",
            Path("/work/shared/bench/vaults/vaultofknowledge"),
        ),
    }
    same = True
    for name, (queries, vault) in sets.items():
        new_home, old_home = work / f"{name}-new", work / f"{name}-old"
        first = run_child(HERE.parent, new_home, vault, queries)  # indexes, builds the folder index, keeps it
        if not old_home.exists():
            shutil.copytree(new_home, old_home)
        before = run_child(old, old_home, vault, queries)
        kept = run_child(HERE.parent, new_home, vault, queries)  # the folder index from the kept file
        print(f"{name}: old {before}\n  new, built {first}\n  new, kept {kept}")
        same &= before["digest"] == first["digest"] == kept["digest"]
    print("every answer the same (path, score bit for bit, via)" if same else "ANSWERS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
