"""What notes gone since the last index cost a warm `brain ask`, beside an older tree: figures
with ratios, not tests.

The vault (indexed beforehand in ``BRAIN_HOME``: `brain index --vault VAULT`) is asked the
realvault queries, warm, in one process per tree and round (``open_recaller(update=False)``,
a first query to load the model, vectors and graph, then each query timed), the two trees
interleaved round by round so that both see the same load; first with every note's file there,
then with the ``--long-gone`` longest notes' files moved out of the vault (a note of many
sections, each matching many queries, whose chunks can fill a lane's chunk search), then with
``--gone`` notes' files moved out (put back at the end), so that each lane leaves them out
(``Recaller.gone``). It prints the median per-query milliseconds of each tree, wall and CPU (the
process's: steadier on a shared machine), and new/old; and how the two trees' answers compare
(the results and every lane's notes, query by query): identical with every note's file there,
and with files gone, how many lanes came back shorter than the other tree's and how many
gone notes any answer held. ``--depth`` sets the lanes' depth (the default's 60 reads 300
BM25 chunks, more than the SRD's longest note has: 12 reads 60); ``--heading-queries`` asks the
longest note's headings too (what it is about: many of its sections match them). It prints how
deep the chunk searches that read past gone notes went (``recall/live.py``: how many searched
again, and the deepest against the chunks wanted); ``--grow N`` first writes and indexes a note of
N sections, each a paragraph of the vault's notes (a log kept in one note, a few of whose chunks
are among many queries' hits), as the longest note (taken out and indexed out at the end).

    git archive main | tar -x -C /tmp/old-brain
    BRAIN_HOME=/tmp/srd-home BRAIN_EMBED_MODEL=/path/to/minilm HF_HUB_OFFLINE=1 BRAIN_RERANK_MODEL=none \\
        python bench/gone_notes_ask.py --vault /tmp/srd --baseline /tmp/old-brain [--rounds 5] [--gone 20] \\
        [--long-gone 1] [--depth 12] [--heading-queries 10] [--grow 3000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERIES = ROOT / "bench" / "realvault" / "13th-age-srd.queries.jsonl"

ASK = """
import json, sys, time
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings
vault, modes, queries, depth = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])
settings = RecallSettings(depth=depth) if depth else None
searches = []  # (wanted, [reach of each search]) of each chunk search past the gone notes
try:  # the chunk searches that read past gone notes (recall/live.py), in a tree that has them
    from brain.recall import anchors, live, pipeline

    def traced(store, search, wanted, gone, _live_hits=live.live_hits):
        asked = []
        found = _live_hits(store, lambda reach: asked.append(reach) or search(reach), wanted, gone)
        searches.append((wanted, asked))
        return found

    pipeline.live_hits = anchors.live_hits = traced
except (ImportError, AttributeError):
    pass
