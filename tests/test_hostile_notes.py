"""Notes crafted to hurt, from a vault brain's user did not write: each is read, in time and
memory in step with its size, and costs only itself (a warning at most, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FakeEmbedder, write
from index_helpers import IndexView

from brain import config
from brain.index.indexer import index_vault
from brain.notes import parse_note


def _index(vault: Path):
    return index_vault(vault, embedder=FakeEmbedder(), progress=False)


def test_a_number_too_long_to_print_stays_the_text_it_was():
    # Python prints no int of over 4,300 digits: 0x of 4,000 digits read as an int and made
    # json.dumps raise (a traceback out of brain index); 5,000 decimal digits failed to read,
    # and the whole frontmatter, title and tags too, was dropped.
    hex_digits, decimal = "0x" + "f" * 4_000, "9" * 5_000
    text = f"---\ntitle: Kept\ntags: [a, {hex_digits}]\nbig: {decimal}\n? {hex_digits}\n: key\nsmall: 0x1f\n---\nbody\n"
    note = parse_note("n.md", text.encode(), 0)
    assert note.title == "Kept" and note.tags == ["a", hex_digits]
    assert note.frontmatter["big"] == decimal and note.frontmatter[hex_digits] == "key"
    assert note.frontmatter["small"] == 31  # an int as before
    assert note.warnings == []
    json.dumps(note.frontmatter)


def test_a_vault_with_a_number_too_long_to_print_is_indexed(tmp_path):
    vault = tmp_path / "vault"
    write(vault, "big.md", f"---\ndate: 0x{'f' * 4_000}\n---\nA note about zeppelins.\n")
    write(vault, "other.md", "An ordinary note that links to [[big]].\n")
    report = _index(vault)
    assert report.notes == 2
    with IndexView(config.index_dir(vault)) as view:
        assert view.targets("other.md") == {"big.md"}
        assert any("zeppelins" in c["text"] for c in view.chunks("big.md"))
