"""Issue 13: what outranks a query's first relevant note, by kind, so a miss is read and counted.

For each query of the chosen types under an nDCG@10 bar (default: bridge and paraphrase under
0.8), the default's fused top 30, the rank of its first relevant note (``partial`` notes do not
are not scored), and each note of the fused top 10 above it, classed by what it is:

    partial              labelled partial (the note the question starts from, often)
    links-to-answer      it links to a relevant note (the note a bridge question describes)
    linked-from-answer   a relevant note links to it
    hub                  30 resolved links out or more (an index note: *Races*, *Bestiary*)
    index                10 to 29 links out
    long                 over 16 chunks (a class page, a compendium of items)
    sibling              in a relevant note's folder
    title-word           its title shares a word of 3+ letters with the query
    family               its title shares such a word with another note above the answer
    other                none of these (mostly the dense lane's near neighbours)

A note may be of several kinds; "first kind" counts each note once, in the order above. No
label is read to rank; the labels only say which note is the answer.

    python bench/outrankers.py --sets 13th-age             # bridge and paraphrase under 0.8
    python bench/outrankers.py --sets 13th-age,vok --types all --below 1.01

Run with the BRAIN_HOME whose index the quality runs use (it reads that index, builds nothing
that is there already).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from quality_ablation import SETS, CachedEmbedder, default_copies, settings_for, vault_to_index  # noqa: E402

KINDS = (
    "partial",
    "links-to-answer",
    "linked-from-answer",
    "hub",
    "index",
    "long",
    "sibling",
    "title-word",
    "family",
    "other",
)
STOP = set("the and for with you your what how that this can get any are does from not".split())
LONG = 16  # chunks: the long-note discount's free length (recall.dense.LONG_NOTE_CHUNKS)
POOL = 30


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2 and w not in STOP}


def title_words(path: str) -> set[str]:
    return words(path.rsplit("/", 1)[-1].removesuffix(".md"))


class Vault:
    """What the classes read of the index: each note's id, links and chunk count."""

    def __init__(self, db: Path):
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            self.ids = dict(conn.execute("SELECT path, id FROM notes"))
            self.chunks = Counter(dict(conn.execute("SELECT note_id, count(*) FROM chunks GROUP BY note_id")))
            self.out: dict[int, set[int]] = {}
            for source, target in conn.execute(
                "SELECT source_id, target_id FROM links WHERE target_id IS NOT NULL AND status = 'resolved'"
            ):
                self.out.setdefault(source, set()).add(target)
        finally:
            conn.close()

    def kinds(self, path: str, query: str, relevant: set[str], partial: set[str], above: list[str]) -> list[str]:
        note = self.ids[path]
        answers = {self.ids[r] for r in relevant if r in self.ids}
        links = self.out.get(note, set())
        mine = title_words(path)
        found = {
            "partial": path in partial,
            "links-to-answer": bool(links & answers),
            "linked-from-answer": any(note in self.out.get(a, ()) for a in answers),
            "hub": len(links) >= 30,
            "index": 10 <= len(links) < 30,
            "long": self.chunks[note] > LONG,
            "sibling": path.rsplit("/", 1)[0] in {r.rsplit("/", 1)[0] for r in relevant},
            "title-word": bool(mine & words(query)),
            "family": any(mine & title_words(other) for other in above if other != path),
        }
        return [k for k in KINDS if found.get(k)] or ["other"]


def main() -> None:
    from brain.config import index_dir
    from brain.evaluation.metrics import query_metrics
    from brain.evaluation.queries import load_queries
    from brain.recall.opening import open_recaller

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="13th-age")
    parser.add_argument("--types", default="bridge,paraphrase", help="query types, or 'all'")
    parser.add_argument("--below", type=float, default=0.8, help="only queries under this nDCG@10")
    args = parser.parse_args()
    every, first, depth = Counter(), Counter(), Counter()
    outranking = 0
    for name in args.sets.split(","):
        queries_file, vault = SETS[name]
        vault = vault_to_index(vault, default_copies())
        queries = load_queries(queries_file, vault)
        recaller = open_recaller(vault, build=True, progress=False, rerank_model=None)
        recaller.embedder = CachedEmbedder(recaller.embedder)
        index = Vault(index_dir(vault) / "index.db")
        wide = replace(settings_for({}), k=POOL)
        try:
            for q in queries:
                if args.types != "all" and q.type not in args.types.split(","):
                    continue
                result = recaller.ask(q.query, "hybrid+ppr", wide)
                ranked = [c.path for c in result.results]
                ndcg = query_metrics(ranked[:10], q.relevant)["ndcg@10"]
                if ndcg >= args.below:
                    continue
                relevant, partial = set(q.relevant), set(q.partial)
                rank = min((ranked.index(p) + 1 for p in relevant if p in ranked), default=POOL + 1)
                depth["2-3" if rank <= 3 else "4-10" if rank <= 10 else "11-30" if rank <= POOL else "past 30"] += 1
                lanes = {
                    lane: next((i for i, c in enumerate(found, 1) if c.path in relevant), None)
                    for lane, found in result.lanes.items()
                }
                where = ", ".join(f"{lane} {r}" for lane, r in lanes.items() if r) or "in no lane"
                print(
                    f"{q.id} ({q.type}) nDCG@10 {ndcg:.2f}; first relevant note "
                    f"{rank if rank <= POOL else f'past {POOL}'}; its lanes: {where}"
                )
                above = ranked[: min(rank - 1, 10)]
                for path in above:
                    kinds = index.kinds(path, q.query, relevant, partial, above)
                    outranking += 1
                    first[kinds[0]] += 1
                    every.update(kinds)
                    print(f"    {path.rsplit('/', 1)[-1]}: {', '.join(kinds)}")
        finally:
            recaller.close()
    print(f"\nfirst relevant note at: {dict(depth)}")
    print(f"{outranking} notes of the fused top 10 above it; by kind (a note may be of several):")
    for kind in KINDS:
        print(f"  {kind:<20} {every[kind]:>4}   first kind {first[kind]:>4}")


if __name__ == "__main__":
    main()
