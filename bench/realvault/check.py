#!/usr/bin/env python3
"""Check the labelled query file for a real vault, and print a lexical baseline.

    python3 bench/realvault/check.py [QUERIES] [--vault PATH] [-v]

Steps:

1. Format: `brain eval`'s own validation of the file (brain.evaluation.queries: JSON objects
   with id, query, type and relevant, unique ids, allowed types, vault-relative paths), plus
   this set's extras: ``via`` is a vault-relative path, and no path is both relevant and
   partial.
2. Paths: every relevant, partial and via path must be a file in the vault. The default vault
   is named after the query file: ``NAME.queries.jsonl`` is checked against
   ../shared/bench/vaults/NAME, relative to the repo root. If the vault is missing,
   the script says so and skips steps 2-4 without failing.
3. Bridges: for each bridge query, some note must link to or embed a relevant note, or be
   linked from one. If the query has a ``via`` field (the note the wording comes from), the
   link must run between ``via`` and a relevant note. Links are found with a plain grep for
   [[...]] and ](x.md), resolved by vault path and then by file stem, ignoring case. Links
   inside fenced code blocks still count, but the script warns about them: link extractors
   that skip code (brain's does) cannot see them.
4. Baseline: rank every note by word overlap with the query. Each distinct query word found
   in the note's raw text (frontmatter included) adds its idf; stopwords are dropped. The
   script reports, per type, how often the top-1 note is relevant and how often a relevant
   note is in the top 10.

Exits 1 if any check fails and 0 otherwise.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
DEFAULT_QUERIES = HERE / "13th-age-srd.queries.jsonl"
VAULTS = REPO_ROOT.parent / "shared" / "bench" / "vaults"


def default_vault(queries: Path) -> Path:
    """``NAME.queries.jsonl`` is labelled over ``../shared/bench/vaults/NAME``."""
    return VAULTS / queries.name.removesuffix(".jsonl").removesuffix(".queries")


TYPES = ("entity", "theme", "bridge", "compare", "temporal", "navigational", "paraphrase")

STOPWORDS = set(
    """a an the and or but if then so of to in on at by for from with without into onto over under
    is are was were be been being am do does did doing done have has had having i im i'm me my mine
    you your yours we our us they them their he him his she her it its this that these those there
    what whats which who whom whose when where why how can cant could should would will wont shall may
    might must not no nor any some all each every both either one ones just only also too very than
    as about vs versus get gets got give gives like want need anything something thing things actually
    up down out off again still even way dont does doesnt isnt arent s t""".split()
)

WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
MDLINK = re.compile(r"\]\(\s*<?([^)<>\n]+?\.md)(?:#[^)\n]*)?>?\s*\)", re.IGNORECASE)
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
TOKEN = re.compile(r"[a-z0-9]+")


# ---------------------------------------------------------------------------- format


def validate_format(path: Path) -> tuple[list[dict], list[str]]:
    """brain eval's own validation of the file, plus this set's extras (``via``, overlaps)."""
    from brain.evaluation.queries import QueryFileError, parse_queries

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [], [f"cannot read {path}: {exc}"]
    try:
        queries = parse_queries(text, str(path))
    except QueryFileError as exc:
        return [], exc.problems or [str(exc)]
    problems: list[str] = []
    records: list[dict] = []
    for q in queries:
        via = q.extra.get("via")
        if via is not None and not (isinstance(via, str) and _is_relative(via)):
            problems.append(f"line {q.line}: via must be a vault-relative path")
        overlap = set(q.relevant) & set(q.partial)
        if overlap:
            problems.append(f"line {q.line}: in both relevant and partial: {sorted(overlap)}")
        records.append(
            {
                "id": q.id,
                "query": q.query,
                "type": q.type,
                "relevant": list(q.relevant),
                "partial": list(q.partial),
                "via": via,
                "_line": q.line,
            }
        )
    return records, problems


def _is_relative(p: str) -> bool:
    pure = PurePosixPath(p.replace("\\", "/"))
    return bool(p.strip()) and not pure.is_absolute() and ".." not in pure.parts


# ---------------------------------------------------------------------------- vault


class Vault:
    def __init__(self, root: Path):
        self.root = root
        self.text: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".obsidian", ".trash", ".git")]
            for name in filenames:
                if name.lower().endswith(".md"):
                    full = Path(dirpath) / name
                    rel = full.relative_to(root).as_posix()
                    self.text[rel] = full.read_text(encoding="utf-8", errors="replace")
        self.by_path = {rel[:-3].lower(): rel for rel in self.text}
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        for rel in self.text:
            self.by_stem[PurePosixPath(rel).stem.lower()].append(rel)
        self._links: dict[str, list[tuple[str, bool]]] | None = None

    def resolve(self, target: str, source: str) -> list[str]:
        t = unquote(target.strip().rstrip("\\")).replace("\\", "/")
        if t.lower().endswith(".md"):
            t = t[:-3]
        if not t:
            return []
        key = t.lower().lstrip("/")
        if key in self.by_path:
            return [self.by_path[key]]
        rel_to_source = posix_norm(str(PurePosixPath(source).parent / t)).lower()
        if rel_to_source in self.by_path:
            return [self.by_path[rel_to_source]]
        return list(self.by_stem.get(PurePosixPath(key).name, []))

    def links(self) -> dict[str, list[tuple[str, bool]]]:
        """note -> [(resolved target, link is inside a fenced code block)]"""
        if self._links is None:
            self._links = {}
            for rel, text in self.text.items():
                out: list[tuple[str, bool]] = []
                for line, in_code in fenced_lines(text):
                    for m in WIKILINK.finditer(line):
                        target = re.split(r"[|#^]", m.group(2), maxsplit=1)[0]
                        out.extend((r, in_code) for r in self.resolve(target, rel) if r != rel)
                    for m in MDLINK.finditer(line):
                        out.extend((r, in_code) for r in self.resolve(m.group(1), rel) if r != rel)
                self._links[rel] = out
        return self._links


def posix_norm(p: str) -> str:
    parts: list[str] = []
    for part in p.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def fenced_lines(text: str):
    fence = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)[0] * len(m.group(1))
                yield line, True
                continue
            yield line, False
        else:
            if m and m.group(1).startswith(fence) and line.strip() == m.group(1):
                fence = None
            yield line, True


# ---------------------------------------------------------------------------- checks


def check_paths(records: list[dict], vault: Vault) -> list[str]:
    problems = []
    for rec in records:
        paths = [("relevant", p) for p in rec["relevant"]] + [("partial", p) for p in rec.get("partial") or []]
        if rec.get("via"):
            paths.append(("via", rec["via"]))
        for key, p in paths:
            if not (vault.root / p).is_file():
                problems.append(f"{rec['id']} (line {rec['_line']}): {key} path not in vault: {p}")
    return problems


def check_bridges(records: list[dict], vault: Vault, verbose: bool) -> tuple[list[str], list[str]]:
    links = vault.links()
    inbound: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for src, outs in links.items():
        for dst, in_code in outs:
            inbound[dst].append((src, in_code))
    problems, warnings = [], []
    for rec in records:
        if rec["type"] != "bridge":
            continue
        rel = [p for p in rec["relevant"] if p in vault.text]
        via = rec.get("via")
        found: list[tuple[str, str, bool]] = []  # (from, to, in_code)
        for r in rel:
            for src, in_code in inbound.get(r, []):
                if via is None or src == via:
                    found.append((src, r, in_code))
            for dst, in_code in links.get(r, []):
                if via is None or dst == via:
                    found.append((r, dst, in_code))
        if not found:
            want = f"between {via} and a relevant note" if via else "to or from a relevant note"
            problems.append(f"{rec['id']}: no link {want}")
            continue
        if all(in_code for _, _, in_code in found):
            warnings.append(
                f"{rec['id']}: the only link(s) {found[0][0]} -> {found[0][1]} are inside a fenced code block"
            )
        if verbose:
            src, dst, in_code = found[0]
            print(f"  bridge {rec['id']}: {src} -> {dst}{' (in code fence)' if in_code else ''}")
    return problems, warnings


# ---------------------------------------------------------------------------- baseline


def tokens(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text.lower().replace("’", "'").replace("'", "")) if t not in STOPWORDS]


def lexical_baseline(records: list[dict], vault: Vault, verbose: bool) -> None:
    notes = sorted(vault.text)
    term_sets = {n: set(tokens(vault.text[n])) for n in notes}
    df: Counter[str] = Counter()
    for terms in term_sets.values():
        df.update(terms)
    n_docs = len(notes)

    def idf(t: str) -> float:
        return math.log((n_docs + 1) / (df.get(t, 0) + 0.5))

    per_type: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for rec in records:
        q_terms = set(tokens(rec["query"]))
        scored = []
        for n in notes:
            s = sum(idf(t) for t in q_terms if t in term_sets[n])
            if s > 0:
                scored.append((-s, n))
        scored.sort()
        ranked = [n for _, n in scored]
        relevant = set(rec["relevant"])
        top1 = bool(ranked) and ranked[0] in relevant
        top10 = any(n in relevant for n in ranked[:10])
        per_type[rec["type"]].append((top1, top10))
        if verbose:
            mark = "HIT " if top1 else ("top10" if top10 else "miss")
            print(f"  {rec['id']} {rec['type']:<12} {mark:<5} top1={ranked[0] if ranked else '-'}")

    print("\nLexical baseline (idf-weighted word overlap over raw note text):")
    print(f"  {'type':<13}{'n':>3}  {'top-1':>12}  {'hit@10':>12}")
    all_rows: list[tuple[bool, bool]] = []
    for t in TYPES:
        rows = per_type.get(t)
        if not rows:
            continue
        all_rows.extend(rows)
        print(f"  {t:<13}{len(rows):>3}  {_share(rows, 0):>12}  {_share(rows, 1):>12}")
    print(f"  {'all':<13}{len(all_rows):>3}  {_share(all_rows, 0):>12}  {_share(all_rows, 1):>12}")


def _share(rows: list[tuple[bool, bool]], i: int) -> str:
    k = sum(1 for r in rows if r[i])
    return f"{k}/{len(rows)} {k / len(rows):.2f}"


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queries", nargs="?", default=str(DEFAULT_QUERIES), help="query file (JSON Lines)")
    ap.add_argument("--vault", help="vault root (default: ../shared/bench/vaults/NAME for NAME.queries.jsonl)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each bridge link and each query's top-1 note")
    args = ap.parse_args(argv)

    qpath = Path(args.queries)
    records, problems = validate_format(qpath)
    if problems:
        print(f"{qpath}: {len(problems)} format problem(s):")
        for p in problems:
            print(f"  {p}")
        return 1
    counts = Counter(r["type"] for r in records)
    print(f"{qpath}: {len(records)} queries, format OK")
    print("  per type: " + ", ".join(f"{t}={counts[t]}" for t in TYPES if counts[t]))
    absent = [t for t in TYPES if not counts[t]]
    if absent:
        print("  no queries of type: " + ", ".join(absent))

    vault_root = Path(args.vault).expanduser() if args.vault else default_vault(qpath)
    if not vault_root.is_dir():
        print(f"vault not found at {vault_root}; skipping path, bridge and baseline checks")
        return 0
    vault = Vault(vault_root.resolve())
    print(f"vault: {vault.root} ({len(vault.text)} notes)")

    failed = False
    path_problems = check_paths(records, vault)
    if path_problems:
        failed = True
        print(f"{len(path_problems)} path problem(s):")
        for p in path_problems:
            print(f"  {p}")
    else:
        n_paths = sum(len(r["relevant"]) + len(r.get("partial") or []) + bool(r.get("via")) for r in records)
        print(f"paths: all {n_paths} relevant/partial/via paths exist")

    bridge_problems, warnings = check_bridges(records, vault, args.verbose)
    if bridge_problems:
        failed = True
        print(f"{len(bridge_problems)} bridge problem(s):")
        for p in bridge_problems:
            print(f"  {p}")
    else:
        print(f"bridges: all {counts['bridge']} bridge queries have a verified link")
    for w in warnings:
        print(f"  warning: {w}")

    lexical_baseline(records, vault, args.verbose)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
