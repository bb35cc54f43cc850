#!/usr/bin/env python3
"""Check the bilingual benchmark's labels against the written notes. Standard library only.

    python bench/bilingual/check_labels.py        # checks, counts, a BM25 baseline per type and language
    python bench/bilingual/check_labels.py -v     # plus every query's BM25 top-1 note

It reads the vault files themselves, not the generator's tables. Checks (any failure: exit 1):

  * ids unique, types known, every relevant/partial path a note, relevant and partial disjoint;
    theme queries have 2-5 relevant notes, compare queries exactly 2
  * ``lang`` is ``<query>-><answers>``: the query side is ``ru`` when the query has Cyrillic
    letters, else ``en``; the answer side is the set of the relevant notes' ``lang:`` fields
  * every note has ``lang: en`` or ``lang: ru`` in its frontmatter
  * bridge: one relevant note B, linked from or linking to the ``via`` note A in a note body;
    every distinctive term occurs in the query and in A, and nowhere in B (frontmatter included)
  * temporal: no relevant or partial note is superseded (``status: superseded`` or
    ``superseded_by``), and none of the query's ``older`` notes is labelled
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
LANGS = ["en->en", "ru->ru", "en->ru", "ru->en", "en->en+ru", "ru->en+ru"]
LINK_RE = re.compile(r"!?\[\[([^\]\|#]*)(#[^\]\|]*)?(\|[^\]]*)?\]\]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")
STOP = set(
    """
