"""brain's own helper processes (the parse workers, the walk's helper) run this brain from
whatever folder brain is run in. They were ``python -m brain....``, which puts the working
directory first on the child's path: a ``brain`` package there (a clone of another version, a
downloaded project) was imported and run in their place."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from conftest import write

from brain import vault as vault_module
from brain.index import parsing
from brain.index.parsing import Parser
from brain.vault import load_ignore, walk
from brain.walk_helper import WalkHelper


def _another_brain(folder: Path) -> Path:
    """A ``brain`` package in ``folder`` whose every module leaves a mark and fails."""
    mark = folder / "RAN"
    leave = f"open({str(mark)!r}, 'w').write('ran')\n"
    write(folder, "brain/__init__.py", leave)
    write(folder, "brain/index/__init__.py", "")
    write(folder, "brain/index/parsing.py", leave + "raise SystemExit(3)\n")
    write(folder, "brain/walk_helper.py", leave + "raise SystemExit(3)\n")
    return mark


def test_parse_workers_run_this_brain_in_a_folder_holding_another(tmp_path, monkeypatch, caplog):
    mark = _another_brain(tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    monkeypatch.setattr(parsing, "PARALLEL_FROM", 0)
    monkeypatch.setattr(parsing, "NOTES_PER_TASK", 2)
    items = [(i, (f"n{i}.md", f"# N{i}\n\ntext {i}".encode(), 0.0, frozenset(), "heading")) for i in range(10)]
    with Parser[int](expected=10, workers=0) as inline:
        want = [(k, p[0].title if p else None) for k, p in inline.parsed(items)]
    with caplog.at_level(logging.WARNING, logger="brain"), Parser[int](expected=10, workers=2) as pooled:
        assert pooled.workers == 2
        got = [(k, p[0].title if p else None) for k, p in pooled.parsed(items)]
    assert got == want and len(got) == 10
    assert "parse worker failed" not in caplog.text  # the workers parsed them, not this process
    assert not mark.exists()


def test_the_walk_helper_runs_this_brain_in_a_folder_holding_another(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(vault_module, "HELPER_HEAD", -(10**9))  # the helper takes every folder
    monkeypatch.setattr(vault_module, "HELPER_MIN_FOLDER", 0)
    vault = tmp_path / "vault"
    for i in range(5):
        write(vault, f"f{i}/note {i}.md", f"# Note {i}\n")
    mark = _another_brain(tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    ignore = load_ignore(vault)
    with (
        caplog.at_level(logging.WARNING, logger="brain"),
        WalkHelper.start(os.path.realpath(vault), ignore.spec) as helper,
    ):
        found = walk(vault, ignore, known={}, helper=helper)
        assert helper.given
    assert len(found.notes) == 5
    assert helper.process is not None and helper.process.returncode == 0
    assert "failed" not in caplog.text
    assert not mark.exists()