recaller = open_recaller(vault, update=False)
recaller.ask(queries[0], settings=settings)  # the model, vectors and graph loaded: what follows is warm
times, answers, depths = {}, {}, {}
for mode in modes:
    recaller.ask(queries[0], mode, settings)
    spent, said = times[mode], answers[mode] = [], []
    searches.clear()
    for q in queries[1:]:
        t, c = time.perf_counter(), time.process_time()
        result = recaller.ask(q, mode, settings)
        spent.append(((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000))
        lanes = {lane: [c.path for c in found] for lane, found in result.lanes.items()}
        said.append({"results": [c.path for c in result.results], "lanes": lanes})
    depths[mode] = list(searches)
print(json.dumps({"gone": len(recaller.gone), "times": times, "answers": answers, "depths": depths}))
recaller.close()
"""


def run(tree: Path, vault: Path, modes: list[str], queries: list[str], depth: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", ASK, str(vault), json.dumps(modes), json.dumps(queries), str(depth)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode:
        raise SystemExit(f"{tree}: ask failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def measure(
    trees: dict[str, Path], vault: Path, modes: list[str], queries: list[str], rounds: int, depth: int, moved: list[str]
) -> None:
    spent: dict[str, dict[str, list[list[float]]]] = {name: {m: [] for m in modes} for name in trees}
    gone, answers, depths = {}, {}, {}
    for i in range(rounds):
        for name in list(trees)[:: 1 if i % 2 == 0 else -1]:  # each tree first in every other round
            answer = run(trees[name], vault, modes, queries, depth)
            gone[name], answers[name], depths[name] = answer["gone"], answer["answers"], answer.get("depths", {})
            for mode in modes:
                spent[name][mode] += answer["times"][mode]
    print(f"  notes gone: {gone}")
    for mode in modes:
        for k, what in enumerate(("wall", "CPU ")):
            old = statistics.median(t[k] for t in spent["old"][mode])
            new = statistics.median(t[k] for t in spent["new"][mode])
            print(f"  {mode:<12} {what} old {old:7.2f} ms   new {new:7.2f} ms   new/old {new / old:.3f}")
        for name in trees:
            print(f"  {mode:<12} {name}: {reach(depths[name].get(mode, []))}")
        compare(mode, answers["old"][mode], answers["new"][mode], moved)


def reach(searches: list[list]) -> str:
    """How deep the chunk searches past gone notes went: of those that searched more than once,
    how many, their searches, and the deepest against what was wanted."""
    past = [(wanted, asked) for wanted, asked in searches if len(asked) > 1]
    if not searches:
        return "chunk searches not traced (a tree without recall/live.py)"
    if not past:
        return f"{len(searches)} chunk searches, none past a gone note"
    deepest = max(past, key=lambda p: max(p[1]) / p[0])
    more = statistics.median(len(asked) - 1 for _, asked in past)
    return (
        f"{len(past)} of {len(searches)} chunk searches went past a gone note, {more:g} more searches (median),"
        f" deepest {max(deepest[1])} chunks for {deepest[0]} wanted (x{max(deepest[1]) / deepest[0]:.1f})"
    )


def compare(mode: str, old: list[dict], new: list[dict], moved: list[str]) -> None:
    """How the trees' answers to the same queries compare: identical, or where a lane of one came
    back shorter than the other's, and any gone note in a result or a lane."""
    same = sum(1 for a, b in zip(old, new) if a == b)
    print(f"  {mode:<12} answers identical (results and every lane): {same} of {len(old)} queries")
    if same == len(old):
        return
    for name, answers in (("old", old), ("new", new)):
        other = new if name == "old" else old
        short: dict[str, int] = {}
        for a, b in zip(answers, other):
            for lane, found in a["lanes"].items():
                if len(found) < len(b["lanes"].get(lane, [])):
                    short[lane] = short.get(lane, 0) + 1
        held = sum(1 for a in answers for path in a["results"] if path in moved)
        print(
            f"  {mode:<12} {name}: lanes shorter than the other tree's (queries) {short or 'none'}; gone notes in results {held}"
        )


def headings(note: Path) -> list[str]:
    """The note's headings of two words or more, each once, in order (its talents, its feats)."""
    found = (
        line.lstrip("#").strip().strip("*").strip() for line in note.read_text().splitlines() if line.startswith("#")
    )
    return list(dict.fromkeys(h for h in found if len(h.split()) >= 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, required=True, help="an older tree (git archive … | tar -x)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--gone", type=int, default=20, help="notes whose files are moved out for the last run")
    parser.add_argument("--long-gone", type=int, default=1, help="the longest notes, moved out for the second run")
    parser.add_argument("--depth", type=int, default=0, help="the lanes' depth (0: the default)")
    parser.add_argument(
        "--heading-queries", type=int, default=0, help="this many of the longest note's headings asked too"
    )
    parser.add_argument("--modes", default="hybrid+ppr,graph")
    parser.add_argument(
        "--grow",
        type=int,
        default=0,
        help="first write a note of this many sections, each a paragraph of the vault's notes (a log kept in"
        " one note), and index it (this tree): the longest note; taken out and indexed out at the end",
    )
    args = parser.parse_args()
    queries = [json.loads(line)["query"] for line in QUERIES.read_text().splitlines() if line.strip()]
    queries = queries[: args.queries + 1]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    notes = sorted(
        p for p in args.vault.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(args.vault).parts)
    )
    grown = grow(args.vault, notes, args.grow) if args.grow > 0 else None
    try:
        measure_all(args, [*notes, grown] if grown else notes, queries, modes)
    finally:
        if grown is not None:
            grown.unlink()
            index(args.vault)


GROWN = "Long log (gone_notes_ask).md"


def grow(vault: Path, notes: list[Path], sections: int) -> Path:
    """A note of ``sections`` sections, each a paragraph of the vault's notes, written and indexed."""
    paragraphs = [
        p.strip()
        for note in notes
        for p in note.read_text(errors="replace").split("\n\n")
        if len(p.strip()) > 80 and p.lstrip()[:1] not in ("#", "|", "-", ">", "`")
    ]
    body = "\n\n".join(f"## Entry {i}\n\n{paragraphs[(i * 7919) % len(paragraphs)]}" for i in range(sections))
    path = vault / GROWN
    path.write_text(f"# Long log\n\n{body}\n")
    index(vault)
    return path


def index(vault: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "brain", "index", "--quiet", "--vault", str(vault)], env=env, check=True)


def measure_all(args: argparse.Namespace, notes: list[Path], queries: list[str], modes: list[str]) -> None:
    longest = sorted(notes, key=lambda p: (-p.stat().st_size, p))[: max(args.long_gone, 0)]
    if longest and args.heading_queries > 0:  # what the long note is about: many of its chunks match
        queries += headings(longest[0])[: args.heading_queries]
    trees = {"old": args.baseline.resolve(), "new": ROOT}
    print(f"load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; per query, median of {args.rounds} rounds")
    print(f"depth {args.depth or 'the default'}; every note's file there:")
    measure(trees, args.vault, modes, queries, args.rounds, args.depth, [])
    spread = notes[:: max(1, len(notes) // args.gone)][: args.gone] if args.gone > 0 else []
    for moved, what in ((longest, "the longest"), (spread, "spread")):
        if not moved:
            continue
        aside = Path(tempfile.mkdtemp(prefix="gone-notes-"))
        try:
            for i, path in enumerate(moved):
                shutil.move(str(path), str(aside / f"{i}.md"))
            sizes = ", ".join(
                f"{p.name} {(aside / f'{i}.md').stat().st_size // 1000} KB" for i, p in enumerate(moved[:3])
            )
            print(f"{len(moved)} notes' files moved out ({what}: {sizes}{', …' if len(moved) > 3 else ''}):")
            relative = [str(p.relative_to(args.vault)) for p in moved]
            measure(trees, args.vault, modes, queries, args.rounds, args.depth, relative)
        finally:
            for i, path in enumerate(moved):
                shutil.move(str(aside / f"{i}.md"), str(path))
            shutil.rmtree(aside, ignore_errors=True)
    print(f"load at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
