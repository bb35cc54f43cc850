"""What the query path's reads kept per state of the index (``brain/index/query_reads.py``,
``StateReads``) save and cost, on a ``bench/scale.py`` index (figures, not asserted).

Three arms, each in processes of its own, in turns (the order flips each round: the machine's
load falls on all):

    lasting    what the code does: one ``StateReads`` per state of the index, kept across queries
    per-query  a ``StateReads`` per query: the lanes of one query share their reads, nothing
               is kept after it
    off        no ``StateReads``: every read goes to SQLite

and two uses:

    one-shot   a process opens a recaller and asks one question (``brain ask`` without a server)
    warm       one process asks ``--queries`` fresh questions, then the same ones again
               (``brain serve``, ``brain mcp``: questions asked again, or close to), then
               as many new ones, each twice in a row (the second ask timed)

Per arm: CPU time per ask (the process's, p50 / mean), peak RSS and its growth over the
asks, and the share of the keys asked for that were held (the hit rate), per map. Prints the
medians over rounds and each arm's ratio to ``off``.

    python bench/scale.py --notes 20000 --dir /tmp/scale-20k --phases build
    python bench/query_reads_cost.py --dir /tmp/scale-20k --rounds 3
    BRAIN_HOME=/tmp/x-home python bench/query_reads_cost.py --set 13th-age --uses warm

With ``--set`` the questions are the set's (its vault indexed under ``BRAIN_HOME`` with the
configured model, as bench/ask_profile.py does), asked warm only: a one-shot process would
spend its time loading the model.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale  # noqa: E402 - the generated vault, its fake embedder and its queries

ARMS = ("lasting", "per-query", "off")
MAPS = ("chunk_rows", "chunk_note_ids", "out_degrees", "notes_brief", "note_chunk_counts", "note_chunk_codes")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _arm(arm: str, asked: Counter, read: Counter) -> None:
    """Set the arm up in this process, counting the keys asked of each map and those read."""
    from brain.index import query_reads
    from brain.index.store import IndexStore

    for name in MAPS:
        method = getattr(query_reads.StateReads, name)

        def counted(self, keys, reader, _method=method, _name=name):
            asked[_name] += len(set(keys))

            def reading(missing, _reader=reader):
                read[_name] += len(missing)
                return _reader(missing)

            return _method(self, keys, reading)

        setattr(query_reads.StateReads, name, counted)
    if arm == "lasting":
        return

    @contextlib.contextmanager
    def one_query(self) -> Iterator[None]:
        if arm == "off" or self._state_reads is not None:
            yield
            return
        self._state_reads = query_reads.StateReads()
        try:
            yield
        finally:
            self._state_reads = None

    IndexStore.one_query = one_query  # type: ignore[method-assign]


def _held(recaller) -> dict:
    """Entries held by the lasting ``StateReads`` (none in the other arms)."""
    held = recaller.store._unchanged_cache().get("state_reads")
    if held is None:
        return {}
    return {
        "rows": len(held._rows),
        "codes_rows": held._codes_held,
        "note_of": len(held._note_of),
        "degree": len(held._degree),
        "brief": len(held._brief),
        "chunk_count": len(held._chunk_count),
    }


def child(args) -> dict:
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    asked: Counter = Counter()
    read: Counter = Counter()
    _arm(args.child, asked, read)
    if args.caps:
        from brain.index.query_reads import StateReads

        for name, value in zip(
            ("ROWS_LIMIT", "CODES_LIMIT", "NOTES_LIMIT", "LIMIT"), args.caps.split(","), strict=True
        ):
            setattr(StateReads, name, int(value))
    if args.set:  # a real vault of bench/quality_ablation.py's, its model, its questions
        import quality_ablation as qa

        from brain.evaluation.queries import load_queries

        queries_file, vault = qa.SETS[args.set]
        vault = qa.vault_to_index(vault, qa.default_copies())
        texts = [q.query for q in load_queries(queries_file, vault)]
        cpu0 = _cpu()
        recaller = open_recaller(vault, build=True, progress=False, rerank_model=None)
        recaller.embedder = qa.CachedEmbedder(recaller.embedder)
        for text in texts:  # the model loaded, each question's vector made: not the reads' cost
            recaller.embedder.embed_query(text)
        settings = qa.settings_for({})
    else:
        scale._register()
        vault = Path(args.dir) / "vault"
        os.environ["BRAIN_HOME"] = str(Path(args.dir) / "home")
        texts = scale._queries(args.queries + args.offset)[args.offset :]
        cpu0 = _cpu()
        recaller = open_recaller(
            vault, embedder=scale.BenchFakeEmbedder(), update=args.use == "one-shot", rerank_model=None
        )
        settings = RecallSettings(k=12)
    out: dict = {"open_cpu_s": _cpu() - cpu0, "rss_open_mb": _rss_mb(), "peak_open_mb": _peak_mb()}
    if args.use == "one-shot":
        passes = [("fresh", texts)]
    else:
        passes = [("fresh", texts), ("again", texts), ("twice", _more(args, texts))]
    for label, batch in passes:
        cpus = []
        for text in batch:
            if label == "twice":
                recaller.ask(text, args.mode, settings)
            c = _cpu()
            recaller.ask(text, args.mode, settings)
            cpus.append((_cpu() - c) * 1000)
        out[label] = {"cpu_ms": cpus, "asked": dict(asked), "read": dict(read)}
        asked.clear()
        read.clear()
    out["held"] = _held(recaller)
    out["rss_end_mb"] = _rss_mb()
    out["peak_mb"] = _peak_mb()
    recaller.close()
    return out


def _more(args, texts: list[str]) -> list[str]:
    """Questions not asked before, for the pass that asks each twice in a row."""
    if args.set:
        return [f"{text} again" for text in texts]
    return scale._queries(2 * len(texts) + args.offset)[len(texts) + args.offset :]


def _run(args, arm: str, use: str, queries: int, offset: int) -> dict:
    cmd = [sys.executable, __file__, "--child", arm, "--use", use, "--queries", str(queries)]
    cmd += ["--dir", args.dir] if args.dir else ["--set", args.set]
    cmd += ["--offset", str(offset), "--mode", args.mode] + (["--caps", args.caps] if args.caps else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{arm} {use} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _hits(asked: Counter, read: Counter) -> str:
    parts = []
    for name in MAPS:
        if asked.get(name):
            parts.append(f"{name} {1 - read.get(name, 0) / asked[name]:.2f}")
    return ", ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", help="a bench/scale.py work folder with its index built")
    parser.add_argument("--set", help="instead: a set of bench/quality_ablation.py's, warm only (its model)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200, help="questions a warm process asks (then again)")
    parser.add_argument("--one-shots", type=int, default=8, help="one-shot processes per arm and round")
    parser.add_argument("--mode", default="hybrid+ppr")
    parser.add_argument("--uses", default="one-shot,warm")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--caps", help="StateReads' ROWS_LIMIT,CODES_LIMIT,NOTES_LIMIT,LIMIT (default: the code's)")
    parser.add_argument("--child", choices=ARMS, help=argparse.SUPPRESS)
    parser.add_argument("--use", help=argparse.SUPPRESS)
    parser.add_argument("--offset", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if bool(args.dir) == bool(args.set):
        parser.error("one of --dir and --set")
    if args.child:
        print(json.dumps(child(args)))
        return 0
    arms = args.arms.split(",")
    uses = args.uses.split(",")
    print(f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    figures: dict = {(arm, use): [] for arm in arms for use in uses}
    for r in range(args.rounds):
        order = arms if r % 2 == 0 else arms[::-1]
        for use in uses:
            for arm in order:
                if use == "one-shot":
                    runs = [_run(args, arm, use, 1, 1000 + r * 100 + i) for i in range(args.one_shots)]
                else:
                    runs = [_run(args, arm, use, args.queries, 0)]
                figures[(arm, use)].append(runs)
                print(f"round {r + 1} {use} {arm} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    base: dict = {}
    for use in uses:
        print(f"\n{use} ({args.mode}; medians over {args.rounds} rounds; ratio to off)")
        for arm in arms:
            rounds = figures[(arm, use)]
            line = {}
            for label in ("fresh", "again", "twice"):
                if label not in rounds[0][0]:
                    continue
                per_round = [statistics.fmean(c for run in runs for c in run[label]["cpu_ms"]) for runs in rounds]
                p50 = [statistics.median([c for run in runs for c in run[label]["cpu_ms"]]) for runs in rounds]
                line[label] = (statistics.median(per_round), statistics.median(p50))
            peak = statistics.median(max(run["peak_mb"] for run in runs) for runs in rounds)
            growth = statistics.median(max(run["rss_end_mb"] - run["rss_open_mb"] for run in runs) for runs in rounds)
            base.setdefault(use, {})
            if arm == "off":
                base[use] = {"line": line, "peak": peak}
            last = rounds[-1]
            asked: Counter = Counter()
            read: Counter = Counter()
            for run in last:
                for label in ("fresh", "again", "twice"):
                    if label in run:
                        asked.update(run[label]["asked"])
                        read.update(run[label]["read"])
            cells = [f"  {arm:9}"]
            for label, (mean, p50) in line.items():
                cells.append(f"{label}: CPU/ask mean {mean:6.1f} ms, p50 {p50:6.1f} ms")
            cells.append(f"peak RSS {peak:6.1f} MB (growth over the asks {growth:5.1f} MB)")
            print("; ".join(cells))
            if last[0].get("held"):
                print(f"      held at the end: {last[0]['held']}")
            for label in ("fresh", "again", "twice"):
                if label in last[0]:
                    a, rd = Counter(), Counter()
                    for run in last:
                        a.update(run[label]["asked"])
                        rd.update(run[label]["read"])
                    print(f"      hit rate, {label}: {_hits(a, rd)}")
        if "off" in arms:
            for arm in arms:
                if arm == "off":
                    continue
                rounds = figures[(arm, use)]
                off = figures[("off", use)]
                cells = [f"  {arm} / off"]
                for label in ("fresh", "again", "twice"):
                    if label not in rounds[0][0]:
                        continue
                    ratios = [
                        statistics.fmean(c for run in a for c in run[label]["cpu_ms"])
                        / statistics.fmean(c for run in b for c in run[label]["cpu_ms"])
                        for a, b in zip(rounds, off, strict=True)
                    ]
                    cells.append(
                        f"{label} CPU/ask {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
                    )
                peaks = [
                    max(run["peak_mb"] for run in a) / max(run["peak_mb"] for run in b)
                    for a, b in zip(rounds, off, strict=True)
                ]
                cells.append(f"peak RSS {statistics.median(peaks):.3f}")
                print("; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
