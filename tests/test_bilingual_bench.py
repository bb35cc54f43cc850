"""bench/bilingual stays what its generator writes, and its labels hold (standard library, fast)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bilingual"


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_committed_vault_is_what_the_generator_writes():
    proc = _run("generate.py", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reproduced byte for byte" in proc.stdout


def test_labels_pass_their_checks():
    proc = _run("check_labels.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all label checks passed" in proc.stdout
    assert "queries: 84" in proc.stdout
