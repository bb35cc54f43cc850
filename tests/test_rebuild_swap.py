"""A rebuild swapped in by two renames (where the system has no atomic exchange) and stopped
between them (kill -9): no index folder, the old index under the retired name, the new one
complete in the rebuild folder. Nothing may be lost: a reader says what happened and what to
run, `brain index` puts the old index back (it deleted it, history and all, and began a new
empty index, embedding every note again), and the next `--rebuild` finishes the new one."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder

from brain import config
from brain.cli import cli
from brain.index import rebuild as rebuild_module
from brain.index.indexer import index_vault
from brain.index.status import vault_status


def _index(vault, **kwargs):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False, **kwargs)


class _StoppedAtTheSecondRename:
    """``os`` for rebuild.py: the first rename is done, the second never happens (a kill -9
    leaves the files so; KeyboardInterrupt passes the ``except OSError`` that undoes the first)."""

    def __init__(self):
        self.renames = 0

    def __getattr__(self, name):
        return getattr(os, name)

    def rename(self, src, dst):
        self.renames += 1
        if self.renames == 2:
            raise KeyboardInterrupt
        os.rename(src, dst)


def test_a_swap_stopped_between_its_two_renames_loses_nothing(toy_vault, monkeypatch):
    _index(toy_vault)
    home = toy_vault / "Home.md"
    home.write_text(home.read_text(encoding="utf-8") + "\n\nA line written after the first index.\n", encoding="utf-8")
    _index(toy_vault)  # the index has a past now
    history = _past(toy_vault)
    assert history["past_versions"] == 1
    directory = config.index_dir(toy_vault)

    with monkeypatch.context() as m:
        m.setattr(rebuild_module, "_exchange", lambda a, b: False)
        m.setattr(rebuild_module, "os", _StoppedAtTheSecondRename())
        with pytest.raises(KeyboardInterrupt):
            _index(toy_vault, rebuild=True)
    assert not directory.exists()

    result = CliRunner().invoke(cli, ["ask", "--vault", str(toy_vault), "sqlite wal"])
    assert result.exit_code == 1
    assert "stopped while it swapped in the new index" in result.output, result.output

    report = _index(toy_vault)  # the previous index is back, nothing embedded again
    assert (report.new, report.embedded) == (0, 0) and report.notes > 0
    assert _past(toy_vault) == history

    report = _index(toy_vault, rebuild=True)  # and the stopped rebuild is finished
    assert report.embedded == 0 and _past(toy_vault) == history
    assert sorted(p.name for p in directory.parent.iterdir()) == [directory.name, directory.name + ".lock"]


def _past(vault) -> dict:
    history = vault_status(vault).history or {}
    return {key: value for key, value in history.items() if "version" in key or "notes" in key}
