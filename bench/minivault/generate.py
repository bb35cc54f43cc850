#!/usr/bin/env python3
"""Deterministic generator for the brain mini-vault retrieval benchmark.

Standard library only. The world (a small cold-chain logistics company, Brackwater, plus
the personal notes of one of its engineering managers) lives in hand-written content tables
under ``content/``; this module turns those tables into an Obsidian vault and writes the
labelled queries built from the same tables.

    python bench/minivault/generate.py            # (re)write bench/minivault/vault/ and queries.jsonl
    python bench/minivault/generate.py --check    # regenerate into a temp dir and diff, exit 1 on drift
    python bench/minivault/generate.py --out DIR  # write DIR/vault/ and DIR/queries.jsonl instead

Everything is deterministic: every random choice comes from ``random.Random`` seeded with a
string derived from the note path, tables are iterated in a fixed order, and files are
written as UTF-8 with ``\\n`` line endings.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from content import (  # noqa: E402
    common,
    concepts,
    decisions,
    life,
    meetings,
    misc,
    people,
    projects,
    reading,
)
from content import queries as query_tables  # noqa: E402

SEED = "brain-minivault-v1"
MIN_WORDS, MAX_WORDS = 100, 1200

# ---------------------------------------------------------------------------------------------
# A tiny combinatorial grammar:  «a|b|c» picks one alternative (nesting allowed, innermost
# first), {var} substitutes a variable. Wikilink brackets are untouched.
# ---------------------------------------------------------------------------------------------

_ALT = re.compile(r"«([^«»]*)»")
_VAR = re.compile(r"\{(\w+)\}")


def expand(rng: random.Random, text: str, **vars: str) -> str:
    while True:
        m = _ALT.search(text)
        if not m:
            break
        options = m.group(1).split("|")
        text = text[: m.start()] + options[rng.randrange(len(options))] + text[m.end() :]

    def sub(m: re.Match) -> str:
        key = m.group(1)
        if key not in vars:
            raise KeyError(f"template variable {key!r} not supplied in: {text[:80]!r}")
        return str(vars[key])

    return _VAR.sub(sub, text)


class Note:
    def __init__(self, folder: str, title: str, kind: str):
        self.folder = folder
        self.title = unicodedata.normalize("NFC", title)
        self.kind = kind
        self.frontmatter: list[tuple[str, object]] = []
        self.body = ""
        self.aliases: list[str] = []
        self.superseded = False

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.title}.md" if self.folder else f"{self.title}.md"

    def rng(self, salt: str = "") -> random.Random:
        return random.Random(f"{SEED}|{self.path}|{salt}")


# ---------------------------------------------------------------------------------------------
# Frontmatter
# ---------------------------------------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-z0-9À-ɏЀ-ӿ][\w .,'()/+%°-]*$")
_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


def yaml_scalar(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if _DATE.match(s):
        return s
    plain = (
        _PLAIN.match(s) and not s.endswith(" ") and s.lower() not in {"yes", "no", "true", "false", "null", "on", "off"}
    )
    if plain and (not re.match(r"^\d", s) or not re.match(r"^[\d.]+$", s)):
        return s
    return json.dumps(s, ensure_ascii=False)


def render_frontmatter(items: list[tuple[str, object]]) -> str:
    if not items:
        return ""
    lines = ["---"]
    for key, value in items:
        if isinstance(value, (list, tuple)):
            if not value:
                continue
            flat = ", ".join(yaml_scalar(x) for x in value)
            if len(flat) <= 60 and not any("[[" in str(x) for x in value):
                lines.append(f"{key}: [{flat}]")
            else:
                lines.append(f"{key}:")
                lines.extend(f"  - {yaml_scalar(x)}" for x in value)
        elif value is None or value == "":
            continue
        else:
            lines.append(f"{key}: {yaml_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Building and validating the vault
# ---------------------------------------------------------------------------------------------

LINK_RE = re.compile(r"(!?)\[\[([^\]\|#]*)(#[^\]\|]*)?(\|[^\]]*)?\]\]")


def build_notes() -> list[Note]:
    ctx = common.Context(Note, expand)
    for module in (people, projects, misc, concepts, decisions, meetings, reading, life):
        module.register(ctx)
    # Second phase: writers may need to know every note (hubs, backlink lists).
    for module in (people, projects, misc, concepts, decisions, meetings, reading, life):
        module.write(ctx)
    notes = sorted(ctx.notes, key=lambda n: n.path)
    paths = [n.path for n in notes]
    if len(paths) != len(set(paths)):
        raise SystemExit("duplicate note paths")
    titles = [n.title.lower() for n in notes]
    dup = sorted({t for t in titles if titles.count(t) > 1})
    if dup:
        raise SystemExit(f"duplicate note titles (ambiguous links): {dup}")
    return notes


def resolver(notes: list[Note]):
    by_title = {n.title.lower(): n for n in notes}
    by_path = {n.path[:-3].lower(): n for n in notes}
    by_alias: dict[str, Note] = {}
    for n in notes:
        for a in n.aliases:
            key = a.lower()
            if key in by_title or key in by_alias:
                raise SystemExit(f"alias {a!r} of {n.path} collides with another title/alias")
            by_alias[key] = n

    def resolve(target: str):
        t = unicodedata.normalize("NFC", target.strip())
        if t.lower().endswith(".md"):
            t = t[:-3]
        k = t.lower()
        return by_title.get(k) or by_path.get(k) or by_alias.get(k)

    return resolve


def validate(notes: list[Note]) -> dict:
    resolve = resolver(notes)
    headings = {n.path: set(re.findall(r"^#+ (.+)$", n.body, flags=re.M)) for n in notes}
    dangling: list[tuple[str, str]] = []
    forms = {
        "plain": 0,
        "display alias": 0,
        "heading": 0,
        "embed": 0,
        "path-qualified": 0,
        "to frontmatter alias": 0,
        "in frontmatter": 0,
    }
    out_links: dict[str, set[str]] = {n.path: set() for n in notes}
    problems: list[str] = []
    for n in notes:
        text = render_frontmatter(n.frontmatter) + n.body
        for bang, target, heading, _alias in LINK_RE.findall(text):
            if not target.strip():
                continue  # [[#Heading]] inside the same note
            hit = resolve(target)
            forms["embed" if bang else "heading" if heading else "display alias" if _alias else "plain"] += 1
            if "/" in target:
                forms["path-qualified"] += 1
            if hit is not None and target.strip().lower() != hit.title.lower() and "/" not in target:
                forms["to frontmatter alias"] += 1
            if f"[[{target}" in render_frontmatter(n.frontmatter):
                forms["in frontmatter"] += 1
            if hit is None:
                if re.search(r"\.(png|jpe?g|pdf|gif|webp)$", target, flags=re.I):
                    dangling.append((n.path, target))
                    continue
                if target in common.DANGLING:
                    dangling.append((n.path, target))
                    continue
                problems.append(f"{n.path}: unresolved link [[{target}]]")
                continue
            if heading and heading[1:] not in headings[hit.path]:
                problems.append(f"{n.path}: [[{target}{heading}]] - no such heading in {hit.path}")
            if hit.path != n.path:
                out_links[n.path].add(hit.path)
        words = len(re.findall(r"\w+", n.body))
        if not (MIN_WORDS <= words <= MAX_WORDS):
            problems.append(f"{n.path}: {words} words, outside {MIN_WORDS}-{MAX_WORDS}")
    used_dangling = {t for _, t in dangling if t in common.DANGLING}
    for t in sorted(set(common.DANGLING) - used_dangling):
        problems.append(f"declared dangling link never used: {t}")
    if problems:
        raise SystemExit("vault validation failed:\n  " + "\n  ".join(problems))
    inbound: dict[str, int] = {n.path: 0 for n in notes}
    for dsts in out_links.values():
        for d in dsts:
            inbound[d] += 1
    isolated = [p for p in out_links if not out_links[p] and not inbound[p]]
    no_out = [p for p in out_links if not out_links[p]]
    return {
        "out": out_links,
        "inbound": inbound,
        "isolated": isolated,
        "no_out": no_out,
        "dangling": dangling,
        "forms": forms,
    }


def build_queries(notes: list[Note]) -> tuple[list[dict], dict]:
    resolve = resolver(notes)
    by_path = {n.path: n for n in notes}
    records, meta = query_tables.build(notes, resolve, expand)
    seen = set()
    for q in records:
        if q["id"] in seen:
            raise SystemExit(f"duplicate query id {q['id']}")
        seen.add(q["id"])
        for p in q["relevant"] + q.get("partial", []):
            if p not in by_path:
                raise SystemExit(f"query {q['id']}: unknown path {p}")
        if set(q["relevant"]) & set(q.get("partial", [])):
            raise SystemExit(f"query {q['id']}: a path is both relevant and partial")
        if not q["relevant"]:
            raise SystemExit(f"query {q['id']}: no relevant notes")
    return records, meta


def write_all(out_dir: str) -> tuple[list[Note], list[dict], dict]:
    notes = build_notes()
    stats = validate(notes)
    records, meta = build_queries(notes)
    vault = os.path.join(out_dir, "vault")
    if os.path.isdir(vault):
        # Remove the previous notes only; anything else (an .obsidian/ folder, say) is left alone.
        for root, _dirs, files in os.walk(vault, topdown=False):
            if os.sep + "." in root[len(vault) :]:
                continue
            for f in files:
                if f.endswith(".md"):
                    os.remove(os.path.join(root, f))
            if root != vault and not os.listdir(root):
                os.rmdir(root)
    for n in notes:
        path = os.path.join(vault, *n.path.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = render_frontmatter(n.frontmatter) + n.body.rstrip("\n") + "\n"
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    with open(os.path.join(out_dir, "queries.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        for q in records:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "label_checks.json"), "w", encoding="utf-8", newline="\n") as fh:
        json.dump(meta, fh, ensure_ascii=False, indent=1, sort_keys=True)
        fh.write("\n")
    return notes, records, stats


GENERATED = ["vault", "queries.jsonl", "label_checks.json"]


def tree_files(root: str) -> dict[str, bytes]:
    out = {}
    for name in GENERATED:
        p = os.path.join(root, name)
        if os.path.isfile(p):
            with open(p, "rb") as fh:
                out[name] = fh.read()
        elif os.path.isdir(p):
            for r, d, files in os.walk(p):
                d[:] = [x for x in d if not x.startswith(".")]
                for f in files:
                    if not f.endswith(".md"):
                        continue
                    full = os.path.join(r, f)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    with open(full, "rb") as fh:
                        out[unicodedata.normalize("NFC", rel)] = fh.read()
    return out


def check(committed_root: str) -> int:
    with tempfile.TemporaryDirectory(prefix="minivault-check-") as tmp:
        write_all(tmp)
        fresh = tree_files(tmp)
    have = tree_files(committed_root)
    missing = sorted(set(fresh) - set(have))
    extra = sorted(set(have) - set(fresh))
    changed = sorted(k for k in set(fresh) & set(have) if fresh[k] != have[k])
    for k in missing:
        print(f"missing (generator writes it, repo lacks it): {k}")
    for k in extra:
        print(f"extra (in repo, generator does not write it): {k}")
    for k in changed[:20]:
        print(f"differs: {k}")
        a = have[k].decode("utf-8", "replace").splitlines()
        b = fresh[k].decode("utf-8", "replace").splitlines()
        for line in list(difflib.unified_diff(a, b, "committed", "regenerated", lineterm="", n=1))[:12]:
            print("    " + line)
    if len(changed) > 20:
        print(f"... and {len(changed) - 20} more differing files")
    if missing or extra or changed:
        print(f"CHECK FAILED: {len(missing)} missing, {len(extra)} extra, {len(changed)} differing")
        return 1
    print(f"check ok: {len(fresh)} files reproduced byte for byte")
    return 0


def summary(notes: list[Note], records: list[dict], stats: dict) -> None:
    folders: dict[str, int] = {}
    for n in notes:
        top = n.path.split("/")[0]
        folders[top] = folders.get(top, 0) + 1
    words = [len(re.findall(r"\w+", n.body)) for n in notes]
    print(f"notes: {len(notes)}  (" + ", ".join(f"{k} {v}" for k, v in sorted(folders.items())) + ")")
    print(
        f"words per note: min {min(words)}, median {sorted(words)[len(words) // 2]}, max {max(words)}, total {sum(words)}"
    )
    print(f"notes with no outgoing links: {len(stats['no_out'])}; with no links either way: {len(stats['isolated'])}")
    print(f"dangling link occurrences: {len(stats['dangling'])}")
    forms = stats["forms"]
    print("link forms: " + ", ".join(f"{k} {forms[k]}" for k in sorted(forms)))
    types: dict[str, int] = {}
    for q in records:
        types[q["type"]] = types.get(q["type"], 0) + 1
    print(f"queries: {len(records)}  (" + ", ".join(f"{k} {v}" for k, v in sorted(types.items())) + ")")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--out", default=HERE, help="directory to write vault/ and queries.jsonl into (default: next to this script)"
    )
    ap.add_argument("--check", action="store_true", help="regenerate into a temp dir and diff against --out")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.check:
        return check(args.out)
    notes, records, stats = write_all(args.out)
    if not args.quiet:
        summary(notes, records, stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
