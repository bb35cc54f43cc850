"""Scale test of brain's own data structures, apart from the model (figures, not asserted).

Generates a vault of N notes (default 100,000; ~5 chunks each, wikilinks between notes, some
aliases and partial-path links) and indexes it with a fast deterministic fake embedder
(``benchfake:384``: a vector seeded by a hash of the text), then measures, each phase in its
own process so that peak memory is that phase's own:

    build        first index: wall and CPU time and where they go (scan, parsing, embed,
                 SQLite writes, link resolution, FAISS), peak RSS
    noop         a re-index with nothing changed, in-process; and `brain index` as a whole process,
                 alternating with runs that walk without the helper process (BRAIN_WALK_WORKERS=0)
    change       one note edited, then re-indexed
    names        one note added, one renamed (backlinks and all), one deleted, each re-indexed
                 by itself (what changes names, and so link resolution); then all put back
    serve        what `brain serve` does after a save: the index pass, then a new snapshot of
                 the index, warmed, taking over from the last one what the edit left alone
                 (recall/carry.py); for an edit of words and one that adds a link, beside a
                 snapshot opened afresh
    query        opening a Recaller (update check, FAISS load), then latency p50/p95 per stage
                 of the `vector` and `hybrid+ppr` modes, peak RSS; PageRank by local push
                 against the power iteration (time, top-60 overlap), once with exact dense
                 search and once with the default for the size (IVF above 100,000 chunks)
    past         `brain ask --as-of` a moment after the last run: opening the slice (its dense
                 lane searches the present's FAISS index when most of the slice is the present),
                 its peak RSS, the first query (the slice takes the present's names and link graph
                 and applies the difference: recall/past_carry.py) and warm p50/p95; twice, first
                 with nothing kept on disk (the present's are built, then kept), then as the
                 next runs find them
    faiss        the approximate (IVF) index brain builds against exact search: build time,
                 latency, recall@10 on the bench's vectors and on clustered ones
    edits        many saves in a row (``--edits``, 300), one note each, each re-indexed, in
                 one process: p50 / p95 / max, the slowest one's stages, the saves that started
                 rebuilding the BM25 postings in the background (once the chunks changed since
                 pass 0.5% of them; a run waited for it until stop 38: 49 s). The stalls no
                 single edit shows: FTS5 merging a whole level at once

The machine is shared (2 CPUs, other work running): every timing is printed with the load
average, and CPU seconds beside wall seconds where it matters. The build is run once and the
work folder kept: later runs reuse the index for the other phases (``--phases``), and the
figures of every phase are kept in ``<dir>/results-<notes>.json``. With ``--before`` (default
bench/scale-before-<notes>.json when it exists: main before issue 16) the summary puts the
figures of the issue's table beside their goals, with the ratio of each to the before-figure and to
its goal.

    python bench/scale.py --notes 10000 --dir /tmp/brain-scale           # quick (minutes)
    python bench/scale.py --dir /tmp/brain-scale                          # 100,000 notes
    python bench/scale.py --dir /tmp/brain-scale --phases query,faiss     # reuse the index
    python bench/scale.py --dir /tmp/brain-scale --phases build --rebuild # measure a build again

Writes bench/out/scale-<notes>.json and prints a summary.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import logging
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


def _measure_this_checkout() -> None:
    """The brain of this checkout, in this process and those it starts (`brain` itself too),
    not the one the environment has installed (a git worktree's bench measured main's code)."""
    import importlib.util

    spec = importlib.util.find_spec("brain")
    if spec is not None and spec.origin and Path(spec.origin).resolve().parent.parent == HERE.parent:
        return  # installed from here: no path added (a no-op `brain index` is timed as installed)
    sys.path.insert(0, str(HERE.parent))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)


_measure_this_checkout()
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

    def wrap_generator(self, owner, name: str, label: str) -> None:
        """Time spent inside a generator's steps (waiting included), not in its consumer."""
        original = getattr(owner, name)
        timers = self

        def wrapper(*args, **kwargs):
            iterator = original(*args, **kwargs)
            while True:
                started = time.perf_counter()
                try:
                    item = next(iterator)
                except StopIteration:
                    return
                finally:
                    timers.seconds[label] += time.perf_counter() - started
                timers.calls[label] += 1
                yield item

        setattr(owner, name, wrapper)

    def as_dict(self) -> dict:
        return {
            k: {"s": round(v, 2), "calls": self.calls[k]} for k, v in sorted(self.seconds.items(), key=lambda x: -x[1])
        }


def _instrument_indexer() -> Timers:
    from brain.index import changes, indexer, parsing, postings_due, store, vectors

    t = Timers()
    t.wrap(changes, "plan", "plan (scan + note stats)")
    t.wrap(changes, "read_note_bytes", "read files")
    t.wrap_generator(parsing.Parser, "parsed", "parsing (main process: parsing, or waiting on workers)")
    t.wrap(indexer._Run, "_flush", "flush (embed + SQLite writes)")
    t.wrap(indexer, "resolve_links", "resolve links")
    t.wrap(store.IndexStore, "restore_indexes", "indexes made after a first build's writes")
    t.wrap(vectors, "sync", "FAISS sync (delta, or load/add/save)")
    t.wrap(vectors.VectorIndex, "save", "FAISS save (whole)")
    t.wrap(vectors, "write_delta", "FAISS delta write")
    t.wrap(vectors.VectorIndex, "load_file", "FAISS load")
    t.wrap(vectors.VectorIndex, "rebuild", "FAISS rebuild from SQLite")
    t.wrap(postings_due._Child, "start", "lexical postings: a child started to build them")
    t.wrap(postings_due._Child, "finish", "lexical postings: the wait for that child after the rest of the run")
    return t


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _load() -> list[float]:
    return [round(x, 1) for x in os.getloadavg()]


SETTLE_MAX_S = 120


