"""Where a warm `brain ask` spends its time, per stage, and a digest of every answer.

One Recaller per set, kept open as `brain serve` keeps it; every query is asked once to warm
it (model, names, link graph, the query's vector), then ``--runs`` times in the default mode
with the reranker's pool (k = pool, as bench/quality_ablation.py asks). Per stage (the
pipeline's own ``RecallResult.timings_ms``) it reports the share of the time, p50 and p95, in
CPU time of the asking thread (``--clock cpu``, the default: the machine is shared, wall time
is noisy) or wall time; the slowest queries with their slowest stage; and with ``--profile``
the functions cProfile finds the most time in. ``--statements`` counts the SQL statements each
timed ask runs on the store's connection (an ``sqlite3`` trace callback, so its times are not
comparable with a run without it): their p50 and max per ask, and the most run, by text.

The digest is every query's ranked notes with their scores (repr of the floats, so "the same"
means bit for bit) and the linked note that brought each in (``via``), per set: ``--save FILE`` writes it, ``--check FILE`` exits 1 naming the
queries whose answer differs. A speed-up must leave it unchanged:

    BRAIN_HOME=/tmp/x-home python bench/ask_profile.py --save /tmp/before.json   # on the old code
    BRAIN_HOME=/tmp/x-home python bench/ask_profile.py --check /tmp/before.json  # on the new

Sets and vaults are bench/quality_ablation.py's (default: all five it reports on).

``--against DIR`` (a checkout of another brain: ``git archive main | tar -x -C DIR``) compares
the two trees: each round runs every set in a child process of each tree, in turns (old first
in odd rounds, this tree first in even ones: the machine's load falls on both), and prints per
set the median over rounds of each tree's p50 and p95 CPU time per ask, their ratio (this tree
/ DIR), and whether every answer of the two trees is the same, bit for bit (exit 1 if not):

    python bench/ask_profile.py --against /tmp/old-tree --rounds 5 --runs 2
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import hashlib
import io
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import time
import types
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import quality_ablation as qa  # noqa: E402 - the sets, their vaults and the settings the bench reports


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def answer_digest(result) -> list:
    """Each ranked note with its scores, and the linked note that brought it in (``via``, shown
    to the user: a change of which seed reached a note must not pass as the same answer)."""
    return [
        [c.path, repr(float(c.score)), repr(float(c.dense_score)), c.via.as_dict() if c.via else None]
        for c in result.results
    ]


class Sampler:
    """Where the CPU time goes, sampled: a SIGPROF each 0.5 ms of the process's CPU time, the
    frame it lands in counted by function (self) and every function on its stack (cumulative).
    cProfile charges each call, so a thousand small calls look costlier than they are: it put a
    step at a fifth of a warm ask that this put at 6%. Enabled and disabled as cProfile is."""

    def __init__(self) -> None:
        import collections
        import signal

        self.own: collections.Counter[str] = collections.Counter()
        self.within: collections.Counter[str] = collections.Counter()
        self.samples = 0
        signal.signal(signal.SIGPROF, self._sample)

    @staticmethod
    def _name(frame) -> str:
        where = frame.f_code.co_filename
        for root in (str(HERE.parent) + "/", "site-packages/"):
            where = where.split(root)[-1]
        return f"{where}:{frame.f_code.co_name}"

    def _sample(self, signum, frame) -> None:
        self.samples += 1
        self.own[self._name(frame)] += 1
        seen = set()
        while frame is not None:
            seen.add(self._name(frame))
            frame = frame.f_back
        self.within.update(seen)

    def enable(self) -> None:
        import signal

        signal.setitimer(signal.ITIMER_PROF, 0.0005, 0.0005)

    def disable(self) -> None:
        import signal

        signal.setitimer(signal.ITIMER_PROF, 0, 0)

    def report(self, top: int) -> str:
        lines = [f"{self.samples} samples of CPU time; share of them in each function (self) and under it"]
        for title, counts in (("self", self.own), ("under", self.within)):
            lines.append(f"  {title}:")
            lines += [f"    {n / max(1, self.samples):6.1%}  {name}" for name, n in counts.most_common(top)]
        return "\n".join(lines)


def run_set(name: str, args, profiler: cProfile.Profile | Sampler | None) -> dict:
    from brain.evaluation.queries import load_queries
    from brain.recall import pipeline
    from brain.recall.opening import open_recaller
    from brain.recall.types import DEFAULT_MODE

    queries_file, vault = qa.SETS[name]
    vault = qa.vault_to_index(vault, Path(args.vault_copies))
    queries = load_queries(queries_file, vault)
    recaller = open_recaller(vault, build=True, progress=False, rerank_model=None)
    if why := qa.not_this_brains(recaller):
        recaller.close()
        sys.exit(f"{name}: the index of {vault} is not the one this brain would build ({why})")
    recaller.embedder = qa.CachedEmbedder(recaller.embedder)
    settings = qa.settings_for({})
    wide = replace(settings, k=max(settings.k, settings.pool))
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    digest: dict[str, list] = {}
    per_query: list[dict] = []
    real_time = pipeline.time
    statements: collections.Counter[str] = collections.Counter()
    per_ask: list[int] = []
    if args.statements:
        recaller.store.conn.set_trace_callback(lambda sql: statements.update((_statement(sql),)))
    try:
        for q in queries:  # warm: the model, the names, the link graph, each query's vector
            digest[q.id] = answer_digest(recaller.ask(q.query, DEFAULT_MODE, wide))
        # The pipeline's stage timers read time.perf_counter: pointed at the clock asked for.
        pipeline.time = types.SimpleNamespace(perf_counter=clock)  # type: ignore[assignment]
        statements.clear()  # the timed asks' only
        for _ in range(args.runs):
            for q in queries:
                if profiler is not None:
                    profiler.enable()
                ran = statements.total()
                started = clock()
                result = recaller.ask(q.query, DEFAULT_MODE, wide)
                total = (clock() - started) * 1000
                per_ask.append(statements.total() - ran)
                if profiler is not None:
                    profiler.disable()
                if answer_digest(result) != digest[q.id]:
                    sys.exit(f"{name}/{q.id}: two asks of one query answered differently")
                stages = {k: v for k, v in result.timings_ms.items() if k not in ("total", "load_embedder", "embed")}
                stages["other"] = max(0.0, total - sum(stages.values()))
                per_query.append({"id": q.id, "query": q.query, "total": total, "stages": stages})
    finally:
        pipeline.time = real_time
        recaller.store.conn.set_trace_callback(None)
        recaller.close()
    out = {"set": name, "queries": len(queries), "digest": digest, "per_query": per_query}
    if args.statements:
        out["statements"] = {"per_ask": per_ask, "most": statements.most_common(args.statements)}
    return out


def _statement(sql: str) -> str:
    """A statement as the trace gives it (its values bound in), its values and lists of them as ``?``."""
    sql = re.sub(r"\bIN \([^()]*\)", "IN (?)", " ".join(sql.split()))
    return re.sub(r"(?<![\w'])-?\d+(\.\d+)?\b", "?", sql)[:100]


def report(out: dict, slowest: int) -> str:
    lines = []
    rows = out["per_query"]
    totals = [r["total"] for r in rows]
    stages = sorted({s for r in rows for s in r["stages"]})
    spent = sum(totals) or 1.0
    lines.append(
        f"## {out['set']}: {out['queries']} queries, {len(rows)} asks; total p50 {pct(totals, 50):.1f} ms,"
        f" p95 {pct(totals, 95):.1f} ms"
    )
    lines.append(f"  {'stage':<14}{'share':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    by_share = sorted(stages, key=lambda s: -sum(r["stages"].get(s, 0.0) for r in rows))
    for s in by_share:
        values = [r["stages"].get(s, 0.0) for r in rows]
        share = sum(values) / spent
        lines.append(f"  {s:<14}{share:>7.1%}{pct(values, 50):>9.2f}{pct(values, 95):>9.2f}{max(values):>9.2f}")
    worst: dict[str, dict] = {}
    for r in rows:  # a query's slowest ask of the runs
        if r["id"] not in worst or r["total"] > worst[r["id"]]["total"]:
            worst[r["id"]] = r
    lines.append(f"  the {slowest} slowest queries (their slowest stage):")
    for r in sorted(worst.values(), key=lambda r: -r["total"])[:slowest]:
        stage = max(r["stages"], key=r["stages"].get)
        lines.append(f"    {r['total']:7.1f} ms  {stage} {r['stages'][stage]:.1f} ms  {r['id']}: {r['query'][:60]!r}")
    if "statements" in out:
        counts, asks = out["statements"]["per_ask"], max(1, len(rows))
        lines.append(f"  SQL statements per ask: p50 {pct(counts, 50)}, max {max(counts)}; the most run, per ask:")
        lines += [f"    {n / asks:7.1f}  {sql}" for sql, n in out["statements"]["most"]]
    return "\n".join(lines)


def against(args, names: list[str]) -> int:
    """Each set asked by this tree and by ``args.against`` in turns; the ratios, and whether the
    answers are the same."""
    trees = {"old": Path(args.against).resolve(), "this": HERE.parent}
    command = [sys.executable, __file__, "--sets", ",".join(names), "--runs", str(args.runs), "--json"]
    command += ["--vault-copies", args.vault_copies]
    p50: dict[tuple[str, str], list[float]] = {}
    p95: dict[tuple[str, str], list[float]] = {}
    digests: dict[str, dict] = {}
    for round_ in range(args.rounds):
        for tree in ("old", "this") if round_ % 2 == 0 else ("this", "old"):
            env = {**os.environ, "PYTHONPATH": str(trees[tree])}
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"{tree} ({trees[tree]}) failed: {done.stderr.strip()[-2000:]}")
            got = json.loads(done.stdout.strip().splitlines()[-1])
            for name, out in got.items():
                p50.setdefault((name, tree), []).append(pct(out["totals"], 50))
                p95.setdefault((name, tree), []).append(pct(out["totals"], 95))
                digests.setdefault(tree, {})[name] = out["digest"]
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print(f"CPU time per warm ask, median of {args.rounds} rounds of {args.runs} asks a query; old: {trees['old']}")
    print(
        f"  {'set':<16}{'queries':>8}{'old p50':>9}{'this p50':>9}{'ratio':>7}{'old p95':>9}{'this p95':>9}{'ratio':>7}"
    )
    differ = []
    for name in names:
        a50, b50 = statistics.median(p50[name, "old"]), statistics.median(p50[name, "this"])
        a95, b95 = statistics.median(p95[name, "old"]), statistics.median(p95[name, "this"])
        old_digest, this_digest = digests["old"][name], digests["this"][name]
        differ += [f"{name}/{q}" for q in old_digest if old_digest[q] != this_digest.get(q)]
        print(
            f"  {name:<16}{len(old_digest):>8}{a50:>9.2f}{b50:>9.2f}{b50 / a50:>7.2f}{a95:>9.2f}{b95:>9.2f}{b95 / a95:>7.2f}"
        )
    if differ:
        print(f"{len(differ)} answers differ between the trees: {', '.join(differ[:20])}")
        return 1
    print("every answer of the two trees is the same (notes, order, scores bit for bit)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=qa.DEFAULT_SETS, help="comma-separated: " + ", ".join(qa.SETS))
    parser.add_argument("--runs", type=int, default=1, help="timed asks of each query (default: 1)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's N costliest functions")
    parser.add_argument(
        "--sample", type=int, default=0, metavar="N", help="print the N functions most CPU samples fall in"
    )
    parser.add_argument(
        "--statements", type=int, default=0, metavar="N", help="count SQL statements per ask; print the N most run"
    )
    parser.add_argument("--save", metavar="FILE", help="write the answers' digest to FILE (JSON)")
    parser.add_argument("--check", metavar="FILE", help="exit 1 if an answer differs from FILE's digest")
    parser.add_argument("--vault-copies", default=str(qa.default_copies()), metavar="DIR")
    parser.add_argument("--against", metavar="DIR", help="compare with another brain's tree (see above)")
    parser.add_argument("--rounds", type=int, default=5, help="with --against: turns of the two trees")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # a child of --against
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("BRAIN_EMBED_MODEL", qa.packaged_minilm())
    os.environ["BRAIN_RERANK_MODEL"] = "none"
    names = args.sets.split(",")
    unknown = [n for n in names if n not in qa.SETS]
    if unknown:
        sys.exit(f"no set named {', '.join(map(repr, unknown))}: the sets are {', '.join(qa.SETS)}")
    if args.against:
        return against(args, names)
    profiler: cProfile.Profile | Sampler | None = None
    if args.sample:
        profiler = Sampler()
    elif args.profile:
        profiler = cProfile.Profile(time.thread_time if args.clock == "cpu" else time.perf_counter)
    digests: dict[str, dict] = {}
    totals: dict[str, dict] = {}
    for name in names:
        out = run_set(name, args, profiler)
        digests[name] = out["digest"]
        if args.json:
            totals[name] = {"totals": [r["total"] for r in out["per_query"]], "digest": out["digest"]}
            continue
        print(report(out, args.slowest), flush=True)
    if args.json:
        print(json.dumps(totals))
        return 0
    whole = hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]
    print(f"digest of every answer: {whole}")
    if isinstance(profiler, Sampler):
        print(profiler.report(args.sample))
    elif profiler is not None:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(args.profile)
        print(text.getvalue())
    if args.save:
        Path(args.save).write_text(json.dumps(digests, sort_keys=True, indent=0))
    if args.check:
        before = json.loads(Path(args.check).read_text())
        differ = [
            f"{s}/{q}" for s in digests for q in digests[s] if before.get(s, {}).get(q, digests[s][q]) != digests[s][q]
        ]
        missing = [s for s in digests if s not in before]
        if missing:
            print(f"not in {args.check}: {', '.join(missing)}", file=sys.stderr)
        if differ:
            print(f"{len(differ)} answers differ from {args.check}: {', '.join(differ[:20])}", file=sys.stderr)
            return 1
        print(f"every answer is the one in {args.check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
