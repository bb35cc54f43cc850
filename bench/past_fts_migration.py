"""What m039 (the past chunks' BM25 index made with the index's tokenizer) costs an index that meets it.

Each index.db given is copied (SQLite's backup, never written in place), brought up to m038 with the
index's migrations, given a past (the present's chunks copied in as past ones, ``--copies`` times:
a past as large as the present, or larger) and, for the trigram run, the trigram tokenizer (its
``fts_tokenizer`` and chunks_fts made again, as a first build under BRAIN_FTS_TOKENIZER=trigram
leaves them, the past's index left unicode61's, as every brain before m039 made it). Then m039
alone, in its transaction, ``--runs`` times on fresh copies: wall and CPU seconds (medians).
Under unicode61 it has nothing to do.

    python bench/past_fts_migration.py ~/.brain/vaults/*/index.db --copies 1 --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from brain.index.schema import (
    INDEX_MIGRATIONS,
    create_chunks_fts,
    m039_past_search_in_the_index_s_tokenizer,
)
from brain.migrations import Migrations

LAST_BEFORE = "m038_link_history_of_wikilinks_from_the_notes_folder"


def _prepared(source: Path, folder: Path, copies: int) -> Path:
    """``source`` copied, migrated up to m038, its past filled with ``copies`` copies of the present."""
    target = folder / "base.db"
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    conn = sqlite3.connect(target, isolation_level=None)
    names = [name for name, _ in INDEX_MIGRATIONS.steps]
    older = Migrations("index")
    older.steps = INDEX_MIGRATIONS.steps[: names.index(LAST_BEFORE) + 1]
    older.apply(conn)
    copy_present_into_past(conn, copies)
    conn.close()
    return target


def copy_present_into_past(conn: sqlite3.Connection, copies: int) -> None:
    """The present's chunks copied into the past ``copies`` times, each under a key of its own (a
    past as large as the present, or larger), in one transaction (bench/past_fts_rebuild.py too)."""
    conn.execute("BEGIN")
    for _ in range(copies):
        conn.execute(
            "INSERT INTO chunk_history (note_id, key, title, heading, text, vector)"
            " SELECT c.note_id, randomblob(16), n.title, c.heading, c.text, c.vector"
            " FROM chunks c JOIN notes n ON n.id = c.note_id"
        )
    conn.execute("COMMIT")


def _tokenized(base: Path, tokenizer: str, folder: Path) -> Path:
    path = folder / f"{tokenizer}.db"
    shutil.copyfile(base, path)
    if tokenizer != "unicode61":
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN")
        conn.execute("DROP TABLE chunks_fts")
        conn.execute(create_chunks_fts(tokenizer))
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fts_tokenizer', ?)", (tokenizer,))
        conn.execute("COMMIT")
        conn.close()
    return path


def _once(prepared: Path, folder: Path) -> tuple[float, float]:
    path = folder / "run.db"
    shutil.copyfile(prepared, path)
    conn = sqlite3.connect(path, isolation_level=None)
    wall, cpu = time.perf_counter(), time.process_time()
    conn.execute("BEGIN")
    m039_past_search_in_the_index_s_tokenizer(conn)
    conn.execute("COMMIT")
    result = time.perf_counter() - wall, time.process_time() - cpu
    conn.close()
    path.unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("index", nargs="+", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    for source in args.index:
        with tempfile.TemporaryDirectory(prefix="past-fts-") as work:
            folder = Path(work)
            base = _prepared(source, folder, args.copies)
            conn = sqlite3.connect(base)
            chunks, past = (
                conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("chunks", "chunk_history")
            )
            conn.close()
            figures = {}
            for tokenizer in ("unicode61", "trigram"):
                prepared = _tokenized(base, tokenizer, folder)
                runs = [_once(prepared, folder) for _ in range(args.runs)]
                figures[tokenizer] = tuple(statistics.median(r[i] for r in runs) for i in (0, 1))
            print(
                f"{source.parent.name}: {chunks:,} chunks, {past:,} past chunks; m039"
                + "".join(f", {t} {w:.3f} s ({c:.3f} s CPU)" for t, (w, c) in figures.items())
            )


if __name__ == "__main__":
    main()
