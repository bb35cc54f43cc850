"""What reading frontmatter dates by brain/moments.py's rules (m024_frontmatter_dates), in ASCII
digits alone (m025_frontmatter_dates_in_ascii_digits), from their keys in any case
(m030_date_keys_in_any_case), changes of a vault: the notes whose date or date warnings change,
and the notes m024, m025 and m030 read again.

For each vault given, every markdown file with frontmatter is parsed by this checkout
(``notes.parse_note``, the file's mtime standing in at 0); printed: how many, the notes m024
marks to be read again (``notes.frontmatter_dates_written_otherwise``: a date field written
otherwise than as its ISO form) and those m025 marks (``notes.frontmatter_dates_in_other_digits``:
a date field with digits other than ASCII's) and those m030 marks
(``notes.frontmatter_date_key_in_other_case``: ``Created:``) and those m032 marks
(``notes.frontmatter_status_key_in_other_case``: ``Status:``), each with its date fields. With ``--old DIR`` (another brain's
checkout, e.g. ``git archive main | tar -x -C DIR``), the same files are parsed by that code too
(in a child process: PYTHONPATH=DIR), and the notes whose date or date warnings differ are
listed, old and new.

With ``--rows N``, m024's and m025's checks (the SQL function each runs over every note's and
every past version's frontmatter) are timed over N rows of a typical frontmatter (a title, tags,
aliases, a YAML date and a date and time) in an in-memory table; m025's also over N rows whose
title is not ASCII (Russian), which its first look (ASCII JSON: no such digit) does not pass.

    python bench/frontmatter_dates.py VAULT [VAULT ...] [--old DIR] [--rows N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

# Run as a child under PYTHONPATH=<a checkout>: that brain's date and date warnings of each file.
CHILD = """
import json, pathlib, sys
from brain.notes import parse_note
root = pathlib.Path(sys.argv[1])
out = {}
for path in sorted(root.rglob("*.md")):
    data = path.read_bytes()
    if data.startswith(b"---"):
        note = parse_note(path.relative_to(root).as_posix(), data, 0)
        out[note.path] = [note.date, [w for w in note.warnings if "date" in w], note.frontmatter]
json.dump(out, sys.stdout, default=str)
"""


def parsed(vault: Path, checkout: Path) -> dict[str, list]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(vault)], env=env, capture_output=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vaults", nargs="*", type=Path)
    parser.add_argument("--old", type=Path, help="another brain's checkout to compare with")
    parser.add_argument("--rows", type=int, help="time m024's check over this many rows")
    args = parser.parse_args()
    from brain.notes import (
        frontmatter_date_key_in_other_case,
        frontmatter_dates_in_other_digits,
        frontmatter_dates_written_otherwise,
        frontmatter_status_key_in_other_case,
    )

    if args.rows:
        import sqlite3
        import time

        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, frontmatter TEXT, hash TEXT, mtime_ns INTEGER)")
        meta = {"title": "A note", "tags": ["x", "y"], "aliases": ["b"], "date": "2026-01-05"}
        rows = [(json.dumps(meta | {"created": "2026-01-05T10:30:00"}),)] * args.rows
        conn.executemany("INSERT INTO notes (frontmatter, hash, mtime_ns) VALUES (?, 'h', 1)", rows)
        conn.create_function(
            "brain_dates_written_otherwise", 1, frontmatter_dates_written_otherwise, deterministic=True
        )
        started = time.perf_counter()
        conn.execute("UPDATE notes SET hash = '', mtime_ns = -1 WHERE brain_dates_written_otherwise(frontmatter)")
        print(f"m024's check over {args.rows:,} rows: {time.perf_counter() - started:.2f} s")
        conn.create_function("brain_dates_in_other_digits", 1, frontmatter_dates_in_other_digits, deterministic=True)
        for what, title in (("ASCII", "A note"), ("Russian", "Заметка о памяти")):
            conn.execute("DELETE FROM notes")
            stored = json.dumps(meta | {"title": title, "created": "2026-01-05T10:30:00"}, ensure_ascii=False)
            conn.executemany(
                "INSERT INTO notes (frontmatter, hash, mtime_ns) VALUES (?, 'h', 1)", [(stored,)] * args.rows
            )
            started = time.perf_counter()
            conn.execute("UPDATE notes SET hash = '', mtime_ns = -1 WHERE brain_dates_in_other_digits(frontmatter)")
            print(f"m025's check over {args.rows:,} rows, {what} titles: {time.perf_counter() - started:.2f} s")

    here = Path(__file__).resolve().parent.parent
    for vault in args.vaults:
        new = parsed(vault, here)
        marked = [path for path, (_, _, meta) in new.items() if frontmatter_dates_written_otherwise(json.dumps(meta))]
        digits = [
            path
            for path, (_, _, meta) in new.items()
            if frontmatter_dates_in_other_digits(json.dumps(meta, ensure_ascii=False))
        ]
        cased = [path for path, (_, _, meta) in new.items() if frontmatter_date_key_in_other_case(json.dumps(meta))]
        status = [path for path, (_, _, meta) in new.items() if frontmatter_status_key_in_other_case(json.dumps(meta))]
        print(
            f"{vault.name}: {len(new)} notes with frontmatter; m024 reads again {len(marked)}, m025 {len(digits)},"
            f" m030 {len(cased)}, m032 (Status:) {len(status)}"
        )
        for path in dict.fromkeys(marked + digits + cased + status):
            fields = {
                k: v
                for k, v in new[path][2].items()
                if "date" in k.lower() or k.lower() in ("created", "updated", "status")
            }
            print(f"  {path}: {fields}")
        if args.old:
            old = parsed(vault, args.old)
            differ = [path for path in new if old.get(path, new[path])[:2] != new[path][:2]]
            print(f"  read otherwise than by {args.old}: {len(differ)}")
            for path in differ:
                print(f"    {path}: {old[path][:2]} -> {new[path][:2]}")


if __name__ == "__main__":
    main()
