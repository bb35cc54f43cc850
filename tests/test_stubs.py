"""Stubs: notes with nothing past their title (an empty file, made by following a link to a
note never written; frontmatter alone; a heading alone). The index gives each its title as its
one chunk. ``stub_discount`` takes a share off a stub's fused score (a stub the query names
keeps its place): by default all of it, so a stub ranks below every note with text. Plumbing only, with the fake embedder; what it is worth is in the README's
stage table."""

from __future__ import annotations

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.pipeline import stub_notes
from brain.recall.types import RecallSettings

QUERY = "journal entry june"


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    write(root, "Daily/Journal entry June 6.md", "")
    write(root, "Daily/Journal entry June 22.md", "---\ntags: [daily]\n---\n")
    write(root, "Daily/Journal entry June 28.md", "# Journal entry June 28\n")
    write(root, "Daily/June 30.md", "Thoughts on free will and the divine feminine; a June journal entry.\n")
    write(root, "Index.md", "See [[Journal entry June 6]] for the June journal entry I never wrote.\n")
    index_vault(root, progress=False)
    return root


def _paths(result):
    return [c.path for c in result.results]


def test_the_stubs_are_the_notes_with_nothing_past_their_title(vault, closing):
    recaller = closing(open_recaller(vault))
    result = recaller.ask(QUERY, "hybrid+ppr", RecallSettings(stub_discount=0.0, k=10))
    stubs = {c.path for c in result.results if c.note_id in stub_notes(recaller.store, result.results)}
    assert stubs == {
        "Daily/Journal entry June 6.md",
        "Daily/Journal entry June 22.md",
        "Daily/Journal entry June 28.md",
    }


def test_without_the_discount_a_stub_ranks_as_any_note(vault, closing):
    recaller = closing(open_recaller(vault))
    result = recaller.ask(QUERY, "hybrid+ppr", RecallSettings(stub_discount=0.0))
    assert _paths(result)[0] != "Daily/June 30.md"  # a title that is the query's words wins


def test_by_default_the_stubs_rank_below_every_note_with_text(vault, closing):
    assert RecallSettings().stub_discount == 1.0
    result = closing(open_recaller(vault)).ask(QUERY, "hybrid+ppr", RecallSettings())
    assert set(_paths(result)[:2]) == {"Daily/June 30.md", "Index.md"}


def test_the_dense_lane_alone_is_left_as_it_was(vault, closing):
    result = closing(open_recaller(vault)).ask(QUERY, "vector", RecallSettings())
    assert _paths(result)[0] != "Daily/June 30.md"


def test_a_full_discount_puts_the_stubs_below_every_note_with_text(vault, closing):
    recaller = closing(open_recaller(vault))
    result = recaller.ask(QUERY, "hybrid+ppr", RecallSettings(stub_discount=1.0))
    paths = _paths(result)
    assert set(paths[:2]) == {"Daily/June 30.md", "Index.md"}  # the two notes with text, then the stubs
    assert sorted(paths[2:]) == sorted(p for p in paths if "Journal entry" in p) and len(paths) == 5
    assert all(c.score == 0.0 for c in result.results if "Journal entry" in c.path)


def test_a_stub_the_query_names_keeps_its_place(vault, closing):
    recaller = closing(open_recaller(vault))
    result = recaller.ask("Journal entry June 6", "hybrid+ppr", RecallSettings(stub_discount=1.0))
    assert _paths(result)[0] == "Daily/Journal entry June 6.md"
