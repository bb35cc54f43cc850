#!/usr/bin/env python3
"""Check the mini-vault labels against the notes. Standard library only.

    python bench/minivault/check_labels.py            # checks + per-type counts + lexical baseline
    python bench/minivault/check_labels.py -v         # also list every query's word-overlap top-1

Checks (any failure -> exit 1):
  * every relevant/partial path exists; ids unique; types known; relevant and partial disjoint
  * theme queries have 2-5 relevant notes, compare queries exactly 2
  * bridge queries: the answer note B is linked from, or links to, the note A the query is
    worded after, by a link in the note body (not only in frontmatter) (label_checks.json "via"); every distinctive term appears in the query and in A,
    and none appears anywhere in B (frontmatter included)
  * temporal queries: no relevant or partial note is superseded (frontmatter superseded_by or
    status: superseded); older notes of a meeting series are not labelled either
It then reports lexical sanity baselines: for each query, score every note by word overlap with
the query (plain, IDF-weighted, and BM25) and report the share of queries whose top-1 note is
relevant, per type.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ["entity", "theme", "bridge", "compare", "temporal", "navigational", "paraphrase"]
LINK_RE = re.compile(r"!?\[\[([^\]\|#]*)(#[^\]\|]*)?(\|[^\]]*)?\]\]")

STOP = set(
    """
