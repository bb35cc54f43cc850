"""float32 against float16 codes in the FAISS vector file: search time of one query, file size.

brain's stored vectors are float16 values (schema.py m009; since m015 a byte a value times a
step, each value exactly a float16: brain/index/vector_blobs.py), so a FAISS file of float16 codes
(``IndexScalarQuantizer`` QT_fp16) holds exactly what a float32 one does in half the bytes.
This prints, for each size, the p50/p95 of one query on one thread (as brain searches) for:

- exact: ``IndexFlatIP`` (float32) against ``IndexScalarQuantizer`` (fp16),
- IVF: ``IndexIVFFlat`` against ``IndexIVFScalarQuantizer`` (fp16, not by residual), sharing
  one trained coarse quantizer and brain's ``IVF_NPROBE``,

with the ratio fp16 / float32, the file sizes, and whether the top-k ids agree (they should:
the vectors are float16 values already, and inner products accumulate in float32).

    python bench/vector_codes.py                       # 100,000 and 500,000 vectors
    python bench/vector_codes.py --sizes 100000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import faiss
import numpy as np


def _vectors(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Clustered unit vectors (closer to real embeddings than uniform ones), float16 values."""
    centers = rng.standard_normal((max(1, n // 250), dim)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    data = centers[rng.integers(0, len(centers), n)] + 0.06 * rng.standard_normal((n, dim)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data.astype(np.float16).astype(np.float32)


def _times(index, queries: np.ndarray, k: int, params=None) -> list[float]:
    out = []
    for q in queries:
        row = q.reshape(1, -1)
        t0 = time.perf_counter()
        index.search(row, k, params=params)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _pct(values: list[float], q: float) -> float:
    return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 2)


def _file_mb(index) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "v.faiss")
        faiss.write_index(index, path)
        return round(os.path.getsize(path) / 1e6, 1)


def measure(n: int, dim: int, queries: int, k: int, rounds: int) -> dict:
    from brain.index import vectors as brain_vectors

    rng = np.random.default_rng(0)
    data = _vectors(n, dim, rng)
    qs = data[rng.choice(n, queries)] + 0.06 * rng.standard_normal((queries, dim)).astype(np.float32)
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    ids = np.arange(n, dtype=np.int64)

    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
    flat.add_with_ids(data, ids)
    sq = faiss.IndexIDMap2(faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT))
    sq.add_with_ids(data, ids)

    lists = max(1, min(int(2 * n**0.5), n // 39))
    t0 = time.perf_counter()
    ivf_flat = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
    sample = np.sort(rng.choice(n, size=min(n, 64 * lists), replace=False))
    ivf_flat.train(data[sample])
    train_s = time.perf_counter() - t0
    ivf_flat.add_with_ids(data, ids)
    ivf_sq = faiss.IndexIVFScalarQuantizer(
        faiss.clone_index(ivf_flat.quantizer),
        dim,
        lists,
        faiss.ScalarQuantizer.QT_fp16,
        faiss.METRIC_INNER_PRODUCT,
        False,  # by_residual: codes of the vectors themselves, exact for float16 values
    )
    ivf_sq.train(data[:1])  # the coarse quantizer is trained already; trains nothing for fp16
    ivf_sq.add_with_ids(data, ids)
    params = faiss.SearchParametersIVF()
    params.nprobe = brain_vectors.IVF_NPROBE

    faiss.omp_set_num_threads(1)  # as brain searches: one query, one thread
    times: dict[str, list[float]] = {name: [] for name in ("flat", "sq", "ivf_flat", "ivf_sq")}
    for _ in range(rounds):  # interleaved rounds: a noisy neighbour slows all four alike
        times["flat"] += _times(flat, qs, k)
        times["sq"] += _times(sq, qs, k)
        times["ivf_flat"] += _times(ivf_flat, qs, k, params)
        times["ivf_sq"] += _times(ivf_sq, qs, k, params)
    f_scores, f_ids = flat.search(qs, k)
    s_scores, s_ids = sq.search(qs, k)
    if_scores, if_ids = ivf_flat.search(qs, k, params=params)
    is_scores, is_ids = ivf_sq.search(qs, k, params=params)
    p50 = {name: _pct(v, 0.5) for name, v in times.items()}
    return {
        "vectors": n,
        "dim": dim,
        "k": k,
        "queries": queries * rounds,
        "ivf_lists": lists,
        "ivf_train_s": round(train_s, 1),
        "p50_ms": p50,
        "p95_ms": {name: _pct(v, 0.95) for name, v in times.items()},
        "ratio_exact_fp16_over_f32": round(p50["sq"] / p50["flat"], 2),
        "ratio_ivf_fp16_over_f32": round(p50["ivf_sq"] / p50["ivf_flat"], 2),
        "file_mb": {
            "flat": _file_mb(flat),
            "sq": _file_mb(sq),
            "ivf_flat": _file_mb(ivf_flat),
            "ivf_sq": _file_mb(ivf_sq),
        },
        "exact_same_ids": bool((f_ids == s_ids).all()),
        "exact_max_score_diff": float(np.abs(f_scores - s_scores).max()),
        "ivf_same_ids": bool((if_ids == is_ids).all()),
        "ivf_max_score_diff": float(np.abs(if_scores - is_scores).max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,500000", help="vector counts, comma-separated")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries, interleaved")
    parser.add_argument("--k", type=int, default=240, help="neighbours per search (brain: depth x 4)")
    args = parser.parse_args()
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        r = measure(n, args.dim, args.queries, args.k, args.rounds)
        results.append(r)
        p50 = r["p50_ms"]
        print(
            f"{n:>9,} vectors  exact: float32 {p50['flat']:7.2f} ms  fp16 {p50['sq']:7.2f} ms"
            f" ({r['ratio_exact_fp16_over_f32']:.2f}x)   IVF: float32 {p50['ivf_flat']:6.2f} ms"
            f"  fp16 {p50['ivf_sq']:6.2f} ms ({r['ratio_ivf_fp16_over_f32']:.2f}x)"
            f"   file MB {r['file_mb']}   same ids: exact {r['exact_same_ids']}, IVF {r['ivf_same_ids']}"
        )
    print(json.dumps({"load_average": os.getloadavg(), "results": results}))


if __name__ == "__main__":
    main()