def _settle() -> float:
    """Wait, after the build, until the last minute's load average says a CPU is free again
    (at most ``SETTLE_MAX_S``): the build's own load (2.0-2.3 on two CPUs) otherwise switches
    the walk's helper off (``walk_helper.wanted``) in the phases after it, and they measured a
    machine the bench itself had just loaded. Returns the seconds waited."""
    started = time.monotonic()
    limit = (os.cpu_count() or 1) - 0.5
    while os.getloadavg()[0] >= limit and time.monotonic() - started < SETTLE_MAX_S:
        time.sleep(2)
    waited = round(time.monotonic() - started, 1)
    print(f"waited {waited} s for the build's load to settle (load {_load()})", file=sys.stderr)
    return waited


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def _queries(n: int) -> list[str]:
    rng = random.Random("brain-scale-queries")
    vocab = _vocabulary()
    return [f"how does {' '.join(rng.choices(vocab, k=4))} relate to {rng.choice(vocab)}" for _ in range(n)]


def phase_index(vault: Path, label: str) -> dict:
    from brain.index.indexer import index_vault

    timers = _instrument_indexer()
    embedder = BenchFakeEmbedder()
    load_before = _load()
    cpu = _cpu()
    started = time.perf_counter()
    report = index_vault(vault, embedder=embedder, progress=False)
    seconds = time.perf_counter() - started
    stages = timers.as_dict()
    stages["embed (fake)"] = {"s": round(embedder.seconds, 2), "calls": embedder.count}
    return {
        "phase": label,
        "seconds": round(seconds, 2),
        "cpu_s": round(_cpu() - cpu, 2),
        "workers_cpu_s": round(_cpu(resource.RUSAGE_CHILDREN), 2),
        "embed_s": round(embedder.seconds, 2),
        "notes": report.notes,
        "chunks": report.chunks,
        "embedded": report.embedded,
        "links": report.links,
        "stages": stages,
        "peak_rss_mb": _peak_rss_mb(),
        "load_average": load_before,
        "load_average_after": _load(),
        "chunks_per_s": round(report.embedded / seconds, 1) if report.embedded else None,
    }


def phase_edits(vault: Path, notes: int, count: int) -> dict:
    """``count`` saves in a row, each of one note (a line appended) and each followed by a
    re-index, in one process as a server's watcher runs them; the notes put back after, untimed."""
    from brain.index import background, fts_merge
    from brain.index.indexer import index_vault

    if os.environ.get("BENCH_FTS_MERGE") == "off":  # FTS5's merges left to FTS5 alone, as before stop 38
        fts_merge.START_AT = 10**9

    timers = _instrument_indexer()
    embedder = BenchFakeEmbedder()
    rng = random.Random("brain-scale-edits")
    in_background: dict[str, list[int]] = {}  # the saves that started work in the background, by its name
    real_start = background.start

    def start(work, directory):
        process = real_start(work, directory)
        if process is not None:
            in_background.setdefault(work.name, []).append(len(times))
        return process

    background.start = start
    originals: dict[Path, bytes] = {}
    times: list[float] = []
    slowest: dict = {}
    slow: list[list] = []  # [edit, seconds, its longest stage, that stage's seconds] of each over 1 s
    load_before = _load()
    try:
        for i in range(count):
            path = vault / note_path(rng.randrange(notes))
            originals.setdefault(path, path.read_bytes())
            path.write_bytes(path.read_bytes() + f"\nAn edit of the edits phase, the {i}th.\n".encode())
            before = dict(timers.seconds)
            started = time.perf_counter()
            index_vault(vault, embedder=embedder, progress=False)
            times.append(time.perf_counter() - started)
            if times[-1] >= 1.0 or not slowest or times[-1] > slowest["seconds"]:
                spent = {name: s - before.get(name, 0.0) for name, s in timers.seconds.items()}
                stages = {name: {"s": round(s, 2)} for name, s in spent.items() if s >= 0.05}
                if times[-1] >= 1.0:  # each slow one, by its longest stage
                    longest = max(stages.items(), key=lambda kv: kv[1]["s"], default=("-", {"s": 0.0}))
                    slow.append([i, round(times[-1], 2), longest[0], longest[1]["s"]])
                if not slowest or times[-1] > slowest["seconds"]:
                    slowest = {"edit": i, "seconds": round(times[-1], 2), "stages": stages}
    finally:
        background.start = real_start
        for path, data in originals.items():
            path.write_bytes(data)
        index_vault(vault, embedder=embedder, progress=False)
    return {
        "phase": "edits",
        "postings_builds_at": in_background.get("postings", []),
        "fts_merges_at": in_background.get("fts-merge", []),
        "count": len(times),
        "p50_s": round(statistics.median(times), 3),
        "p95_s": _pct(times, 0.95),
        "max_s": round(max(times), 2),
        "over_1s": len(slow),
        "over_1s_at": slow[:20],
        "seconds": [round(t, 3) for t in times],
        "slowest": slowest,
        "load_average": load_before,
        "load_average_after": _load(),
    }


