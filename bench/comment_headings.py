"""What reading no heading inside an HTML comment (m031_no_headings_in_html_comments), and no HTML
comment in a heading's text (m033_no_html_comments_in_headings), changes of a vault: the notes
whose chunks (heading paths and texts) differ from another brain's, the notes m031 reads again
(``schema.may_hide_a_heading`` of their chunks, as that brain cut them with ``--old``; before, every
note with a chunk holding ``<!--`` or ``-->``: the count it read again is given too) and, with
``--old``, those m033 reads again (a chunk heading holding ``<!--`` by that brain).

Every markdown file is chunked by this checkout (``parse_and_chunk``, mtime 0) and, with
``--old DIR`` (another brain's checkout, e.g. ``git archive main | tar -x -C DIR``), by that code
too, in a child process (PYTHONPATH=DIR).

    python bench/comment_headings.py VAULT [VAULT ...] [--old DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from brain.index.schema import may_hide_a_heading

# Run as a child under PYTHONPATH=<a checkout>: each note's chunks as that brain cuts them.
CHILD = """
import json, pathlib, sys
from brain.index.parsing import parse_and_chunk
root = pathlib.Path(sys.argv[1])
out = {}
for path in sorted(root.rglob("*.md")):
    chunks = parse_and_chunk(path.relative_to(root).as_posix(), path.read_bytes(), 0.0)[1]
    out[path.relative_to(root).as_posix()] = [[list(c.heading_path), c.text] for c in chunks]
json.dump(out, sys.stdout)
"""


def chunked(vault: Path, checkout: Path) -> dict[str, list]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    # run in the checkout: "python -c" puts the working folder first on sys.path, before
    # PYTHONPATH, and run from another checkout's root it read that one's brain, not DIR's
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(vault.resolve())], env=env, cwd=checkout, capture_output=True, check=True
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="+", type=Path)
    parser.add_argument("--old", type=Path, help="another brain's checkout to compare with")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    for vault in args.vaults:
        new = chunked(vault, here)
        old = chunked(vault, args.old) if args.old else new
        marked = [path for path, chunks in old.items() if may_hide_a_heading("\n".join(t for _, t in chunks))]
        arrows = [path for path, chunks in old.items() if any("<!--" in t or "-->" in t for _, t in chunks)]
        print(
            f"{vault.name}: {len(new)} notes; m031 reads again {len(marked)} (every note with <!-- or -->: {len(arrows)})"
        )
        if args.old:
            headed = [
                path
                for path, chunks in old.items()
                if any("<!--" in h for heading_path, _ in chunks for h in heading_path)
            ]
            print(f"  m033 reads again (a comment in a heading by {args.old}) {len(headed)}")
            differ = [path for path in new if old.get(path) != new[path]]
            print(f"  chunked otherwise than by {args.old}: {len(differ)}")
            for path in differ:
                print(f"    {path}: {[h for h, _ in old[path]]} -> {[h for h, _ in new[path]]}")


if __name__ == "__main__":
    main()