a about above after again against all am an and any are as at be because been before being below between both but by
can could did do does doing down during each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves what's who's where's how's it's i'm don't can't vs versus s t did does get got use used
also much many one two new us let via per
и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от меня еще нет
о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж вам ведь там потом себя ничего
ей может они тут где есть надо ней для мы тебя их чем была сам чтобы без будто чего раз тоже себе под будет ж тогда кто
этот про
""".split()
)


def fold(s: str) -> str:
    s = unicodedata.normalize("NFKD", s.casefold())
    return "".join(c for c in s if not unicodedata.combining(c))


def tokens(s: str) -> list[str]:
    return [t for t in re.findall(r"\w+", fold(s)) if t not in STOP and len(t) > 1]


class Note:
    def __init__(self, rel: str, text: str):
        self.path = rel
        self.title = os.path.splitext(os.path.basename(rel))[0]
        self.text = text
        self.fm: dict[str, object] = {}
        body = text
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            fm_text, body = text[4:end], text[end + 5 :]
            key = None
            for line in fm_text.split("\n"):
                m = re.match(r"^(\w+):\s*(.*)$", line)
                if m:
                    key, val = m.group(1), m.group(2).strip()
                    if val.startswith("[") and val.endswith("]") and "[[" not in val:
                        self.fm[key] = [x.strip().strip('"') for x in val[1:-1].split(",") if x.strip()]
                    elif val == "":
                        self.fm[key] = []
                    else:
                        self.fm[key] = val.strip('"')
                elif line.startswith("  - ") and key:
                    self.fm.setdefault(key, [])
                    if isinstance(self.fm[key], list):
                        self.fm[key].append(line[4:].strip().strip('"'))
        self.body = body
        aliases = self.fm.get("aliases", [])
        self.aliases = aliases if isinstance(aliases, list) else [aliases]

    @property
    def superseded(self) -> bool:
        return bool(self.fm.get("superseded_by")) or self.fm.get("status") == "superseded"


def load_vault(vault: str) -> dict[str, Note]:
    notes = {}
    for root, _dirs, files in os.walk(vault):
        for f in files:
            if f.endswith(".md"):
                full = os.path.join(root, f)
                rel = unicodedata.normalize("NFC", os.path.relpath(full, vault).replace(os.sep, "/"))
                with open(full, encoding="utf-8") as fh:
                    notes[rel] = Note(rel, fh.read())
    return notes


def link_graph(notes: dict[str, Note], body_only: bool = False) -> dict[str, set[str]]:
    index: dict[str, str] = {}
    for n in notes.values():
        index[fold(n.title)] = n.path
        index[fold(n.path[:-3])] = n.path
    for n in notes.values():
        for a in n.aliases:
            index.setdefault(fold(a), n.path)
    out: dict[str, set[str]] = {p: set() for p in notes}
    for n in notes.values():
        for target, _h, _a in LINK_RE.findall(n.body if body_only else n.text):
            t = target.strip()
            if t.lower().endswith(".md"):
                t = t[:-3]
            hit = index.get(fold(t))
            if hit and hit != n.path:
                out[n.path].add(hit)
    return out


def contains(note: Note, term: str) -> bool:
    return fold(term) in fold(note.text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="check mini-vault labels")
    ap.add_argument("--dir", default=HERE, help="directory holding vault/, queries.jsonl, label_checks.json")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    notes = load_vault(os.path.join(args.dir, "vault"))
    with open(os.path.join(args.dir, "queries.jsonl"), encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    with open(os.path.join(args.dir, "label_checks.json"), encoding="utf-8") as fh:
        meta = json.load(fh)
    graph = link_graph(notes)
    body_graph = link_graph(notes, body_only=True)  # bridges must not depend on frontmatter links
    errors: list[str] = []

    def err(qid, msg):
        errors.append(f"{qid}: {msg}")

    # ---------------------------------------------------------------- structural checks
    seen = set()
    for q in queries:
        qid = q.get("id")
        if qid in seen:
            err(qid, "duplicate id")
        seen.add(qid)
        if q.get("type") not in TYPES:
            err(qid, f"unknown type {q.get('type')!r}")
        if not q.get("query", "").strip():
            err(qid, "empty query")
        rel, part = q.get("relevant", []), q.get("partial", [])
        if not rel:
            err(qid, "no relevant notes")
        for p in rel + part:
            if p not in notes:
                err(qid, f"path does not exist: {p}")
        if set(rel) & set(part):
            err(qid, "path both relevant and partial")
        if q["type"] == "theme" and not 2 <= len(rel) <= 5:
            err(qid, f"theme query with {len(rel)} relevant notes")
        if q["type"] == "compare" and len(rel) != 2:
            err(qid, f"compare query with {len(rel)} relevant notes")

    # ---------------------------------------------------------------- bridge
    bridge_meta = meta.get("bridge", {})
    for q in (q for q in queries if q["type"] == "bridge"):
        qid = q["id"]
        m = bridge_meta.get(qid)
        if not m:
            err(qid, "no bridge metadata in label_checks.json")
            continue
        a, b = notes.get(m["via"]), notes.get(q["relevant"][0])
        if a is None or b is None:
            continue
        if len(q["relevant"]) != 1 or m["answer"] != b.path:
            err(qid, "bridge must have exactly one relevant note, the answer")
        if b.path not in body_graph[a.path] and a.path not in body_graph[b.path]:
            err(qid, f"{b.path} is neither linked from nor linking to {a.path} (in the note body)")
        for term in m["distinctive"]:
            if fold(term) not in fold(q["query"]):
                err(qid, f"distinctive term {term!r} not in the query")
            if not contains(a, term):
                err(qid, f"distinctive term {term!r} not in the via note {a.path}")
            if contains(b, term):
                err(qid, f"distinctive term {term!r} occurs in the answer note {b.path}")

    # ---------------------------------------------------------------- temporal
    temporal_meta = meta.get("temporal", {})
    with_distractor = 0
    for q in (q for q in queries if q["type"] == "temporal"):
        qid = q["id"]
        for p in q["relevant"] + q.get("partial", []):
            if p in notes and notes[p].superseded:
                err(qid, f"labelled note is superseded: {p}")
        older = temporal_meta.get(qid, {}).get("older_in_series", [])
        for p in older:
            if p in q["relevant"] or p in q.get("partial", []):
                err(qid, f"older note of the series is labelled: {p}")
        # a superseded note that points (directly or through a chain) at the relevant one
        rel = q["relevant"][0]
        chain = [n for n in notes.values() if n.superseded and _supersedes_into(n, rel, notes)]
        if chain or older:
            with_distractor += 1

    # ---------------------------------------------------------------- report
    counts = {t: 0 for t in TYPES}
    for q in queries:
        counts[q["type"]] = counts.get(q["type"], 0) + 1
    n_links = sum(len(v) for v in graph.values())
    no_out = sum(1 for v in graph.values() if not v)
    inbound = {p: 0 for p in notes}
    for v in graph.values():
        for d in v:
            inbound[d] += 1
    isolated = sum(1 for p in notes if not graph[p] and not inbound[p])
    print(
        f"vault: {len(notes)} notes, {n_links} resolved links, {no_out} notes without outgoing links, {isolated} without any link"
    )
    print(f"queries: {len(queries)}")
    for t in TYPES:
        print(f"  {t:13s} {counts.get(t, 0)}")
    print(
        f"temporal queries with an older, superseded or earlier-in-series distractor: {with_distractor}/{counts['temporal']}"
    )

    lexical_report(notes, queries, args.verbose)

    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  " + e)
        return 1
    print("\nall label checks passed")
    return 0


def _supersedes_into(note: Note, target: str, notes: dict[str, Note], depth: int = 0) -> bool:
    if depth > 10:
        return False
    sb = note.fm.get("superseded_by")
    if not sb:
        return False
    m = LINK_RE.search(sb if isinstance(sb, str) else "")
    if not m:
        return False
    name = fold(m.group(1).strip())
    nxt = next((n for n in notes.values() if fold(n.title) == name), None)
    if nxt is None:
        return False
    return nxt.path == target or _supersedes_into(nxt, target, notes, depth + 1)


def lexical_report(notes: dict[str, Note], queries: list[dict], verbose: bool) -> None:
    """Lexical baselines, top-1 only, ties broken by path:
    overlap  - number of distinct query words present in the note (frontmatter, title, body)
    idf      - the same, each word weighted by its inverse document frequency
    bm25     - Okapi BM25 (k1=1.2, b=0.75) over title + aliases + body, title counted twice
    """
    paths = sorted(notes)
    docs = {p: tokens(f"{notes[p].title} {notes[p].title} {notes[p].text}") for p in paths}
    bags = {p: set(d) for p, d in docs.items()}
    tf = {p: {} for p in paths}
    for p, d in docs.items():
        for t in d:
            tf[p][t] = tf[p].get(t, 0) + 1
    df: dict[str, int] = {}
    for b in bags.values():
        for t in b:
            df[t] = df.get(t, 0) + 1
    N = len(paths)
    avgdl = sum(len(d) for d in docs.values()) / N
    idf = {t: math.log(1 + (N - c + 0.5) / (c + 0.5)) for t, c in df.items()}
    k1, bb = 1.2, 0.75

    def bm25(p: str, qt: list[str]) -> float:
        dl, s = len(docs[p]), 0.0
        for t in qt:
            f = tf[p].get(t, 0)
            if f:
                s += idf[t] * f * (k1 + 1) / (f + k1 * (1 - bb + bb * dl / avgdl))
        return s

    scorers = {
        "overlap": lambda p, qt: float(sum(1 for t in qt if t in bags[p])),
        "idf": lambda p, qt: sum(idf.get(t, 0.0) for t in qt if t in bags[p]),
        "bm25": bm25,
    }
    hits: dict[str, dict[str, list[bool]]] = {}
    overlap_share: dict[str, list[float]] = {}
    rare_shared: dict[str, list[int]] = {}
    for q in queries:
        qt = sorted(set(tokens(q["query"])))
        row = {}
        for name, fn in scorers.items():
            top = min((-fn(p, qt), p) for p in paths)[1]
            row[name] = top
            hits.setdefault(q["type"], {}).setdefault(name, []).append(top in q["relevant"])
        rel_bag = set().union(*(bags[p] for p in q["relevant"]))
        if qt:
            overlap_share.setdefault(q["type"], []).append(sum(1 for t in qt if t in rel_bag) / len(qt))
        rare_shared.setdefault(q["type"], []).append(sum(1 for t in qt if t in rel_bag and df.get(t, 0) <= 5))
        if verbose:
            mark = "+" if row["bm25"] in q["relevant"] else "-"
            print(f"  {mark} {q['id']:16s} bm25 top1={row['bm25']}  | {q['query']}")
    print("\nlexical baseline: share of queries whose top-1 note is relevant")
    print(
        f"  {'type':13s} {'overlap':>8s} {'idf':>6s} {'bm25':>6s}   {'query words found in relevant':>30s} {'rare (df<=5) shared':>20s}"
    )
    totals = {name: 0 for name in scorers}
    total = 0
    for t in TYPES:
        if t not in hits:
            continue
        n = len(hits[t]["bm25"])
        total += n
        cells = []
        for name in scorers:
            k = sum(hits[t][name])
            totals[name] += k
            cells.append(f"{k / n:6.0%}")
        share = sum(overlap_share.get(t, [0])) / max(1, len(overlap_share.get(t, [])))
        rare = sum(rare_shared.get(t, [0])) / max(1, len(rare_shared.get(t, [])))
        print(f"  {t:13s} {cells[0]:>8s} {cells[1]:>6s} {cells[2]:>6s}   {share:30.0%} {rare:20.2f}")
    print(f"  {'all':13s} {totals['overlap'] / total:8.0%} {totals['idf'] / total:6.0%} {totals['bm25'] / total:6.0%}")


if __name__ == "__main__":
    sys.exit(main())
