"""The translation lane: BM25 for the words the vault's own pairs translate a query's words into."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.translation import TranslationModel, _shown
from brain.recall.types import RecallSettings

QUERY = "does overkill on a weak minion spill over to the next"
ON = RecallSettings(weights={**RecallSettings().weights, "translation": 0.2})


@pytest.fixture
def bestiary(tmp_path):
    root = tmp_path / "bestiary"
    # Each minion's stat block says what it is in the rules' word; the rule never says "minion".
    write(root, "Ogre Minion.md", "## Ogre Minion\n\nA brute of a mook: it hits hard.\n")
    write(root, "Goblin Minion.md", "## Goblin Minion\n\nA sneaky mook of the goblin mob.\n")
    write(root, "Skeleton Minion.md", "## Skeleton Minion\n\nBones held by spite; a mook again.\n")
    write(
        root,
        "Mooks.md",
        "## Mooks\n\nEvery mook in a mob shares a single pool: what the first cannot absorb passes on.\n",
    )
    words = "fire frost acid thunder poison psychic holy force storm stone shadow light blood bone ash iron"
    for i, word in enumerate(words.split()):  # a pair's word is a translation where it is rare elsewhere
        write(root, f"Spells/{word.title()} Bolt.md", f"## {word.title()} Bolt\n\nA {word} spell, number {i}.\n")
    index_vault(root, progress=False)
    return root


def test_a_query_word_translates_into_the_word_its_pairs_hold(bestiary, closing):
    recaller = closing(open_recaller(bestiary))
    model = TranslationModel.from_store(recaller.store)
    assert model.offered(["minion"]) == ["mook"]  # its three stat blocks say "mook"; the spells do not
    assert model.offered(["overkill"]) == []  # in no heading and no link's line


def test_the_lane_finds_the_note_in_the_words_the_query_lacks(bestiary, closing):
    result = closing(open_recaller(bestiary)).ask(QUERY, "hybrid", ON)
    assert "Mooks.md" not in [c.path for c in result.lanes["lexical"]]
    lane = [c.path for c in result.lanes["translation"]]
    # the minions hold the query's word and its translation; the rule holds the translation alone
    assert set(lane[:3]) == {f"{m} Minion.md" for m in ("Goblin", "Ogre", "Skeleton")} and lane[3] == "Mooks.md"
    assert all(c.sources == ["translation"] for c in result.lanes["translation"])


def test_no_lane_by_default_outside_the_hybrid_modes_or_for_an_untranslated_query(bestiary, closing):
    recaller = closing(open_recaller(bestiary))
    assert "translation" not in recaller.ask(QUERY, "hybrid+ppr", RecallSettings()).lanes  # weight 0: off
    assert "translation" not in recaller.ask(QUERY, "vector", ON).lanes
    assert recaller.ask("frost spell number", "hybrid", ON).lanes["translation"] == []


def test_a_failing_translation_lane_falls_back_with_a_warning(bestiary, monkeypatch, caplog, closing):
    def broken(cls, store):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(TranslationModel, "from_store", classmethod(broken))
    result = closing(open_recaller(bestiary)).ask(QUERY, "hybrid", ON)
    assert result.fallbacks["lexical"] is True
    assert result.results  # fused without it
    assert any("translation lane failed" in r.getMessage() for r in caplog.records)


def test_links_are_read_as_shown():
    assert _shown("see [[Compendium/13A/Rules/Mooks|mooks]] and [[Compendium/Rules/Resistance]]") == (
        "see mooks and Resistance"
    )
    assert _shown("[the docs](https://x.org/a-b) say") == "the docs say"
