"""Does one huge note hide its title's words from BM25? (schema.py m022_title_in_first_chunks)

A copy of vaultofknowledge, with or without a journal of thousands of lines named after the
word of a small note's title ("NixOS journal.md" beside the five-line "NixOS.md"), indexed by
whichever brain is on PYTHONPATH; prints how many BM25 rows and notes hold the word, and where
each note ranks for a query by the word: BM25 alone, hybrid, hybrid+ppr (with each result's
lanes). Run it with the old tree, then the new one over a copy of the same BRAIN_HOME: the new
brain migrates the index as it opens it (its time printed).

    BRAIN_EMBED_MODEL=<MiniLM> BRAIN_HOME=<dir> python bench/big_title.py --copy /tmp/x/vault [--without-big]
"""

from __future__ import annotations

import argparse
import math
import shutil
import sqlite3
import time
from pathlib import Path

VAULT = Path(__file__).resolve().parents[2] / "shared" / "bench" / "vaults" / "vaultofknowledge"
SMALL = "06. Collected Knowledge/NixOS.md"
BIG = "NixOS journal.md"
WORD = "nixos"
QUERIES = ("NixOS", "what is NixOS", "NixOS package manager", "nixos linux")


def journal(days: int = 400) -> str:
    """A journal of ``days`` entries, ~9 lines each, none naming the title's word."""
    lines = ["# NixOS journal", ""]
    for day in range(days):
        lines += [f"## Day {day + 1}", ""]
        lines += [
            f"- rebuilt the system after changing the firewall rules ({day % 7} ports)",
            "- switched to the new generation and rebooted; the display manager came up",
            "- garbage collected the store, freed some space, pinned the channel",
            f"- the laptop's battery held {60 + day % 30}% after a day of work",
            "- updated the flake inputs and read the changelog of the kernel",
            "",
        ]
    return "\n".join(lines) + "\n"


def rank(paths: list[str], path: str) -> str:
    return str(paths.index(path) + 1) if path in paths else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copy", type=Path, required=True, help="the vault copy (made when missing)")
    parser.add_argument("--without-big", action="store_true", help="the copy without the journal")
    args = parser.parse_args()
    if not args.copy.exists():
        shutil.copytree(VAULT, args.copy)
    big = args.copy / BIG
    if args.without_big:
        big.unlink(missing_ok=True)
    else:
        big.write_text(journal(), encoding="utf-8")

    from brain import config
    from brain.index.store import IndexStore
    from brain.recall.lexical import lexical_search
    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings

    database = config.index_dir(args.copy) / "index.db"
    if database.exists():
        before = _applied(database)
        started = time.perf_counter()
        IndexStore.open(database.parent, create=False).close()  # applies the migrations it lacks
        applied = sorted(set(_applied(database)) - set(before))
        print(f"opened the index in {time.perf_counter() - started:.2f} s, migrations applied: {applied or 'none'}")
    started = time.perf_counter()
    recaller = open_recaller(args.copy, build=True, progress=False, rerank_model=None)
    print(
        f"brought up to date in {time.perf_counter() - started:.1f} s; the journal {'absent' if args.without_big else 'present'}"
    )
    try:
        store = recaller.store
        conn = store.conn
        rows = store.fts_row_count()
        held = store.term_chunk_counts([WORD])[WORD]
        notes = conn.execute(
            "SELECT count(DISTINCT c.note_id) FROM chunks_fts f JOIN chunks c ON c.id = f.rowid WHERE chunks_fts MATCH ?",
            (WORD,),
        ).fetchone()[0]
        by_column = {
            column: conn.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f"{column} : {WORD}",)
            ).fetchone()[0]
            for column in ("title", "heading", "text")
        }
        idf = math.log((rows - held + 0.5) / (held + 0.5))  # FTS5's, floored at 1e-6
        print(
            f"'{WORD}': in {held} of {rows} BM25 rows ({held / rows:.1%}; the lane drops a term over 25%),"
            f" {notes} notes; IDF {max(idf, 1e-6):.2f}; rows by column {by_column}"
        )
        for query in QUERIES:
            lexical = [c.path for c in lexical_search(store, query, depth=30)]
            line = [f"{query!r}: BM25 alone small {rank(lexical, SMALL)}, journal {rank(lexical, BIG)}"]
            for mode in ("hybrid", "hybrid+ppr"):
                results = recaller.ask(query, mode, RecallSettings(k=10)).results
                paths = [c.path for c in results]
                lanes = {c.path: "+".join(sorted(c.sources)) for c in results}
                line.append(
                    f"{mode} small {rank(paths, SMALL)} ({lanes.get(SMALL, '')}),"
                    f" journal {rank(paths, BIG)} ({lanes.get(BIG, '')})"
                )
            print("; ".join(line))
    finally:
        recaller.close()


def _applied(database: Path) -> list[str]:
    conn = sqlite3.connect(database)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM _migrations WHERE db = 'index'")]
    finally:
        conn.close()


if __name__ == "__main__":
    main()
