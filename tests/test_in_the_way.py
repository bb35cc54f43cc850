"""One rule for the files brain replaces whole (vectors.faiss, vectors.json, vectors.delta,
recall-cache.npz): a save writes a new file beside the name and renames it over it, and a rename
replaces a symbolic link itself, never what it leads to, and cannot replace a folder. So a
folder or a link there, wherever it leads, is the user's: `brain index` and `brain ask` say so in
one line and touch none of it. vectors.* refused a link to a folder while recall-cache.npz let a
save replace it; a link to a file, or to nowhere, was replaced by the next save at either."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write

from brain import config
from brain.cli import cli
from brain.index.indexer import index_vault

NAMES = ["vectors.faiss", "vectors.json", "vectors.delta", "recall-cache.npz"]
KINDS = {
    "a link to a folder": "is a symbolic link to the folder",
    "a link to a file": "put the file in its place",
    "a link to nowhere": "which does not exist",
    "a folder": "is a folder, not a file: move it aside",
}


def _put(kind: str, path: Path, elsewhere: Path) -> None:
    """What the user put at ``path``: their own things elsewhere (or in the folder) kept."""
    elsewhere.mkdir()
    if kind == "a link to a file":
        target = elsewhere / path.name  # the file moved out of the index folder, and linked
        if path.exists():
            path.rename(target)
        else:
            target.write_bytes(b"the user's\n")
        path.symlink_to(target)
        return
    path.unlink(missing_ok=True)
    if kind == "a link to nowhere":
        path.symlink_to(elsewhere / "unmounted" / path.name)
    elif kind == "a link to a folder":
        (elsewhere / "folder").mkdir()
        (elsewhere / "folder" / "kept.txt").write_text("the user's\n", encoding="utf-8")
        path.symlink_to(elsewhere / "folder", target_is_directory=True)
    else:
        path.mkdir()
        (path / "kept.txt").write_text("the user's\n", encoding="utf-8")


def _state(path: Path, elsewhere: Path) -> tuple:
    link = os.readlink(path) if path.is_symlink() else None
    inside = sorted((p.relative_to(elsewhere).as_posix(), p.read_bytes()) for p in elsewhere.rglob("*") if p.is_file())
    kept = (path / "kept.txt").read_bytes() if path.is_dir() and not path.is_symlink() else None
    return link, inside, kept


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_folder_or_link_where_brain_replaces_a_file_is_one_line_and_left_as_it_was(tmp_path, name, kind):
    vault = tmp_path / "vault"
    write(vault, "crane.md", "# Crane\n\nThe harbour crane stops in winter storms.\n")
    write(vault, "ferry.md", "# Ferry\n\nThe ferry runs all winter. [[crane]]\n")
    index_vault(vault)
    ask = ["ask", "--vault", str(vault), "--json", "--no-update", "harbour crane"]
    assert CliRunner().invoke(cli, ask).exit_code == 0  # keeps recall-cache.npz
    path = config.index_dir(vault) / name
    elsewhere = tmp_path / "elsewhere"
    _put(kind, path, elsewhere)
    before = _state(path, elsewhere)
    write(vault, "storm.md", "# Storm\n\nA winter storm closes the harbour.\n")  # a save is due
    for args in (["index", "--vault", str(vault)], ask):
        out = CliRunner().invoke(cli, args)
        said = out.output
        if name == "recall-cache.npz" and args[0] == "index":  # brain index keeps no recall cache
            assert out.exit_code == 0, said
        else:
            assert out.exit_code == 1 and "Traceback" not in said, (args, said)
            assert said.startswith("Error: ") and said.count("\n") == 1, said
            assert f"{path} " in said and KINDS[kind] in said, said
        assert _state(path, elsewhere) == before
