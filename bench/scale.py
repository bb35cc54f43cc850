"""Scale test of brain's own data structures, apart from the model (figures, not asserted).

Generates a vault of N notes (default 100,000; ~5 chunks each, wikilinks between notes, some
aliases and partial-path links) in a temporary folder and indexes it with a fast
deterministic fake embedder (``benchfake:384``: a vector seeded by a hash of the text), then
measures, each phase in its own process so that peak memory is that phase's own:

    build        first index: wall time and where it goes (scan, parse+chunk, embed, SQLite
                 writes, link resolution, FAISS), peak RSS
    noop         a re-index with nothing changed, in-process; and `brain index` as a whole process
    change       one note edited, then re-indexed
    query        opening a Recaller (update check, FAISS load), then dense and dense+graph latency
                 p50/p95 per stage over many queries, peak RSS

    python bench/scale.py --notes 10000            # quick (a few minutes)
    python bench/scale.py                          # 100,000 notes (~500,000 chunks)
    python bench/scale.py --notes 10000 --keep --dir /tmp/brain-scale

Writes bench/out/scale-<notes>.json and prints a summary.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTES_PER_FOLDER = 1000
SECTIONS = 5  # ~one chunk each
WORDS_PER_SECTION = 150
MODEL = "benchfake:384"


# ----- the fake embedder ------------------------------------------------------------------


class BenchFakeEmbedder:
    """Deterministic random unit vectors seeded by a hash of the text: as fast as numpy allows."""

    def __init__(self, name: str = MODEL):
        self.name = name
        self.dim = int(name.split(":", 1)[1]) if ":" in name else 384
        self.query_prefix = self.passage_prefix = ""
        self.seconds = 0.0
        self.count = 0

    def _vectors(self, texts):
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(
                hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
            )
            out[i] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out

    def embed_documents(self, texts, *, progress: bool = False):
        started = time.perf_counter()
        vectors = self._vectors(list(texts))
        self.seconds += time.perf_counter() - started
        self.count += len(texts)
        return vectors

    def embed_query(self, text: str):
        return self._vectors([text])[0]


def _register() -> None:
    from brain.embed import register_embedder

    register_embedder("benchfake", BenchFakeEmbedder)


# ----- the vault --------------------------------------------------------------------------

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "di", "fe", "go", "hu", "ja"]


def _vocabulary(n: int = 3000) -> list[str]:
    rng = random.Random("brain-scale-vocab")
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def note_path(i: int) -> str:
    """zone-N/area-NNN/note-NNNNNN.md: ten areas of 1,000 notes per zone."""
    area = i // NOTES_PER_FOLDER
    return f"zone-{area // 10:02d}/area-{area:03d}/note-{i:06d}.md"


def note_text(i: int, n: int, vocab: list[str], rng: random.Random) -> str:
    """~5 sections of ~1,000 characters; ~5 links: mostly to the same folder, some across."""
    lines = []
    if i % 10 == 0:
        lines += ["---", f"aliases: [alias-{i:06d}]", f"tags: [t{i % 37}]", "---", ""]
    lines.append(f"# Note {i}")
    base = i - i % NOTES_PER_FOLDER
    for s in range(SECTIONS):
        words = rng.choices(vocab, k=WORDS_PER_SECTION)
        roll = rng.random()
        if roll < 0.6:  # a neighbour in the same folder, by name
            j = base + rng.randrange(min(NOTES_PER_FOLDER, n - base))
            link = f"[[note-{j:06d}]]"
        elif roll < 0.9:  # anywhere in the vault, by name
            link = f"[[note-{rng.randrange(n):06d}]]"
        elif roll < 0.97:  # by alias
            link = f"[[alias-{rng.randrange(0, n, 10):06d}]]"
        else:  # a partial path ("area-003/note-003042"): the Resolver's scan over every path
            j = rng.randrange(n)
            link = f"[[{note_path(j).split('/', 1)[1][:-3]}]]"
        words.insert(rng.randrange(len(words)), link)
        lines += ["", f"## Part {s + 1}", "", " ".join(words) + "."]
    return "\n".join(lines) + "\n"


def generate(root: Path, n: int) -> dict:
    started = time.perf_counter()
    vocab = _vocabulary()
    size = 0
    for i in range(0, n, NOTES_PER_FOLDER):
        (root / note_path(i)).parent.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        text = note_text(i, n, vocab, random.Random(i))
        path = root / note_path(i)
        path.write_text(text, encoding="utf-8")
        size += len(text)
    return {"notes": n, "mb": round(size / 1e6, 1), "seconds": round(time.perf_counter() - started, 1)}


# ----- phase instrumentation --------------------------------------------------------------


class Timers:
    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, owner, name: str, label: str | None = None) -> None:
        original = getattr(owner, name)
        label = label or name
        timers = self

        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timers.seconds[label] += time.perf_counter() - started
                timers.calls[label] += 1

        setattr(owner, name, wrapper)

    def as_dict(self) -> dict:
        return {
            k: {"s": round(v, 2), "calls": self.calls[k]} for k, v in sorted(self.seconds.items(), key=lambda x: -x[1])
        }


def _instrument_indexer() -> Timers:
    from brain.index import changes, indexer, vectors

    t = Timers()
    t.wrap(changes, "plan", "plan (scan + note rows)")
    t.wrap(changes, "read_note_bytes", "read files")
    t.wrap(indexer, "parse_note", "parse notes")
    t.wrap(indexer, "chunk_body", "chunk")
    t.wrap(indexer._Run, "_flush", "flush (embed + SQLite writes)")
    t.wrap(indexer, "resolve_links", "resolve links")
    t.wrap(vectors, "sync", "FAISS sync (load/add/save)")
    t.wrap(vectors.VectorIndex, "save", "FAISS save")
    t.wrap(vectors.VectorIndex, "load_file", "FAISS load")
    t.wrap(vectors.VectorIndex, "rebuild", "FAISS rebuild from SQLite")
    return t


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def phase_index(vault: Path, label: str) -> dict:
    from brain.index.indexer import index_vault

    timers = _instrument_indexer()
    embedder = BenchFakeEmbedder()
    started = time.perf_counter()
    report = index_vault(vault, embedder=embedder, progress=False)
    seconds = time.perf_counter() - started
    stages = timers.as_dict()
    stages["embed (fake)"] = {"s": round(embedder.seconds, 2), "calls": embedder.count}
    return {
        "phase": label,
        "seconds": round(seconds, 2),
        "notes": report.notes,
        "chunks": report.chunks,
        "embedded": report.embedded,
        "links": report.links,
        "stages": stages,
        "peak_rss_mb": _peak_rss_mb(),
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "chunks_per_s": round(report.embedded / seconds, 1) if report.embedded else None,
    }


def phase_query(vault: Path, queries: int, modes: list[str]) -> dict:
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    started = time.perf_counter()
    recaller = open_recaller(vault, embedder=BenchFakeEmbedder(), update=True, rerank_model=None)
    open_s = time.perf_counter() - started
    rss_open = _peak_rss_mb()
    rng = random.Random("brain-scale-queries")
    vocab = _vocabulary()
    texts = [f"how does {' '.join(rng.choices(vocab, k=4))} relate to {rng.choice(vocab)}" for _ in range(queries)]
    settings = RecallSettings(k=12)
    out = {
        "phase": "query",
        "open_s": round(open_s, 2),
        "open_stages_ms": dict(recaller.timings_ms),
        "peak_rss_after_open_mb": rss_open,
        "modes": {},
    }
    for mode in modes:
        recaller.ask(texts[0], mode, settings)  # warm
        totals: list[float] = []
        stages: dict[str, list[float]] = defaultdict(list)
        added = []
        for text in texts:
            t0 = time.perf_counter()
            result = recaller.ask(text, mode, settings)
            totals.append((time.perf_counter() - t0) * 1000)
            for key, value in result.timings_ms.items():
                stages[key].append(value)
            added.append(result.candidates_added)
        out["modes"][mode] = {
            "p50_ms": _pct(totals, 0.5),
            "p95_ms": _pct(totals, 0.95),
            "stages_p50_ms": {k: _pct(v, 0.5) for k, v in stages.items()},
            "stages_p95_ms": {k: _pct(v, 0.95) for k, v in stages.items()},
            "graph_added_mean": round(statistics.fmean(added), 1),
        }
    recaller.close()
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def phase_faiss(index_dir: Path, queries: int) -> dict:
    """What-if: the same vectors in other FAISS layouts, search latency (brain does not use them)."""
    import faiss
    import numpy as np

    flat = faiss.read_index(str(index_dir / "vectors.faiss"))  # IndexIDMap2(IndexFlatIP), as brain writes it
    base = faiss.downcast_index(flat.index)
    n, dim = base.ntotal, base.d
    vectors = base.reconstruct_n(0, n)
    id_map = faiss.vector_to_array(flat.id_map)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((queries, dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    k = 240  # dense_search asks for depth * 4 chunks
    _, truth = flat.search(q[:50], 10)
    out: dict = {"vectors": n, "dim": dim}

    def bench(name: str, index, build_s: float, ids=None) -> None:
        times = []
        for row in q:
            t0 = time.perf_counter()
            index.search(row.reshape(1, -1), k)
            times.append((time.perf_counter() - t0) * 1000)
        _, got = index.search(q[:50], 10)
        got = ids[got] if ids is not None else got
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, got)]))
        out[name] = {
            "build_s": round(build_s, 1),
            "p50_ms": _pct(times, 0.5),
            "p95_ms": _pct(times, 0.95),
            "recall@10_vs_flat": round(recall, 3),
        }

    bench("IDMap2(FlatIP) float32 (brain today)", flat, 0.0)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # one query at a time: OpenMP threads only spin and contend
    bench("IDMap2(FlatIP) float32, omp threads 1", flat, 0.0)
    faiss.omp_set_num_threads(threads)
    t0 = time.perf_counter()
    sq = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
    sq.add(vectors)
    bench("SQ fp16 flat (half the memory)", sq, time.perf_counter() - t0, id_map)
    t0 = time.perf_counter()
    nlist = max(16, int(4 * n**0.5))
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors[rng.choice(n, size=min(n, 40 * nlist), replace=False)])
    ivf.add(vectors)
    ivf.nprobe = 16
    bench(f"IVFFlat nlist={nlist} nprobe=16", ivf, time.perf_counter() - t0, id_map)
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


# ----- driver -----------------------------------------------------------------------------


def _child(args, phase: str, env: dict, extra: list[str] | None = None) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--phase",
        phase,
        "--dir",
        str(args.dir),
        "--notes",
        str(args.notes),
        "--queries",
        str(args.queries),
        "--modes",
        args.modes,
        *(extra or []),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"phase {phase} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _brain_cli() -> list[str]:
    beside = Path(sys.executable).parent / "brain"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "brain"]


def _dir_mb(path: Path) -> dict:
    return {p.name: round(p.stat().st_size / 1e6, 1) for p in sorted(path.iterdir()) if p.is_file()}


def run(args) -> dict:
    work = Path(args.dir)
    vault, home = work / "vault", work / "home"
    env = {
        **os.environ,
        "BRAIN_HOME": str(home),
        "BRAIN_EMBED_MODEL": MODEL,
        "BRAIN_RERANK_MODEL": "none",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("BRAIN_DB", None)
    result: dict = {
        "notes": args.notes,
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 1) for x in os.getloadavg()],
    }
    if not (vault / note_path(args.notes - 1)).exists():
        print(f"generating {args.notes} notes in {vault} ...", file=sys.stderr)
        result["generate"] = generate(vault, args.notes)
    for phase in ("build", "noop"):
        print(f"{phase} ...", file=sys.stderr)
        result[phase] = _child(args, phase, env)
    # `brain index` as a user runs it: a whole process, nothing changed (the model is not loaded).
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [*_brain_cli(), "index", "--vault", str(vault), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"brain index failed: {proc.stderr[-2000:]}")
    result["noop_cli_s"] = {"runs": [round(t, 2) for t in times], "median": round(statistics.median(times), 2)}
    target = vault / note_path(args.notes // 2)
    with open(target, "a", encoding="utf-8") as f:
        f.write(f"\nEdited at {time.time()}: one more line [[note-{args.notes // 3:06d}]].\n")
    print("change ...", file=sys.stderr)
    result["change"] = _child(args, "change", env)
    print("query ...", file=sys.stderr)
    result["query"] = _child(args, "query", env)
    from brain.config import index_dir

    os.environ["BRAIN_HOME"] = str(home)
    directory = index_dir(vault)
    result["index_files_mb"] = _dir_mb(directory)
    if args.faiss:
        print("faiss what-if ...", file=sys.stderr)
        result["faiss"] = _child(args, "faiss", env)
    return result


def summary(r: dict) -> str:
    b, nop, ch, q = r["build"], r["noop"], r["change"], r["query"]
    lines = [
        (
            f"scale: {r['notes']} notes (load average {r.get('load_average_at_start')} on {r.get('cpus')} cpus) , {b['chunks']} chunks, {sum(b['links'].values())} links "
            f"({b['links']}), fake embedder {MODEL}"
        )
    ]
    if "generate" in r:
        lines.append(f"  generated {r['generate']['mb']} MB of markdown in {r['generate']['seconds']} s")
    lines.append(f"  build     {b['seconds']:8.1f} s  ({b['chunks_per_s']} chunks/s), peak RSS {b['peak_rss_mb']} MB")
    for name, stage in b["stages"].items():
        lines.append(f"              {stage['s']:8.1f} s  {name}")
    lines.append(
        f"  no-op     {nop['seconds']:8.2f} s in-process, peak RSS {nop['peak_rss_mb']} MB; "
        f"`brain index` whole process {r['noop_cli_s']['median']} s (runs {r['noop_cli_s']['runs']})"
    )
    for name, stage in nop["stages"].items():
        if stage["s"] >= 0.05:
            lines.append(f"              {stage['s']:8.2f} s  {name}")
    lines.append(f"  1 change  {ch['seconds']:8.2f} s, peak RSS {ch['peak_rss_mb']} MB")
    for name, stage in ch["stages"].items():
        if stage["s"] >= 0.05:
            lines.append(f"              {stage['s']:8.2f} s  {name}")
    lines.append(
        f"  open Recaller {q['open_s']} s (stages ms: {q['open_stages_ms']}), peak RSS {q['peak_rss_after_open_mb']} MB"
    )
    for mode, m in q["modes"].items():
        stages = ", ".join(f"{k} {v}" for k, v in m["stages_p50_ms"].items() if k != "total")
        lines.append(f"  {mode:<8} p50 {m['p50_ms']:7.1f} ms  p95 {m['p95_ms']:7.1f} ms   (p50 stages ms: {stages})")
    lines.append(f"  query peak RSS {q['peak_rss_mb']} MB; index files MB: {r['index_files_mb']}")
    if "faiss" in r:
        for name, v in r["faiss"].items():
            if isinstance(v, dict):
                lines.append(
                    f"  what-if {name}: build {v['build_s']} s, search k=240 p50 {v['p50_ms']} ms "
                    f"p95 {v['p95_ms']} ms, recall@10 vs flat {v['recall@10_vs_flat']}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--modes", default="vector,graph", help="recall modes to time (any `brain ask --mode`)")
    parser.add_argument("--dir", help="work folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--faiss", action="store_true", help="also time other FAISS layouts on the same vectors")
    parser.add_argument("--out", default=str(HERE / "out"))
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _register()
    if args.phase:  # a child process: one phase, one JSON line on stdout
        vault = Path(args.dir) / "vault"
        modes = [m for m in args.modes.split(",") if m]
        if args.phase in ("build", "noop", "change"):
            data = phase_index(vault, args.phase)
        elif args.phase == "query":
            data = phase_query(vault, args.queries, modes)
        elif args.phase == "faiss":
            from brain.config import index_dir

            data = phase_faiss(index_dir(vault), args.queries)
        else:
            parser.error(f"unknown phase {args.phase}")
        print(json.dumps(data))
        return 0
    temporary = args.dir is None
    args.dir = args.dir or tempfile.mkdtemp(prefix="brain-scale-")
    started = time.perf_counter()
    try:
        result = run(args)
    finally:
        if temporary and not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]  # other work on the machine
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"scale-{args.notes}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(summary(result))
    print(f"total {result['seconds']} s; wrote {out / f'scale-{args.notes}.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
