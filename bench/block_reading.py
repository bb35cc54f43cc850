"""What reading setext headings, fences in quotes, callouts and list items, and a comment opened
on a heading line as Obsidian does (m034_setext_headings_and_nested_fences), and math and
indented code (m036_math_and_indented_code), changes of a vault: the notes m034 and m036 read
again and, with ``--old``, every note whose links, tags, outline (``brain
note``'s headings) or chunks (heading paths and texts) differ from another brain's, each
difference shown, and the CPU time each brain takes to parse and chunk the vault.

Every markdown file is read by this checkout (``parse_and_chunk`` and ``reading.headings``, mtime
0) and, with ``--old DIR`` (another brain's checkout, e.g. ``git archive main | tar -x -C DIR``),
by that code too, in a child process (PYTHONPATH=DIR).

    python bench/block_reading.py VAULT [VAULT ...] [--old DIR] [--chunking note]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

# Run as a child under PYTHONPATH=<a checkout>: each note as that brain reads it.
CHILD = """
import json, pathlib, sys, time
from brain.index.parsing import parse_and_chunk
from brain.notes import parse_note
from brain.reading import headings
root = pathlib.Path(sys.argv[1])
kw = {} if sys.argv[2] == "heading" else {"strategy": sys.argv[2]}  # the default: any brain's
files = [(path.relative_to(root).as_posix(), path.read_bytes()) for path in sorted(root.rglob("*.md"))]
best = None
for _ in range(3):  # the CPU time of parsing and chunking every note, the best of 3
    start = time.process_time()
    for name, data in files:
        parse_and_chunk(name, data, 0.0, **kw)
    spent = time.process_time() - start
    best = spent if best is None else min(best, spent)
out = {"": best}
for name, data in files:
    note, chunks, _ = parse_and_chunk(name, data, 0.0, **kw)
    out[name] = {
        "links": [[k.target, k.kind, k.anchor, k.line] for k in note.links],
        "tags": note.tags,
        "outline": [h["path"] for h in headings(parse_note(name, data, 0.0).body)],
        "chunks": [[list(c.heading_path), c.text] for c in chunks],
    }
json.dump(out, sys.stdout)
"""


def read(vault: Path, checkout: Path, strategy: str) -> dict[str, dict]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    # run in the checkout: "python -c" puts the working folder first on sys.path, before
    # PYTHONPATH, and run from another checkout's root it read that one's brain
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(vault.resolve()), strategy],
        env=env,
        cwd=checkout,
        capture_output=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--old", type=Path, help="another brain's checkout to compare with")
    parser.add_argument(
        "--chunking", default="heading", help="BRAIN_CHUNKING's strategy (heading, short, note, windows)"
    )
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(here))
    from brain.index.schema import (
        first_line_may_have_been_code,
        may_hold_heading_line,
        may_hold_math_or_indented_code,
        opens_math_block,
        read_otherwise_since_m034,
    )

    stripped = args.chunking in ("note", "windows")  # their chunks lost a first line's indent

    def marked_by_m036(chunks: list[list]) -> bool:
        texts = [text for _, text in chunks]
        may = [may_hold_math_or_indented_code(t) or (stripped and first_line_may_have_been_code(t)) for t in texts]
        links = any(may) and any("[[" in t or "](" in t or "#" in t for t in texts)
        return links or (any(opens_math_block(t) for t in texts) and any(may_hold_heading_line(t) for t in texts))

    for vault in args.vaults:
        new = read(vault, here, args.chunking)
        seconds = new.pop("")
        marked = [path for path, note in new.items() if any(read_otherwise_since_m034(t) for _, t in note["chunks"])]
        again = [path for path, note in new.items() if marked_by_m036(note["chunks"])]
        print(f"{vault.name}: {len(new)} notes; m034 reads again {len(marked)}, m036 {len(again)}")
        if not args.old:
            continue
        old = read(vault, args.old, args.chunking)
        old_seconds = old.pop("")
        print(f"  parsed and chunked in {seconds:.2f} s of CPU, {args.old} in {old_seconds:.2f} s (best of 3 each)")
        stored = set()  # read otherwise where an index keeps it: m034 must read these again
        for part in ("links", "tags", "outline", "chunks"):
            differ = [path for path in new if old.get(path, {}).get(part) != new[path][part]]
            stored |= set(differ) if part != "outline" else set()  # brain note reads the file
            print(f"  {part} read otherwise than by {args.old}: {len(differ)}")
            for path in differ:
                before, after = old.get(path, {}).get(part), new[path][part]
                if part == "chunks":
                    before = [h for h, _ in before or []] if before else before
                    after = [h for h, _ in after]
                    if before == after:
                        print(f"    {path}: the same heading paths, a chunk's text otherwise")
                        continue
                print(f"    {path}: {before} -> {after}")
        print(
            f"  of the {len(stored)} read otherwise in the index, m034 reads again {len(stored & set(marked))},"
            f" m036 {len(stored & set(again))}"
        )


if __name__ == "__main__":
    main()
