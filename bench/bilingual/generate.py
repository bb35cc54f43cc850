#!/usr/bin/env python3
"""Deterministic generator for brain's bilingual (English + Russian) benchmark vault.

Standard library only. Every note is written by hand in ``texts/`` (no templates: each body is
its own prose); this script adds the frontmatter, validates the vault, writes it, and resolves
the labelled queries (which name notes by title) to vault paths.

    python bench/bilingual/generate.py            # (re)write vault/, queries.jsonl, label_checks.json
    python bench/bilingual/generate.py --check    # regenerate into a temp dir, diff, exit 1 on drift
    python bench/bilingual/generate.py --out DIR  # write DIR/vault/ etc. instead

Validation (any problem stops it): titles and aliases unique (case-insensitively), every
wikilink resolves by title, path or alias, every ``[[Note#Heading]]`` names a heading that
exists, every note has 60-600 words and a ``lang`` of en or ru, and every query names notes
that exist.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from texts import guides, life, people, places, queries, science, work  # noqa: E402

MIN_WORDS, MAX_WORDS = 60, 600
LINK_RE = re.compile(r"(!?)\[\[([^\]\|#]*)(#[^\]\|]*)?(\|[^\]]*)?\]\]")
GENERATED = ["vault", "queries.jsonl", "label_checks.json"]


def all_notes() -> list[dict]:
    tables = [
        people.PEOPLE,
        places.PLACES,
        science.CONCEPTS,
        guides.GUIDES,
        work.PROJECTS,
        work.DECISIONS,
        work.MEETINGS,
        life.LIFE,
        life.READING,
        life.JOURNAL,
        life.MAPS,
        life.INBOX,
    ]
    notes = [dict(n, title=unicodedata.normalize("NFC", n["title"])) for table in tables for n in table]
    for n in notes:
        n["path"] = f"{n['folder']}/{n['title']}.md" if n["folder"] else f"{n['title']}.md"
    return sorted(notes, key=lambda n: n["path"])


# ----- frontmatter ------------------------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-zÀ-ɏЀ-ӿ][\w .,'()/+%°-]*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def yaml_scalar(value: object) -> str:
    text = str(value)
    if _DATE.match(text) or (
        _PLAIN.match(text) and text.lower() not in {"yes", "no", "true", "false", "null", "on", "off"}
    ):
        return text
    return json.dumps(text, ensure_ascii=False)


def render(note: dict) -> str:
    lines = ["---", f"lang: {note['lang']}"]
    for key, value in note["frontmatter"].items():
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}: [{', '.join(yaml_scalar(v) for v in value)}]")
        else:
            lines.append(f"{key}: {yaml_scalar(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + note["body"]


# ----- validation -------------------------------------------------------------------------------


def fold(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip()).casefold()


def resolver(notes: list[dict]):
    by_name: dict[str, dict] = {}
    problems = []
    for n in notes:
        for name in [n["title"], *n["frontmatter"].get("aliases", [])]:
            key = fold(name)
            if key in by_name and by_name[key] is not n:
                problems.append(f"{n['path']}: title or alias {name!r} also names {by_name[key]['path']}")
            by_name[key] = n
    by_path = {fold(n["path"][:-3]): n for n in notes}
    if problems:
        raise SystemExit("duplicate names:\n  " + "\n  ".join(problems))

    def resolve(target: str) -> dict | None:
        key = fold(target)
        key = key[:-3] if key.endswith(".md") else key
        return by_name.get(key) or by_path.get(key)

    return resolve


def validate(notes: list[dict]) -> dict:
    resolve = resolver(notes)
    headings = {n["path"]: set(re.findall(r"^#+ (.+)$", n["body"], flags=re.M)) for n in notes}
    problems = []
    links: dict[str, set[str]] = {n["path"]: set() for n in notes}
    for n in notes:
        if n["lang"] not in ("en", "ru"):
            problems.append(f"{n['path']}: lang {n['lang']!r}")
        words = len(re.findall(r"\w+", n["body"]))
        if not MIN_WORDS <= words <= MAX_WORDS:
            problems.append(f"{n['path']}: {words} words, outside {MIN_WORDS}-{MAX_WORDS}")
        text = render(n)
        for _bang, target, heading, _display in LINK_RE.findall(text):
            hit = resolve(target)
            if hit is None:
                problems.append(f"{n['path']}: unresolved link [[{target}]]")
                continue
            if heading and heading[1:] not in headings[hit["path"]]:
                problems.append(f"{n['path']}: [[{target}{heading}]] names no heading of {hit['path']}")
            if hit["path"] != n["path"]:
                links[n["path"]].add(hit["path"])
    if problems:
        raise SystemExit("vault validation failed:\n  " + "\n  ".join(problems))
    return links


def build_queries(notes: list[dict]) -> tuple[list[dict], dict]:
    resolve = resolver(notes)
    records, checks = [], {"bridge": {}, "temporal": {}}
    problems = []

    def paths(titles: list[str], qid: str) -> list[str]:
        out = []
        for title in titles:
            hit = resolve(title)
            if hit is None:
                problems.append(f"{qid}: no note titled {title!r}")
            else:
                out.append(hit["path"])
        return out

    for spec in queries.QUERIES:
        record = {
            "id": spec["id"],
            "query": spec["query"],
            "type": spec["type"],
            "lang": spec["lang"],
            "relevant": paths(spec["relevant"], spec["id"]),
        }
        if spec["partial"]:
            record["partial"] = paths(spec["partial"], spec["id"])
        records.append(record)
        if spec["type"] == "bridge":
            via = paths([spec["via"]], spec["id"])
            checks["bridge"][spec["id"]] = {"via": via[0] if via else None, "distinctive": spec["distinctive"]}
        if spec["type"] == "temporal":
            checks["temporal"][spec["id"]] = {"older": paths(spec["older"], spec["id"])}
    if problems:
        raise SystemExit("query labels failed:\n  " + "\n  ".join(problems))
    return records, checks


# ----- writing ----------------------------------------------------------------------------------


def write_all(out_dir: str) -> tuple[list[dict], list[dict], dict]:
    notes = all_notes()
    links = validate(notes)
    records, checks = build_queries(notes)
    vault = os.path.join(out_dir, "vault")
    if os.path.isdir(vault):  # remove the previous notes only; anything else is left alone
        for root, _dirs, files in os.walk(vault, topdown=False):
            if os.sep + "." in root[len(vault) :]:
                continue
            for name in files:
                if name.endswith(".md"):
                    os.remove(os.path.join(root, name))
            if root != vault and not os.listdir(root):
                os.rmdir(root)
    for n in notes:
        path = os.path.join(vault, *n["path"].split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(render(n))
    with open(os.path.join(out_dir, "queries.jsonl"), "w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "label_checks.json"), "w", encoding="utf-8", newline="\n") as handle:
        json.dump(checks, handle, ensure_ascii=False, indent=1, sort_keys=True)
        handle.write("\n")
    return notes, records, {"links": links}


def tree_files(root: str) -> dict[str, bytes]:
    out = {}
    for name in GENERATED:
        path = os.path.join(root, name)
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                out[name] = handle.read()
        elif os.path.isdir(path):
            for folder, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for file in files:
                    if file.endswith(".md"):
                        full = os.path.join(folder, file)
                        rel = unicodedata.normalize("NFC", os.path.relpath(full, root).replace(os.sep, "/"))
                        with open(full, "rb") as handle:
                            out[rel] = handle.read()
    return out


def check(committed_root: str) -> int:
    with tempfile.TemporaryDirectory(prefix="bilingual-check-") as tmp:
        write_all(tmp)
        fresh = tree_files(tmp)
    have = tree_files(committed_root)
    missing, extra = sorted(set(fresh) - set(have)), sorted(set(have) - set(fresh))
    changed = sorted(k for k in set(fresh) & set(have) if fresh[k] != have[k])
    for k in missing:
        print(f"missing (the generator writes it, the repository lacks it): {k}")
    for k in extra:
        print(f"extra (in the repository, the generator does not write it): {k}")
    for k in changed[:20]:
        print(f"differs: {k}")
        a, b = have[k].decode("utf-8", "replace").splitlines(), fresh[k].decode("utf-8", "replace").splitlines()
        for line in list(difflib.unified_diff(a, b, "committed", "regenerated", lineterm="", n=1))[:12]:
            print("    " + line)
    if missing or extra or changed:
        print(f"CHECK FAILED: {len(missing)} missing, {len(extra)} extra, {len(changed)} differing")
        return 1
    print(f"check ok: {len(fresh)} files reproduced byte for byte")
    return 0


def summary(notes: list[dict], records: list[dict], stats: dict) -> None:
    langs: dict[str, int] = {}
    for n in notes:
        langs[n["lang"]] = langs.get(n["lang"], 0) + 1
    words = sorted(len(re.findall(r"\w+", n["body"])) for n in notes)
    links = stats["links"]
    inbound = {p: 0 for p in links}
    for targets in links.values():
        for t in targets:
            inbound[t] += 1
    lang_of = {n["path"]: n["lang"] for n in notes}
    cross = sum(1 for src, targets in links.items() for t in targets if lang_of[src] != lang_of[t])
    print(f"notes: {len(notes)} (" + ", ".join(f"{k} {v}" for k, v in sorted(langs.items())) + ")")
    print(f"words per note: min {words[0]}, median {words[len(words) // 2]}, max {words[-1]}, total {sum(words)}")
    print(f"links between notes: {sum(len(t) for t in links.values())}, of which across languages: {cross}")
    print(f"notes with no link either way: {sum(1 for p in links if not links[p] and not inbound[p])}")
    for key in ("type", "lang"):
        counts: dict[str, int] = {}
        for r in records:
            counts[r[key]] = counts.get(r[key], 0) + 1
        print(f"queries by {key}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", default=HERE, help="where to write vault/ and queries.jsonl (default: beside this script)"
    )
    parser.add_argument("--check", action="store_true", help="regenerate into a temp dir and diff against --out")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.out)
    notes, records, stats = write_all(args.out)
    if not args.quiet:
        summary(notes, records, stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