def phase_serve(vault: Path, notes: int) -> dict:
    """A save while `brain serve` runs: the watcher's index pass, then the new snapshot (opened
    with the one before, as the server does), for two edits of one note; put back after."""
    from brain.index.indexer import index_vault
    from brain.recall.opening import open_snapshot

    embedder = BenchFakeEmbedder()
    root = vault.resolve()
    target = vault / note_path(notes // 3 + 7)
    original = target.read_bytes()
    load_before = _load()

    def snapshot(previous=None):
        started = time.perf_counter()
        recaller = open_snapshot(root, embedder, rerank_model=None, previous=previous)
        return recaller, round(time.perf_counter() - started, 3)

    def edit(text: bytes, previous) -> tuple[dict, object]:
        target.write_bytes(original + text)
        started = time.perf_counter()
        index_vault(vault, embedder=embedder, progress=False)
        index_s = round(time.perf_counter() - started, 3)
        recaller, open_s = snapshot(previous)
        taken = said.last
        return {
            "index_s": index_s,
            "snapshot_s": open_s,
            "total_s": round(index_s + open_s, 3),
            "taken": taken,
        }, recaller

    out: dict = {"phase": "serve", "load_average": load_before}
    said = _Said()
    logger = logging.getLogger("brain")
    logger.addHandler(said)
    logger.setLevel(logging.INFO)
    try:
        index_vault(vault, embedder=embedder, progress=False)  # a server has made passes before: imports paid
        first, out["fresh_snapshot_s"] = snapshot()
        out["words"], second = edit(b"\nOne more line of plain words, and nothing else.\n", first)
        out["link"], third = edit(f"\nSee [[note-{notes // 7:06d}]].\n".encode(), second)
        for recaller in (first, second, third):
            recaller.close()
    finally:
        target.write_bytes(original)
        index_vault(vault, embedder=embedder, progress=False)
    out["peak_rss_mb"] = _peak_rss_mb()
    out["load_average_after"] = _load()
    return out


class _Said(logging.Handler):
    """What open_snapshot says it took over from the last snapshot."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "taken over" in message:
            self.last = message.split(": ", 1)[-1].replace(" taken over from the last one", "")


def phase_open(vault: Path) -> dict:
    """Opening a recaller (the update check, then the vector files) in a process of its own,
    as `brain ask` without a server does; nothing asked."""
    from brain.recall.opening import open_recaller

    load_before = _load()
    started = time.perf_counter()
    recaller = open_recaller(vault, embedder=BenchFakeEmbedder(), update=True, rerank_model=None)
    open_s = time.perf_counter() - started
    out = {"open_s": round(open_s, 3), "open_stages_ms": dict(recaller.timings_ms), "load_average": load_before}
    recaller.close()
    return out


OPENS = 3  # fresh processes that open a recaller, for the median (one open moves by half, run to run)
PAST_QUERIES = 20


def phase_past(vault: Path, modes: list[str]) -> dict:
    """`brain ask --as-of` a moment after the last run (the slice is the present, read as the
    past is): opening it, its peak RSS, the first query (the slice's names and link graph: the
    present's, from the disk cache or built and kept on closing, with the difference applied)
    and warm queries, in a process of its own."""
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    load_before = _load()
    started = time.perf_counter()
    recaller = open_recaller(vault, embedder=BenchFakeEmbedder(), update=False, rerank_model=None, as_of=time.time())
    out: dict = {
        "phase": "past",
        "load_average": load_before,
        "open_s": round(time.perf_counter() - started, 2),
        "open_stages_ms": dict(recaller.timings_ms),
        "peak_rss_after_open_mb": _peak_rss_mb(),
        "modes": {},
    }
    texts, settings = _queries(PAST_QUERIES + 1), RecallSettings(k=12)
    for mode in modes:
        t0 = time.perf_counter()
        recaller.ask(texts[0], mode, settings)
        first_ms = (time.perf_counter() - t0) * 1000
        totals = []
        for text in texts[1:]:
            t0 = time.perf_counter()
            recaller.ask(text, mode, settings)
            totals.append((time.perf_counter() - t0) * 1000)
        out["modes"][mode] = {"first_ms": round(first_ms, 1), "p50_ms": _pct(totals, 0.5), "p95_ms": _pct(totals, 0.95)}
    started = time.perf_counter()
    recaller.close()  # keeps on disk what it built of the present's names and link graph, for the next run
    out["close_s"] = round(time.perf_counter() - started, 2)
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def phase_query(vault: Path, queries: int, modes: list[str]) -> dict:
    from brain.recall import lexical
    from brain.recall import ppr as ppr_stage
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    load_before = _load()
    started = time.perf_counter()
    recaller = open_recaller(vault, embedder=BenchFakeEmbedder(), update=True, rerank_model=None)
    open_s = time.perf_counter() - started
    rss_open = _peak_rss_mb()
    texts = _queries(queries)
    settings = RecallSettings(k=12)
    out = {
        "phase": "query",
        "dense_index": recaller.vectors.kind,
        "load_average": load_before,
        "open_s": round(open_s, 2),
        "open_stages_ms": dict(recaller.timings_ms),
        "peak_rss_after_open_mb": rss_open,
        "modes": {},
    }
    for mode in modes:
        recaller.ask(texts[0], mode, settings)  # warm: the link graph, the names, the pages
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
    # PageRank: the local push against the power iteration, from the seeds hybrid+ppr uses.
    graph = recaller.link_graph()
    push_ms, power_ms, overlap, same20 = [], [], [], 0
    for text in texts[:50]:
        state = recaller.prepare(text, settings)
        hits = lexical.lexical_search(recaller.store, state.query, settings.depth)
        seeds = ppr_stage.seed_weights([[c.note_id for c in state.lanes["dense"]], [c.note_id for c in hits]], 15)
        t0 = time.perf_counter()
        pushed = graph.rank(seeds, settings.depth, method="push", degree_norm=settings.ppr_degree_norm)
        t1 = time.perf_counter()
        exact = graph.rank(seeds, settings.depth, method="power", degree_norm=settings.ppr_degree_norm)
        t2 = time.perf_counter()
        push_ms.append((t1 - t0) * 1000)
        power_ms.append((t2 - t1) * 1000)
        overlap.append(len({n for n, _ in pushed} & {n for n, _ in exact}) / max(1, len(exact)))
        same20 += [n for n, _ in pushed[:20]] == [n for n, _ in exact[:20]]
    out["ppr"] = {
        "push_p50_ms": _pct(push_ms, 0.5),
        "power_p50_ms": _pct(power_ms, 0.5),
        "top60_overlap_mean": round(statistics.fmean(overlap), 4),
        "top60_overlap_min": round(min(overlap), 4),
        "top20_identical_share": round(same20 / len(overlap), 3),
        "graph_notes": graph.size,
        "graph_links": graph.edges,
    }
    recaller.close()
    out["peak_rss_mb"] = _peak_rss_mb()
    out["load_average_after"] = _load()
    return out


def phase_faiss(index_dir: Path, queries: int) -> dict:
    """The IVF index brain builds above EXACT_UP_TO, against exact search, on the stored vectors
    (from the fake embedder: random directions, the hardest case for any approximate index)
    and on a clustered set of the same size, closer to what real embeddings look like."""
    import faiss
    import numpy as np

    from brain.index import vectors as brain_vectors
    from brain.index.store import IndexStore

    store = IndexStore.open(index_dir, create=False)
    try:
        dim = int(store.get_meta("dim") or 384)
        ids, stored = brain_vectors._stored_vectors(store, None, dim)
    finally:
        store.close()
    n = len(ids)
    embedder = BenchFakeEmbedder()
    bench_queries = np.stack([embedder.embed_query(t) for t in _queries(queries)])
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((max(1, n // 250), dim)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    clustered = centers[rng.integers(0, len(centers), n)] + 0.06 * rng.standard_normal((n, dim)).astype(np.float32)
    clustered /= np.linalg.norm(clustered, axis=1, keepdims=True)
    near = clustered[rng.choice(n, queries)] + 0.06 * rng.standard_normal((queries, dim)).astype(np.float32)
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    out: dict = {"vectors": n, "dim": dim, "nprobe": brain_vectors.IVF_NPROBE, "load_average": _load()}
    faiss.omp_set_num_threads(1)  # as brain searches: one query, one thread
    for name, data, qs in (("bench vectors", stored, bench_queries), ("clustered vectors", clustered, near)):
        flat = faiss.IndexFlatIP(dim)
        flat.add(data)
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(os.cpu_count() or 1)
        t0 = time.perf_counter()
        ivf = brain_vectors._ivf(np.arange(n, dtype=np.int64), data, dim)
        build_s = time.perf_counter() - t0
        faiss.omp_set_num_threads(threads)
        params = faiss.SearchParametersIVF()
        params.nprobe = brain_vectors.IVF_NPROBE
        times: dict[str, list[float]] = {"exact": [], "ivf": []}
        for q in qs:
            row = q.reshape(1, -1)
            t0 = time.perf_counter()
            flat.search(row, 240)
            t1 = time.perf_counter()
            ivf.search(row, 240, params=params)
            t2 = time.perf_counter()
            times["exact"].append((t1 - t0) * 1000)
            times["ivf"].append((t2 - t1) * 1000)
        _, truth = flat.search(qs, 10)
        _, got = ivf.search(qs, 10, params=params)
        recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(truth, got)]))
        out[name] = {
            "lists": int(ivf.nlist),
            "build_s": round(build_s, 1),
            "exact_p50_ms": _pct(times["exact"], 0.5),
            "ivf_p50_ms": _pct(times["ivf"], 0.5),
            "ivf_p95_ms": _pct(times["ivf"], 0.95),
            "recall@10": round(recall, 3),
        }
        del flat, ivf
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


# ----- driver -----------------------------------------------------------------------------

PHASES = ("build", "noop", "change", "names", "serve", "query", "past", "faiss", "edits")
EDITS = 300  # saves in a row in the edits phase
NAME_STEPS = ("add", "rename", "delete")


def _builds_done(vault: Path) -> None:
    """Wait for the lexical postings' bases being built in the background (by this phase's
    passes, or a server's): the next phase measures without one beside it."""
    from brain.config import index_dir
    from brain.index import background, fts_merge, postings_due

    background.wait_for_all()
    directory = index_dir(vault)
    if directory.is_dir():
        for work in (postings_due.BUILD, fts_merge.MERGE):
            with background.held(directory, work.name, wait=True):
                pass


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


def _db_free_mb(path: Path) -> float | None:
    """The free pages inside index.db: left by a large rewrite (FTS5 merging its biggest
    segments, a history prune), reused by later writes, but part of the file's size."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{path / 'index.db'}?mode=ro", uri=True)
        try:
            size = conn.execute("PRAGMA page_size").fetchone()[0]
            return round(conn.execute("PRAGMA freelist_count").fetchone()[0] * size / 1e6, 1)
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def _bare_walk_s(vault: Path) -> float:
    """The floor under a no-op run: one os.scandir walk with one stat per file and nothing else
    (what any tool that notices edits without a watcher pays), the median of three."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        folders = [str(vault)]
        while folders:
            with os.scandir(folders.pop()) as listing:
                for entry in listing:
                    if entry.is_dir():
                        folders.append(entry.path)
                    else:
                        entry.stat()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 2)


def _brain_index(vault: Path, env: dict) -> tuple[float, float]:
    """`brain index` as a user runs it, a whole process: (wall seconds, CPU seconds)."""
    cpu = _cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*_brain_cli(), "index", "--vault", str(vault), "--json"], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"brain index failed: {proc.stderr[-2000:]}")
    return wall, _cpu(resource.RUSAGE_CHILDREN) - cpu


