"""What an index folder holds that brain did not put there (a folder brain refused at
vectors.faiss, a file of the user's) survives `brain index --rebuild` and the cleaning up of a
swap cut short: brain deletes its own files there by name, and keeps the rest under
``<index folder>.kept-<time>``, saying so in one line (and in the report's JSON)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder

from brain import config
from brain.cli import cli
from brain.index import rebuild as rebuild_module
from brain.index.indexer import index_vault
from brain.index.rebuild import REBUILD_MARKER, brains_own, rebuild_dir


def _index(vault, **kwargs):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False, **kwargs)


def _users_things(directory):
    """A folder standing at vectors.faiss holding a file, and a file of the user's beside the index."""
    (directory / "vectors.faiss").unlink(missing_ok=True)
    (directory / "vectors.faiss").mkdir()
    (directory / "vectors.faiss" / "draft.md").write_text("my draft", encoding="utf-8")
    (directory / "notes-to-self.txt").write_text("mine", encoding="utf-8")


def _kept(directory):
    return sorted(directory.parent.glob(directory.name + ".kept-*"))


def _check_kept(directory, kept):
    assert [p.name for p in sorted(kept.iterdir())] == ["notes-to-self.txt", "vectors.faiss"]  # brain's files gone
    assert (kept / "vectors.faiss" / "draft.md").read_text(encoding="utf-8") == "my draft"
    assert (kept / "notes-to-self.txt").read_text(encoding="utf-8") == "mine"
    assert (directory / "index.db").is_file() and (directory / "vectors.faiss").is_file()


@pytest.mark.parametrize("atomic", [True, False], ids=["exchange", "two-renames"])
def test_a_rebuild_keeps_what_the_old_index_folder_held_of_the_users(toy_vault, monkeypatch, atomic):
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    _users_things(directory)
    if not atomic:
        monkeypatch.setattr(rebuild_module, "_exchange", lambda a, b: False)
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "--rebuild", "--yes", "--json"])
    assert result.exit_code == 0, result.output
    (kept,) = _kept(directory)
    _check_kept(directory, kept)
    said = [line for line in result.stderr.splitlines() if str(kept) in line]
    assert len(said) == 1 and "brain did not put there" in said[0], result.stderr
    assert json.loads(result.stdout)["kept_aside"] == [str(kept)]


def test_a_rebuild_over_an_index_folder_of_brains_files_alone_leaves_nothing_beside(toy_vault):
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    (directory / "postings.failed").write_text("", encoding="utf-8")
    (directory / "vectors.json.4242.0badcafe.tmp").write_text("", encoding="utf-8")
    report = _index(toy_vault, rebuild=True)
    assert report.kept_aside == [] and not _kept(directory)
    assert sorted(p.name for p in directory.parent.iterdir()) == [directory.name, directory.name + ".lock"]


def test_a_swap_cut_short_leaves_the_users_files_kept_by_the_next_index(toy_vault):
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    retired = directory.with_name(directory.name + ".retired")
    retired.mkdir()
    (retired / "index.db").write_bytes((directory / "index.db").read_bytes())
    (retired / "mine.txt").write_text("mine", encoding="utf-8")
    report = _index(toy_vault)
    assert not retired.exists()
    (kept,) = _kept(directory)
    assert [p.name for p in kept.iterdir()] == ["mine.txt"]
    assert report.kept_aside == [str(kept)] and any(w["path"] == str(kept) for w in report.warnings)


def test_a_rebuild_over_an_old_index_in_the_rebuild_folder_keeps_the_users_files(toy_vault):
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    staging = rebuild_dir(directory)  # the old index of a swap cut short: no marker
    staging.mkdir()
    (staging / "index.db").write_bytes((directory / "index.db").read_bytes())
    (staging / "recall-cache.npz").mkdir()
    (staging / "recall-cache.npz" / "mine.txt").write_text("mine", encoding="utf-8")
    report = _index(toy_vault, rebuild=True)
    (kept,) = _kept(directory)
    assert [p.name for p in kept.iterdir()] == ["recall-cache.npz"]
    assert (kept / "recall-cache.npz" / "mine.txt").read_text(encoding="utf-8") == "mine"
    assert report.kept_aside == [str(kept)] and not (directory / REBUILD_MARKER).exists()


def test_brains_own_names():
    for name in (
        "index.db",
        "index.db-wal",
        "index.db-shm",
        "vectors.faiss",
        "vectors.json",
        "vectors.delta",
        "postings.bin",
        "recall-cache.npz",
        "postings.lock",
        "fts-merge.failed",
        "rebuild.json",
        "vectors.faiss.123.deadbeef.tmp",
        "recall-cache.npz.9.00000000.tmp",
    ):
        assert brains_own(name), name
    for name in ("notes.md", "index.db.bak", "vectors.faiss.old", "vectors.faiss.x.deadbeef.tmp", "serve.lock"):
        assert not brains_own(name), name


def test_a_repair_leaves_a_folder_at_the_recall_cache_as_it_was(toy_vault):
    """`brain index --repair` deletes the recall cache (derived from the rows it rebuilds): a folder
    there (the user's: `brain ask` names it) made the repair, its work done, fail on
    IsADirectoryError."""
    _index(toy_vault)
    directory = config.index_dir(toy_vault)
    cache = directory / "recall-cache.npz"
    cache.unlink(missing_ok=True)
    cache.mkdir()
    (cache / "mine.txt").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(cli, ["index", "--vault", str(toy_vault), "--repair"])
    assert result.exit_code == 0, (result.output, result.exception)
    assert (cache / "mine.txt").read_text(encoding="utf-8") == "mine"
