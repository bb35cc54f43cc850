"""What a `--rebuild` to ``BRAIN_FTS_TOKENIZER=trigram`` spends indexing the history it carries in.

A vault is indexed (the fast fake ``benchfake:384`` embedder of bench/scale.py, unicode61), its
past filled with ``--copies`` copies of its present chunks (as bench/past_fts_migration.py does).
Then a new, empty index is seeded with that history as a rebuild seeds it, in the two orders:

- ``carry, then take``: the history carried in (its past chunks indexed as they came, in the new
  index's unicode61 table), then the trigram setting taken (every one of them indexed again): what
  a rebuild did until this script's commit (which also makes a carried chunk's searched form as it
  comes in: set after, each it changed was indexed a third time, 111 of vaultofknowledge's 6,588,
  not counted here);
- ``take, then carry``: the setting taken while the index is empty, then the history carried in
  (each past chunk indexed once, in trigram's table): what it does now.

For each: the FTS5 documents written to the past's index (its ``docsize`` rows, counted from
SQLite's statement trace) and the CPU seconds of the two steps (median of ``--runs``, interleaved).

    python bench/past_fts_rebuild.py /work/shared/bench/vaults/vaultofknowledge --copies 1 --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODEL = "benchfake:384"


def _source(vault: Path, work: Path, copies: int) -> Path:
    """The vault indexed under ``work``, its past filled with copies of its present chunks."""
    from past_fts_migration import copy_present_into_past

    from brain import config
    from brain.index.indexer import index_vault

    copy = work / "vault"
    shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".obsidian", ".git"))
    index_vault(copy, model_name=MODEL, progress=False)
    database = config.index_dir(copy) / "index.db"
    conn = sqlite3.connect(database, isolation_level=None)
    copy_present_into_past(conn, copies)
    conn.close()
    return database


def _seed(old: Path, folder: Path, take_first: bool) -> tuple[int, float]:
    """A new index in ``folder`` seeded with ``old``'s history: (past documents written, CPU s)."""
    from brain.index.store import IndexStore

    store = IndexStore.open(folder)
    written: list[str] = []
    store.conn.set_trace_callback(written.append)
    cpu = time.process_time()
    if take_first:
        store.take_fts_tokenizer("trigram")
    store.carry_history_from(old)
    if not take_first:
        store.take_fts_tokenizer("trigram")
    cpu = time.process_time() - cpu
    store.conn.set_trace_callback(None)
    assert store.fts_tokenizer() == "trigram"
    store.close()
    shutil.rmtree(folder)
    return sum(s.startswith("-- REPLACE INTO 'main'.'chunk_history_fts_docsize'") for s in written), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="past-fts-rebuild-") as work:
        os.environ["BRAIN_HOME"] = str(Path(work) / "home")
        os.environ["BRAIN_FTS_TOKENIZER"] = "unicode61"
        sys.path.insert(0, str(HERE))
        from scale import _register

        _register()
        old = _source(args.vault, Path(work), args.copies)
        conn = sqlite3.connect(old)
        past = conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
        conn.close()
        print(f"load average {os.getloadavg()[0]:.1f}; {args.vault.name}: {past:,} past chunks carried")
        figures: dict[bool, list[tuple[int, float]]] = {False: [], True: []}
        for run in range(args.runs):
            for take_first in (run % 2 == 0, run % 2 != 0):  # interleaved, each order first in turn
                figures[take_first].append(_seed(old, Path(work) / "new", take_first))
        cpu = {order: statistics.median(c for _, c in runs) for order, runs in figures.items()}
        for order, name in ((False, "carry, then take"), (True, "take, then carry")):
            print(f"{name}: {figures[order][0][0]:,} past documents written, {cpu[order]:.3f} s CPU")
        print(f"CPU take-first / carry-first: {cpu[True] / cpu[False]:.2f}")


if __name__ == "__main__":
    main()