def _names(args, vault: Path, env: dict) -> dict:
    """Add a note, rename one, delete one, each followed by a re-index in its own process (the
    names a link can match change, which a content edit never does); then put the vault back
    as it was, untimed. The renamed and deleted notes have backlinks (~5 each), which dangle."""
    n = args.notes
    added = vault / "inbox" / "scale-added-note.md"
    renamed = vault / note_path(n // 4)
    renamed_to = renamed.with_name(renamed.stem + "-renamed.md")
    deleted = vault / note_path(n // 5 + 1)
    if added.exists() or renamed_to.exists() or not renamed.exists() or not deleted.exists():
        raise SystemExit(f"names: {vault} is not as generated (a names phase left unfinished?)")
    deleted_text = deleted.read_text(encoding="utf-8")
    rng = random.Random("brain-scale-names")
    links = " ".join(f"[[note-{rng.randrange(n):06d}]]" for _ in range(5))

    def add() -> None:
        added.parent.mkdir(parents=True, exist_ok=True)
        added.write_text(f"# A new note\n\nWritten by the names phase, linking {links}.\n", encoding="utf-8")

    out: dict = {}
    for label, change in (
        ("add", add),
        ("rename", lambda: renamed.rename(renamed_to)),
        ("delete", deleted.unlink),
    ):
        change()
        out[label] = _child(args, label, env)
    renamed_to.rename(renamed)
    deleted.write_text(deleted_text, encoding="utf-8")
    added.unlink()
    added.parent.rmdir()
    out["put_back_s"] = _child(args, "put-back", env)["seconds"]
    return out


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
    env.pop("BRAIN_DENSE_INDEX", None)
    results_file = work / f"results-{args.notes}.json"
    result: dict = json.loads(results_file.read_text()) if results_file.exists() else {}
    result.update(notes=args.notes, cpus=os.cpu_count())
    result.setdefault("runs", []).append({"started": time.strftime("%Y-%m-%d %H:%M"), "load_average": _load()})

    def save() -> None:
        results_file.write_text(json.dumps(result, indent=1), encoding="utf-8")

    import brain
    from brain.config import index_dir

    # Timed as installed: pip compiles brain's bytecode at install, and a process that must
    # compile the modules it imports (PYTHONDONTWRITEBYTECODE set, or a source newer than its
    # cache) spends ~0.05 s of a no-op `brain index` doing so.
    compileall.compile_dir(Path(brain.__file__).parent, quiet=1)
    os.environ["BRAIN_HOME"] = str(home)
    directory = index_dir(vault)
    phases = [p for p in args.phases.split(",") if p] if args.phases else list(PHASES)
    if "build" in phases and (directory / "index.db").exists() and not args.rebuild:
        print("index kept from an earlier run: not built again (--rebuild to measure a build)", file=sys.stderr)
        phases.remove("build")
    if not (vault / note_path(args.notes - 1)).exists():
        print(f"generating {args.notes} notes in {vault} ...", file=sys.stderr)
        result["generate"] = generate(vault, args.notes)
    if "build" in phases:
        shutil.rmtree(directory, ignore_errors=True)
        print("build ...", file=sys.stderr)
        result["build"] = _child(args, "build", env)
        result["index_files_mb"] = _dir_mb(directory)
        result["index_db_free_mb"] = _db_free_mb(directory)
        save()
        if len(phases) > 1:
            result["settled_s"] = _settle()
    if "noop" in phases:
        print("noop ...", file=sys.stderr)
        _brain_index(vault, env)  # level first: an earlier phase may have left the vector file to convert
        result["noop"] = _child(args, "noop", env)
        runs, alone = [], []
        for _ in range(3):  # alternating with runs that walk without the helper process
            runs.append(_brain_index(vault, env))
            alone.append(_brain_index(vault, {**env, "BRAIN_WALK_WORKERS": "0"}))
        result["noop_cli_s"] = {
            "runs": [round(w, 2) for w, _ in runs],
            "median": round(statistics.median(w for w, _ in runs), 2),
            "cpu_median": round(statistics.median(c for _, c in runs), 2),
            "no_walk_helper_median": round(statistics.median(w for w, _ in alone), 2),
            "no_walk_helper_cpu_median": round(statistics.median(c for _, c in alone), 2),
            "load_average": _load(),
            "bare_walk_s": _bare_walk_s(vault),
        }
        save()
    if "change" in phases:
        target = vault / note_path(args.notes // 2)
        with open(target, "a", encoding="utf-8") as f:
            f.write(f"\nEdited at {time.time()}: one more line [[note-{args.notes // 3:06d}]].\n")
        print("change ...", file=sys.stderr)
        result["change"] = _child(args, "change", env)
        save()
    if "names" in phases:
        print("names (add, rename, delete) ...", file=sys.stderr)
        result["names"] = _names(args, vault, env)
        save()
    if "serve" in phases:
        print("serve (an edit, then a new snapshot) ...", file=sys.stderr)
        result["serve"] = _child(args, "serve", env)
        save()
    if "query" in phases:
        for dense in ("exact", "auto"):
            print(f"query (dense index: {dense}) ...", file=sys.stderr)
            env_dense = {**env, "BRAIN_DENSE_INDEX": dense}
            wall, _ = _brain_index(vault, env_dense)  # converts the vector file if the kind changes
            result[f"convert_{dense}_s"] = round(wall, 1)
            result[f"query_{dense}"] = _child(args, "query", env_dense)
            save()
        result["opens"] = [_child(args, "open", env) for _ in range(OPENS)]  # the default index, auto
        save()
        result["index_files_mb"] = _dir_mb(directory)
        result["index_db_free_mb"] = _db_free_mb(directory)
    if "past" in phases:
        # First with nothing kept on disk (the first --as-of after an index change: it builds the
        # present's names and link graph, patches them, and keeps them), then as the next runs are.
        from brain.index.files import RECALL_CACHE_FILE

        print("past (brain ask --as-of) ...", file=sys.stderr)
        (directory / RECALL_CACHE_FILE).unlink(missing_ok=True)
        result["past_nothing_kept"] = _child(args, "past", env)
        result["past"] = _child(args, "past", env)
        save()
    if "faiss" in phases:
        print("faiss (IVF against exact) ...", file=sys.stderr)
        result["faiss"] = _child(args, "faiss", env)
        save()
    if "edits" in phases:  # last: it moves the postings' and FTS5's state the other phases measure
        print(f"edits ({args.edits} saves in a row) ...", file=sys.stderr)
        result["edits"] = _child(args, "edits", env, ["--edits", str(args.edits)])
        save()
    save()
    return result


# ----- the summary --------------------------------------------------------------------------


def _get(data: dict | None, *keys, default=None):
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


def _build_parts(build: dict | None) -> dict | None:
    """Brain's own build time (without the fake embedder), SQLite writes, parsing."""
    if not build:
        return None
    stages = build.get("stages", {})
    embed = _get(stages, "embed (fake)", "s", default=0.0)
    flush = _get(stages, "flush (embed + SQLite writes)", "s", default=0.0)
    parse = sum(v["s"] for k, v in stages.items() if k.startswith(("parse", "parsing", "chunk")))
    return {"own": build["seconds"] - embed, "sqlite": flush - embed, "parse": parse}


def _table(r: dict, before: dict | None) -> list[str]:
    """The issue's table: before (main, from the before-figures file), now, goal, now / before
    (below 1 is faster or smaller) and now / goal (at most 1 meets it)."""
    q_now = r.get("query_auto") or r.get("query_exact") or {}
    q_exact = r.get("query_exact") or {}
    q_before = _get(before, "query_auto") or _get(before, "query") or {}
    # (row, before, now, goal, before value, now value, goal value)
    rows: list[tuple[str, str, str, str, float | None, float | None, float]] = []

    def mode(q: dict, name: str) -> dict:
        return _get(q, "modes", name) or {}

    def hybrid(q: dict) -> str:
        m = mode(q, "hybrid+ppr")
        if not m:
            return "-"
        st = m.get("stages_p50_ms", {})
        # Every lane and stage of a millisecond or more, the slowest first (the lanes vary by version).
        stages = sorted(((v, k) for k, v in st.items() if k not in ("total", "embed") and v >= 1), reverse=True)
        parts = ", ".join(f"{k} {v:.0f}" for v, k in stages)
        return f"{m['p50_ms']:.1f} / {m['p95_ms']:.1f} ms ({parts})"

    hb, hn = mode(q_before, "hybrid+ppr"), mode(q_now, "hybrid+ppr")
    rows.append(
        (
            "hybrid+ppr warm p50 / p95",
            hybrid(q_before),
            hybrid(q_now),
            "<= 50 / 80 ms",
            hb.get("p50_ms"),
            hn.get("p50_ms"),
            50,
        )
    )
    rows.append(
        (
            "  (p95)",
            f"{hb['p95_ms']:.1f} ms" if hb else "-",
            f"{hn['p95_ms']:.1f} ms" if hn else "-",
            "<= 80 ms",
            hb.get("p95_ms"),
            hn.get("p95_ms"),
            80,
        )
    )
    v_before, v_now, v_exact = mode(q_before, "vector"), mode(q_now, "vector"), mode(q_exact, "vector")
    rows.append(
        (
            f"vector warm p50 ({q_now.get('dense_index', '?')} dense index)",
            f"{v_before['p50_ms']:.1f} ms" if v_before else "-",
            f"{v_now['p50_ms']:.1f} ms (exact: {v_exact.get('p50_ms', 0):.1f})" if v_now else "-",
            "<= 15 ms",
            v_before.get("p50_ms"),
            v_now.get("p50_ms"),
            15,
        )
    )

    def opening(q: dict) -> str:
        if not q:
            return "-"
        st = q.get("open_stages_ms", {})
        return f"{q['open_s']:.2f} s (update check {st.get('update', 0) / 1000:.2f}, FAISS load {st.get('load_index', 0) / 1000:.2f})"

    opens = r.get("opens") or []
    open_now = q_now.get("open_s")
    open_text = opening(q_now)
    if opens:  # the median of fresh processes, when measured; the query phase's one open beside it
        middle = sorted(opens, key=lambda o: o["open_s"])[len(opens) // 2]
        open_now = middle["open_s"]
        every = ", ".join(f"{o['open_s']:.2f}" for o in opens)
        open_text = f"{opening(middle)}, the median of {len(opens)} fresh processes ({every}; in the query phase {q_now.get('open_s', '-')})"
    rows.append(
        (
            "opening a recaller",
            opening(q_before),
            open_text,
            "<= 0.5 s",
            q_before.get("open_s"),
            open_now,
            0.5,
        )
    )
    nb, nn = _get(before, "noop_cli_s", "median"), _get(r, "noop_cli_s", "median")
    rows.append(
        (
            "no-op `brain index`, whole process",
            f"{nb} s" if nb is not None else "-",
            f"{nn} s (CPU {_get(r, 'noop_cli_s', 'cpu_median')} s; without the walk's helper process"
            f" {_get(r, 'noop_cli_s', 'no_walk_helper_median', default='-')} s,"
            f" CPU {_get(r, 'noop_cli_s', 'no_walk_helper_cpu_median', default='-')} s;"
            f" a bare walk with a stat per file: {_get(r, 'noop_cli_s', 'bare_walk_s', default='-')} s)"
            if nn is not None
            else "-",
            "< 0.5 s",
            nb,
            nn,
            0.5,
        )
    )

    def change(c: dict | None) -> str:
        if not c:
            return "-"
        st = c["stages"]
        faiss_s = _get(st, "FAISS sync (delta, or load/add/save)", "s") or _get(
            st, "FAISS sync (load/add/save)", "s", default=0
        )
        walk = _get(st, "plan (scan + note stats)", "s") or _get(st, "plan (scan + note rows)", "s", default=0)
        return f"{c['seconds']:.2f} s (FAISS {faiss_s:.2f}, links {_get(st, 'resolve links', 's', default=0):.2f}, walk {walk:.2f})"

    rows.append(
        (
            "one changed note",
            change(_get(before, "change")),
            change(r.get("change")),
            "< 1 s",
            _get(before, "change", "seconds"),
            _get(r, "change", "seconds"),
            1,
        )
    )

    for step in NAME_STEPS:
        rows.append(
            (
                f"one note {'added' if step == 'add' else step + 'd'}",
                change(_get(before, "names", step)),
                change(_get(r, "names", step)),
                "< 1 s",
                _get(before, "names", step, "seconds"),
                _get(r, "names", step, "seconds"),
                1,
            )
        )

    def served(sv: dict | None) -> str:
        e = _get(sv, "words")
        if not e:
            return "-"
        return f"{e['total_s']:.2f} s (index pass {e['index_s']:.2f}, new snapshot {e['snapshot_s']:.2f})"

    def in_a_row(e: dict | None) -> str:
        if not e:
            return "-"
        top = sorted(e["slowest"]["stages"].items(), key=lambda kv: -kv[1]["s"])[:2]
        where = ", ".join(f"{name} {stage['s']:.1f}" for name, stage in top)
        return (
            f"{e['count']}: p50 {e['p50_s']:.2f} / p95 {e['p95_s']:.2f} / max {e['max_s']:.2f} s, "
            f"{e['over_1s']} over 1 s (the slowest, edit {e['slowest']['edit']}: {where})"
        )

    rows.append(
        (
            "saves in a row, one note each",
            in_a_row(_get(before, "edits")),
            in_a_row(r.get("edits")),
            "< 1 s each",
            _get(before, "edits", "max_s"),
            _get(r, "edits", "max_s"),
            1,
        )
    )
    rows.append(
        (
            "a save answered by `brain serve`",
            served(_get(before, "serve")),
            served(r.get("serve")),
            "< 1 s",
            _get(before, "serve", "words", "total_s"),
            _get(r, "serve", "words", "total_s"),
            1,
        )
    )

    def build(b: dict | None) -> str:
        parts = _build_parts(b)
        if not parts or not b:
            return "-"
        cpu = f"; CPU {b['cpu_s']} + workers {b.get('workers_cpu_s', 0)}" if "cpu_s" in b else ""
        return f"{parts['own']:.0f} s (SQLite writes {parts['sqlite']:.0f}, parsing {parts['parse']:.0f}{cpu})"

    rows.append(
        (
            "first build, brain's own time",
            build(_get(before, "build")),
            build(r.get("build")),
            "< 100 s",
            (_build_parts(_get(before, "build")) or {}).get("own"),
            (_build_parts(r.get("build")) or {}).get("own"),
            100,
        )
    )

    def per_chunk(res: dict | None) -> tuple[str, float | None]:
        mb = _get(res, "index_files_mb", "index.db")
        n = _get(res, "build", "chunks") or _get(res, "noop", "chunks")
        if mb is None or not n:
            return "-", None
        kb = mb * 1e6 / n / 1e3
        free = (res or {}).get("index_db_free_mb")
        if free:  # the file's size is the figure; what is in use says whether it is only slack
            used = (mb - free) * 1e6 / n / 1e3
            return (
                f"{mb / 1000:.2f} GB ({kb:.1f} KB per chunk; {free / 1000:.2f} GB free pages, {used:.1f} KB in use)",
                kb,
            )
        return f"{mb / 1000:.2f} GB ({kb:.1f} KB per chunk)", kb

    db_before, kb_before = per_chunk(before)
    db_now, kb_now = per_chunk(r)
    rows.append(("index.db size", db_before, db_now, "<= 3 KB per chunk", kb_before, kb_now, 3))
    rss_before, rss_now = q_before.get("peak_rss_mb"), q_now.get("peak_rss_mb")
    rows.append(
        (
            "query peak RSS",
            f"{rss_before} MB" if rss_before else "-",
            f"{rss_now} MB" if rss_now else "-",
            "<= 700 MB",
            rss_before,
            rss_now,
            700,
        )
    )
    ivf = _get(r, "faiss", "clustered vectors") or {}
    ivf_bench = _get(r, "faiss", "bench vectors") or {}
    rows.append(
        (
            "IVF recall@10 against exact",
            "- (exact only)",
            f"{ivf['recall@10']} clustered, {ivf_bench.get('recall@10')} random (IVF {ivf['ivf_p50_ms']} ms)"
            if ivf
            else "-",
            ">= 0.95 (clustered)",
            None,
            ivf.get("recall@10"),
            0.95,
        )
    )
    head = ("", "before (main)", "now", "goal")
    width = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]

    def ratio(a: float | None, b: float | None) -> str:
        return f"{a / b:.2f}" if a is not None and b else "-"

    lines = ["  " + "  ".join(h.ljust(w) for h, w in zip(head, width)) + "  now/before  now/goal"]
    for row in rows:
        cells = "  ".join(c.ljust(w) for c, w in zip(row[:4], width))
        lines.append(f"  {cells}  {ratio(row[5], row[4]):<10}  {ratio(row[5], row[6])}")
    return lines


def _stage_lines(phase: dict) -> list[str]:
    """A timed run's stages of 0.05 s or more, one line each."""
    return [
        f"              {stage['s']:8.2f} s  {name}" for name, stage in phase["stages"].items() if stage["s"] >= 0.05
    ]


def summary(r: dict, before: dict | None) -> str:
    lines = [f"scale: {r['notes']} notes on {r.get('cpus')} CPUs, fake embedder {MODEL}; runs: {r.get('runs')}"]
    if before:
        lines.append(f"before: {before.get('measured_on', 'main')}")
    lines += _table(r, before)
    b = r.get("build")
    if b:
        lines.append(
            f"  build     {b['seconds']:8.1f} s wall, CPU {b.get('cpu_s')} s + workers {b.get('workers_cpu_s')} s,"
            f" load {b.get('load_average')} -> {b.get('load_average_after')}, peak RSS {b['peak_rss_mb']} MB"
        )
        for name, stage in b["stages"].items():
            lines.append(f"              {stage['s']:8.1f} s  {name}")
    nop = r.get("noop")
    if nop:
        lines.append(
            f"  no-op     {nop['seconds']:8.2f} s in-process (CPU {nop.get('cpu_s')} s, load {nop.get('load_average')}),"
            f" peak RSS {nop['peak_rss_mb']} MB; `brain index` whole process {r['noop_cli_s']}"
        )
        lines += _stage_lines(nop)
    for step, st in [("change", r.get("change")), *((step, _get(r, "names", step)) for step in NAME_STEPS)]:
        if not st:
            continue
        lines.append(
            f"  1 {step:<7} {st['seconds']:8.2f} s (CPU {st.get('cpu_s')} s, load {st.get('load_average')}),"
            f" peak RSS {st['peak_rss_mb']} MB"
        )
        lines += _stage_lines(st)
    ed = r.get("edits")
    if ed:
        lines.append(
            f"  edits     {ed['count']} saves in a row: p50 {ed['p50_s']:.2f} s, p95 {ed['p95_s']:.2f} s, max"
            f" {ed['max_s']:.2f} s (load {ed.get('load_average')}); in the background, BM25 postings rebuilt"
            f" from saves {ed.get('postings_builds_at', '-')}, FTS5 merged from saves {ed.get('fts_merges_at', '-')};"
            " each of a second or more:"
        )
        lines += [
            f"              {s:8.2f} s  save {i}: {stage} {stage_s:.2f} s" for i, s, stage, stage_s in ed["over_1s_at"]
        ]
    sv = r.get("serve")
    if sv:
        lines.append(
            f"  serve     a fresh snapshot {sv['fresh_snapshot_s']:.2f} s (load {sv.get('load_average')}),"
            f" peak RSS {sv['peak_rss_mb']} MB; after a save:"
        )
        for edit in ("words", "link"):
            e = sv[edit]
            lines.append(
                f"              {e['total_s']:8.2f} s  an edit of {edit}: index pass {e['index_s']:.2f} s + snapshot"
                f" {e['snapshot_s']:.2f} s (taken over: {e['taken']})"
            )
    for dense in ("exact", "auto"):
        q = r.get(f"query_{dense}")
        if not q:
            continue
        lines.append(
            f"  query, BRAIN_DENSE_INDEX={dense} ({q['dense_index']} base; converting took {r.get(f'convert_{dense}_s')} s):"
            f" open {q['open_s']} s (stages ms: {q['open_stages_ms']}), load {q.get('load_average')}, peak RSS {q['peak_rss_mb']} MB"
        )
        for mode, m in q["modes"].items():
            stages = ", ".join(f"{k} {v}" for k, v in m["stages_p50_ms"].items() if k != "total")
            lines.append(
                f"    {mode:<10} p50 {m['p50_ms']:7.1f} ms  p95 {m['p95_ms']:7.1f} ms   (p50 stages ms: {stages})"
            )
        p = q.get("ppr")
        if p:
            lines.append(
                f"    PageRank over {p['graph_notes']} notes / {p['graph_links']} links: push p50 {p['push_p50_ms']} ms,"
                f" power iteration {p['power_p50_ms']} ms; top-60 overlap mean {p['top60_overlap_mean']} (min"
                f" {p['top60_overlap_min']}), identical top 20 in {p['top20_identical_share']:.0%} of queries"
            )
    for key, said in (
        ("past_nothing_kept", "nothing kept on disk"),
        ("past", "the present's names and link graph kept on disk"),
    ):
        past = r.get(key)
        if not past:
            continue
        lines.append(
            f"  --as-of now, {said}: open {past['open_s']} s (stages ms: {past['open_stages_ms']}), peak RSS after"
            f" open {past['peak_rss_after_open_mb']} MB, at the end {past['peak_rss_mb']} MB, closing (keeping"
            f" what it built) {past.get('close_s')} s, load {past.get('load_average')}"
        )
        for mode, m in past["modes"].items():
            lines.append(
                f"    {mode:<10} first query {m['first_ms']:7.1f} ms, then p50 {m['p50_ms']:7.1f} ms  p95 {m['p95_ms']:7.1f} ms"
            )
    f = r.get("faiss")
    if f:
        lines.append(
            f"  IVF against exact, {f['vectors']} x {f['dim']}, nprobe {f['nprobe']} (load {f.get('load_average')}):"
        )
        for name in ("bench vectors", "clustered vectors"):
            v = f[name]
            lines.append(
                f"    {name:<18} {v['lists']} lists, built in {v['build_s']} s; k=240 p50 exact {v['exact_p50_ms']} ms,"
                f" IVF {v['ivf_p50_ms']} ms (p95 {v['ivf_p95_ms']}); recall@10 {v['recall@10']}"
            )
    if r.get("index_files_mb"):
        lines.append(f"  index files MB: {r['index_files_mb']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--modes", default="vector,hybrid+ppr", help="recall modes to time (any `brain ask --mode`)")
    parser.add_argument("--edits", type=int, default=EDITS, help=f"saves in a row in the edits phase (default {EDITS})")
    parser.add_argument("--dir", help="work folder, kept (default: a temporary one, removed afterwards)")
    parser.add_argument("--phases", help=f"comma-separated, of {','.join(PHASES)} (default: all)")
    parser.add_argument("--rebuild", action="store_true", help="build again even when the work folder has an index")
    parser.add_argument("--before", help="figures of an earlier run (JSON) to print beside these")
    parser.add_argument("--out", default=str(HERE / "out"))
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _register()
    if args.phase:  # a child process: one phase, one JSON line on stdout
        vault = Path(args.dir) / "vault"
        modes = [m for m in args.modes.split(",") if m]
        if args.phase in ("build", "noop", "change", *NAME_STEPS, "put-back"):
            data = phase_index(vault, args.phase)
        elif args.phase == "query":
            data = phase_query(vault, args.queries, modes)
        elif args.phase == "open":
            data = phase_open(vault)
        elif args.phase == "past":
            data = phase_past(vault, modes)
        elif args.phase == "serve":
            data = phase_serve(vault, args.notes)
        elif args.phase == "edits":
            data = phase_edits(vault, args.notes, args.edits)
        elif args.phase == "faiss":
            from brain.config import index_dir

            data = phase_faiss(index_dir(vault), args.queries)
        else:
            parser.error(f"unknown phase {args.phase}")
        _builds_done(vault)
        print(json.dumps(data))
        return 0
    temporary = args.dir is None
    args.dir = args.dir or tempfile.mkdtemp(prefix="brain-scale-")
    before_path = Path(args.before) if args.before else HERE / f"scale-before-{args.notes}.json"
    before = json.loads(before_path.read_text()) if before_path.exists() else None
    started = time.perf_counter()
    try:
        result = run(args)
    finally:
        if temporary:
            shutil.rmtree(args.dir, ignore_errors=True)
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"scale-{args.notes}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(summary(result, before))
    print(f"total {result['seconds']} s; wrote {out / f'scale-{args.notes}.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