a an the and or of to in on for with is are was what how why when where which who do does did i we my our it this that be
about from at by as can should vs versus
и в во не что на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от меня еще нет о из
ему когда ли если уже или ни быть был до вас там для мы их чем была сам чтобы без кто этот про сейчас теперь
""".split()
)


def fold(text: str) -> str:
    """Case and accents folded (ё → е, é → e): how a search box should compare words."""
    text = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in text if not unicodedata.combining(c))


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", fold(text)) if t not in STOP and len(t) > 1]


class Note:
    def __init__(self, path: str, text: str):
        self.path = path
        self.title = os.path.splitext(os.path.basename(path))[0]
        self.text = text
        self.meta: dict[str, str] = {}
        self.body = text
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            for line in text[4:end].split("\n"):
                key, _, value = line.partition(":")
                self.meta[key.strip()] = value.strip()
            self.body = text[end + 5 :]
        aliases = self.meta.get("aliases", "")
        self.aliases = [a.strip().strip('"') for a in aliases.strip("[]").split(",") if a.strip()]

    @property
    def superseded(self) -> bool:
        return self.meta.get("status") == "superseded" or bool(self.meta.get("superseded_by"))


def load_vault(vault: str) -> dict[str, Note]:
    notes = {}
    for root, _dirs, files in os.walk(vault):
        for name in files:
            if name.endswith(".md"):
                full = os.path.join(root, name)
                rel = unicodedata.normalize("NFC", os.path.relpath(full, vault).replace(os.sep, "/"))
                with open(full, encoding="utf-8") as handle:
                    notes[rel] = Note(rel, handle.read())
    return notes


def body_links(notes: dict[str, Note]) -> dict[str, set[str]]:
    names: dict[str, str] = {}
    for n in notes.values():
        names[fold(n.title)] = n.path
        names[fold(n.path[:-3])] = n.path
        for alias in n.aliases:
            names.setdefault(fold(alias), n.path)
    out: dict[str, set[str]] = {p: set() for p in notes}
    for n in notes.values():
        for target, _heading, _display in LINK_RE.findall(n.body):
            hit = names.get(fold(target.strip()))
            if hit and hit != n.path:
                out[n.path].add(hit)
    return out


def query_lang(text: str) -> str:
    return "ru" if CYRILLIC.search(text) else "en"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check the bilingual benchmark's labels")
    parser.add_argument("--dir", default=HERE, help="folder holding vault/, queries.jsonl, label_checks.json")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    notes = load_vault(os.path.join(args.dir, "vault"))
    with open(os.path.join(args.dir, "queries.jsonl"), encoding="utf-8") as handle:
        queries = [json.loads(line) for line in handle if line.strip()]
    with open(os.path.join(args.dir, "label_checks.json"), encoding="utf-8") as handle:
        meta = json.load(handle)
    links = body_links(notes)
    errors: list[str] = []

    for n in notes.values():
        if n.meta.get("lang") not in ("en", "ru"):
            errors.append(f"{n.path}: lang {n.meta.get('lang')!r} in its frontmatter, expected en or ru")

    seen = set()
    for q in queries:
        qid = q.get("id")

        def err(message: str, qid=qid) -> None:
            errors.append(f"{qid}: {message}")

        if qid in seen:
            err("duplicate id")
        seen.add(qid)
        if q.get("type") not in TYPES:
            err(f"unknown type {q.get('type')!r}")
        relevant, partial = q.get("relevant", []), q.get("partial", [])
        if not relevant:
            err("no relevant notes")
        missing = [p for p in relevant + partial if p not in notes]
        for p in missing:
            err(f"no such note: {p}")
        if set(relevant) & set(partial):
            err("a note is both relevant and partial")
        if q["type"] == "theme" and not 2 <= len(relevant) <= 5:
            err(f"theme query with {len(relevant)} relevant notes")
        if q["type"] == "compare" and len(relevant) != 2:
            err(f"compare query with {len(relevant)} relevant notes")
        if missing:
            continue
        answers = "+".join(sorted({notes[p].meta.get("lang", "?") for p in relevant}))
        expected = f"{query_lang(q['query'])}->{answers}"
        if q.get("lang") != expected:
            err(f"lang is {q.get('lang')!r} but the query and its relevant notes say {expected!r}")

    for q in (q for q in queries if q["type"] == "bridge"):
        qid, m = q["id"], meta.get("bridge", {}).get(q["id"])
        if not m:
            errors.append(f"{qid}: no bridge entry in label_checks.json")
            continue
        a, b = notes.get(m["via"]), notes.get(q["relevant"][0])
        if a is None or b is None:
            errors.append(f"{qid}: via or answer note missing")
            continue
        if len(q["relevant"]) != 1:
            errors.append(f"{qid}: a bridge has exactly one relevant note")
        if b.path not in links[a.path] and a.path not in links[b.path]:
            errors.append(f"{qid}: {b.path} and {a.path} are not linked in either body")
        for term in m["distinctive"]:
            if fold(term) not in fold(q["query"]):
                errors.append(f"{qid}: distinctive {term!r} is not in the query")
            if fold(term) not in fold(a.text):
                errors.append(f"{qid}: distinctive {term!r} is not in the via note {a.path}")
            if fold(term) in fold(b.text):
                errors.append(f"{qid}: distinctive {term!r} occurs in the answer {b.path}")

    for q in (q for q in queries if q["type"] == "temporal"):
        qid, labelled = q["id"], q["relevant"] + q.get("partial", [])
        for p in labelled:
            if p in notes and notes[p].superseded:
                errors.append(f"{qid}: labelled note is superseded: {p}")
        older = meta.get("temporal", {}).get(qid, {}).get("older", [])
        if not older:
            errors.append(f"{qid}: no older note to tempt a ranker (label_checks.json)")
        for p in older:
            if p in labelled:
                errors.append(f"{qid}: older note is labelled: {p}")
            if p not in notes:
                errors.append(f"{qid}: older note does not exist: {p}")

    report(notes, queries, links, args.verbose)
    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for line in errors:
            print("  " + line)
        return 1
    print("\nall label checks passed")
    return 0


def report(notes: dict[str, Note], queries: list[dict], links: dict[str, set[str]], verbose: bool) -> None:
    langs: dict[str, int] = {}
    for n in notes.values():
        langs[n.meta.get("lang", "?")] = langs.get(n.meta.get("lang", "?"), 0) + 1
    cross = sum(1 for s, ts in links.items() for t in ts if notes[s].meta.get("lang") != notes[t].meta.get("lang"))
    print(
        f"vault: {len(notes)} notes (" + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())) + f"), "
        f"{sum(len(t) for t in links.values())} body links, {cross} of them across languages"
    )
    print(f"queries: {len(queries)}")
    for key, order in (("type", TYPES), ("lang", LANGS)):
        counts = {k: sum(1 for q in queries if q[key] == k) for k in order}
        print(f"  by {key}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    bm25_baseline(notes, queries, verbose)


def bm25_baseline(notes: dict[str, Note], queries: list[dict], verbose: bool) -> None:
    """BM25 (k1 1.2, b 0.75) over title (twice), aliases and text: top-1 hit rate and recall@10."""
    paths = sorted(notes)
    docs = {p: tokens(f"{notes[p].title} {notes[p].title} {notes[p].text}") for p in paths}
    df: dict[str, int] = {}
    for d in docs.values():
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    n, avg = len(paths), sum(len(d) for d in docs.values()) / len(paths)
    tf = {p: {t: d.count(t) for t in set(d)} for p, d in docs.items()}

    def score(p: str, terms: list[str]) -> float:
        total = 0.0
        for t in terms:
            f = tf[p].get(t, 0)
            if f:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                total += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(docs[p]) / avg))
        return total

    rows: dict[str, dict[str, list[float]]] = {"type": {}, "lang": {}}
    for q in queries:
        terms = sorted(set(tokens(q["query"])))
        ranked = sorted(paths, key=lambda p: (-score(p, terms), p))
        top1 = float(ranked[0] in q["relevant"] and score(ranked[0], terms) > 0)
        recall = sum(1 for p in ranked[:10] if p in q["relevant"] and score(p, terms) > 0) / len(q["relevant"])
        for key in rows:
            rows[key].setdefault(q[key], []).append(top1)
            rows[key].setdefault(q[key] + " r@10", []).append(recall)
        if verbose:
            print(f"  {'+' if top1 else '-'} {q['id']:12s} {q['lang']:10s} top1={ranked[0]}  | {q['query']}")
    print("\nBM25 baseline (folded words, no stemming): top-1 relevant / recall@10")
    for key, order in (("type", TYPES), ("lang", LANGS)):
        for k in order:
            if k in rows[key]:
                hits, recall = rows[key][k], rows[key][k + " r@10"]
                print(f"  {k:12s} n={len(hits):3d}  {sum(hits) / len(hits):5.0%}  {sum(recall) / len(recall):5.2f}")


if __name__ == "__main__":
    sys.exit(main())
