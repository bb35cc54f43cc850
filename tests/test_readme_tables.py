"""bench/readme_tables.py rewrites the README's quality figures from a run and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench_helpers import bench_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "readme_tables.py"


def _module():
    return bench_script("readme_tables")


def _figures(recall: float, ndcg: float) -> dict:
    return {"recall@10": recall, "ndcg@10": ndcg}


def _run_of(sets: list[str], extra: dict[str, float]) -> list[dict]:
    """Five sets of two types; every README column's row, plus ``extra`` rows (nDCG overall)."""
    out = []
    for i, name in enumerate(sets):
        rows = {}
        for j, row in enumerate(["vector", "hybrid", "ppr", "old", "new"]):
            base = 0.5 + 0.05 * j + 0.001 * i
            rows[row] = {
                "all": _figures(base + 0.1, base),
                "by_type": {"entity": _figures(1.0, base + 0.2), "bridge": _figures(0.25, base - 0.2)},
            }
        for row, ndcg in extra.items():
            rows[row] = {"all": _figures(0.5, rows["new"]["all"]["ndcg@10"] + ndcg), "by_type": {}}
        out.append(
            {
                "set": name,
                "queries": 7,
                "types": ["entity", "bridge"],
                "counts": {"entity": 3, "bridge": 4},
                "rows": rows,
            }
        )
    return out


README = """# x

Words before, kept.

**Mini-benchmark** (synthetic), 1 queries

| type | n | old | table |
|---|--:|---|---|
| **all** | 1 | 0 | 0 |

**13th Age SRD**, 1 queries

| **all** | 1 | 0 |

**vaultofknowledge**, 1 queries

| **all** | 1 | 0 |

**13th Age SRD, blind**, 1 queries

| **all** | 1 | 0 |

**vaultofknowledge, blind**, 1 queries

| **all** | 1 | 0 |

Between the tables, kept.

| change | mini | 13th Age | vaultofknowledge | SRD blind | vok blind | kept? |
|---|--:|--:|--:|--:|--:|---|
| default without the names lane | 9 | 9 | 9 | 9 | 9 | a comment, kept |
| a row no run knows | 1 | 2 | 3 | 4 | 5 | kept |

After, kept.
"""


def test_the_tables_and_the_stage_figures_are_rewritten_and_the_words_kept(tmp_path):
    tables = _module()
    run = _run_of(tables.SETS, {"new -names": -0.0124})
    readme = tmp_path / "README.md"
    readme.write_text(README, encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "run.json"), "--write", str(readme)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "left as it was (no ablation row in this run): a row no run knows" in proc.stderr
    text = readme.read_text(encoding="utf-8")
    for kept in ("Words before, kept.", "Between the tables, kept.", "After, kept.", "| a comment, kept |"):
        assert kept in text
    assert "| a row no run knows | 1 | 2 | 3 | 4 | 5 | kept |" in text
    assert "| default without the names lane | -0.012 | -0.012 | -0.012 | -0.012 | -0.012 | a comment, kept |" in text
    # each set's table from the run: vector ... new, the default in bold, nDCG to 3 places overall
    assert (
        "**13th Age SRD, blind**, 7 queries\n\n| type | n | vector | hybrid | ppr | before | **hybrid+ppr** |" in text
    )
    assert "| **all** | 7 | 0.60 / 0.500 | 0.65 / 0.550 | 0.70 / 0.600 | 0.75 / 0.650 | **0.80 / 0.700** |" in text
    assert "| bridge | 4 | 0.25 / 0.30 | 0.25 / 0.35 | 0.25 / 0.40 | 0.25 / 0.45 | 0.25 / 0.50 |" in text
    assert "| old | table |" not in text and text.count("| type | n |") == 5


def test_a_run_without_every_set_is_refused(tmp_path):
    tables = _module()
    (tmp_path / "run.json").write_text(json.dumps(_run_of(["mini", "vok"], {})), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "run.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and "lacks the sets 13th-age, 13th-age-blind, vok-blind" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert tables.per_type_table(_run_of(["mini"], {})[0]).startswith("**Mini-benchmark** (synthetic), 7 queries\n\n")
