"""bench/hook_scale.py runs to its end: its stand-in server made its runtime folder with the
default mode, which the prompt hook reads no record from (another user could have written it), so
every run stopped at "no-server" and the hooks' figures at scale went unmeasured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_hook_scale_measures_every_part_on_a_small_ledger(tmp_path):
    env = {**os.environ, "BRAIN_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    env.pop("BRAIN_DB", None)
    argv = [sys.executable, str(ROOT / "bench" / "hook_scale.py"), "--turns", "200", "--runs", "1"]
    done = subprocess.run([*argv, "--session-prompts", "10"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    for part in ("whole process: brain hook prompt", "whole process: brain hook stop", "whole process: brain turns"):
        assert part in done.stdout, done.stdout
