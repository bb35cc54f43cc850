"""The folders lane: a query that names a folder ("spells that heal", "the latest decision on
…") ranks the notes filed in it by their best chunk, a vote for the kind of note asked for
(past MAX_NOTES of them, the dense lane's notes among them); a query naming no folder gets
nothing from it."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import folders
from brain.recall.folders import FolderIndex, folder_words
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Spells", {"spell"}),
        ("Racial-Feats", {"racial", "feat"}),
        ("01. Personal", {"personal"}),  # a sorting number is no word of the name
        ("The Meetings", {"meeting"}),
        ("Заметки", {"заметк"}),  # a Russian word by its stem: "заметка", "заметки" alike
        ("Решения", {"решен"}),
        ("Crème Brûlée", {"creme", "brulee"}),
        ("2024", set()),
    ],
)
def test_the_words_a_folder_is_named_by(name, words):
    assert folder_words(name) == words


def _index() -> FolderIndex:
    paths = [
        "Compendium/Spells/Holy Spark.md",
        "Compendium/Spells/Evil Touch.md",
        "Compendium/Bestiary/Chaos Beast.md",
        "Compendium/Bestiary/Chaos Brute.md",
        "Compendium/Magic-Items/Ring.md",
        "Compendium/Magic-Items/Cloak.md",
        "Compendium/Icons/Lich King.md",  # a folder of one note: that note, not a kind
        ".obsidian/snippets/a.md",
        ".obsidian/snippets/b.md",
    ]
    return FolderIndex.from_notes(enumerate(paths, 1))


def test_a_russian_folder_is_named_by_its_word_in_any_form():
    # "последнее решение по поиску" named no *Решения*, where "latest decision on search" names
    # *Decisions*: a Russian folder is a plural, and the query says the word in another form.
    paths = ["Решения/a.md", "Решения/b.md", "Встречи/1.md", "Встречи/2.md", "Decisions/a.md", "Decisions/b.md"]
    index = FolderIndex.from_notes(enumerate(paths + [f"n{i}.md" for i in range(6)], 1))
    assert index.named_by("последнее решение по поиску") == ["Решения"]
    assert index.named_by("latest decision on search") == ["Decisions"]
    assert index.named_by("встреча с Петей") == ["Встречи"] == index.named_by("на встречах")
    assert index.named_by("решётка") == []


def test_which_folders_can_be_named():
    index = _index()
    # Compendium holds 7 of the 9 notes: half the vault or more narrows nothing; a hidden
    # folder is an app's; Icons holds one note.
    assert sorted(index.folders) == ["Compendium/Bestiary", "Compendium/Magic-Items", "Compendium/Spells"]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("chaos mage spells that give temp hp", ["Compendium/Spells"]),
        ("Which SPELLS heal?", ["Compendium/Spells"]),
        ("a spell that heals", ["Compendium/Spells"]),  # a plural folded as the names lane folds it
        ("magic items that boost defence", ["Compendium/Magic-Items"]),
        ("magic spells", ["Compendium/Spells"]),  # Magic-Items wants both its words
        ("the bestiary's chaos beasts", ["Compendium/Bestiary"]),
        ("chaos beast", []),
        ("my snippets", []),
        ("", []),
    ],
)
def test_the_folders_a_query_names(query, named):
    assert _index().named_by(query) == named


def test_the_notes_of_a_folder_are_those_under_it_and_no_folder_beside_it():
    index = FolderIndex.from_notes(
        [
            (1, "A/x.md"),
            (2, "A/B/y.md"),
            (3, "A-B/z.md"),
            (4, "A.old/w.md"),
            (5, "AB/v.md"),
            (6, "A/z.md"),
            (7, "top.md"),
        ]
    )
    assert index.notes_in(["A"]) == [1, 2, 6]
    assert index.notes_in(["A", "A/B"]) == [1, 2, 6]  # a folder inside another counted once
    assert index.notes_in(["A-B"]) == [3]


@pytest.fixture
def compendium(tmp_path):
    root = tmp_path / "compendium"
    write(root, "Spells/Chaos Blessing.md", "A chaos spell: your allies gain temporary hit points.\n")
    write(root, "Spells/Holy Spark.md", "A spell of holy light: allies heal and gain temporary hit points.\n")
    write(root, "Spells/Fire Bolt.md", "A spell that deals fire damage to one enemy.\n")
    write(root, "Bestiary/Chaos Beast.md", "A chaos beast grants its kin temp hp when it howls; chaos mage foes.\n")
    write(root, "Bestiary/Chaos Brute.md", "Chaos brute: a hulking chaos creature with hp to spare.\n")
    write(root, "Rules/Temporary Hit Points.md", "Temp hp do not stack; take the higher.\n")
    write(root, "Rules/Healing.md", "Healing with recoveries.\n")
    index_vault(root, progress=False)
    return root


QUERY = "chaos mage spells that give temp hp"


def test_the_lane_ranks_the_named_folders_notes_by_their_best_chunk(compendium, closing):
    result = closing(open_recaller(compendium)).ask(QUERY, "hybrid+ppr", RecallSettings())
    lane = result.lanes["folders"]
    assert sorted(c.path for c in lane) == ["Spells/Chaos Blessing.md", "Spells/Fire Bolt.md", "Spells/Holy Spark.md"]
    scores = [c.dense_score for c in lane]
    assert scores == sorted(scores, reverse=True)
    assert all(c.sources == ["folders"] for c in lane)


def test_past_max_notes_the_lane_is_the_dense_lanes_notes_in_the_folder(compendium, monkeypatch, closing):
    monkeypatch.setattr(folders, "MAX_NOTES", 2)
    result = closing(open_recaller(compendium)).ask(QUERY, "hybrid+ppr", RecallSettings(depth=4))
    dense = [c.path for c in result.lanes["dense"]]
    lane = [c.path for c in result.lanes["folders"]]
    assert lane == [p for p in dense if p.startswith("Spells/")]  # in dense's order, within its reach
    assert len(dense) == 4 and len(lane) < 3
    assert all(c.sources == ["folders"] for c in result.lanes["folders"])
    assert all(c.sources[0] == "dense" for c in result.lanes["dense"])  # the dense lane's own are left as they were


def test_the_lane_puts_the_kind_of_note_asked_for_first(compendium, closing):
    recaller = closing(open_recaller(compendium))
    without = recaller.ask(QUERY, "hybrid", RecallSettings(weights={"folders": 0.0}))
    strong = recaller.ask(QUERY, "hybrid", RecallSettings(weights={"folders": 5.0}))
    assert not without.results[0].path.startswith("Spells/")  # the fake embedder's words: the chaos beast
    assert [c.path for c in strong.results[:3]] == [c.path for c in strong.lanes["folders"]]


def test_no_lane_for_a_query_naming_no_folder_or_outside_the_hybrid_modes(compendium, closing):
    recaller = closing(open_recaller(compendium))
    assert recaller.ask("chaos beast temp hp", "hybrid+ppr", RecallSettings()).lanes["folders"] == []
    assert "folders" not in recaller.ask(QUERY, "vector", RecallSettings()).lanes
    assert "folders" not in recaller.ask(QUERY, "ppr", RecallSettings()).lanes
    assert "folders" not in recaller.ask(QUERY, "hybrid", RecallSettings(weights={"folders": 0.0})).lanes


def test_the_folder_index_is_read_once(compendium, monkeypatch, closing):
    built = []
    real = FolderIndex.from_store.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(FolderIndex, "from_store", classmethod(lambda cls, store: built.append(1) or real(cls, store)))
    recaller = closing(open_recaller(compendium))
    recaller.ask(QUERY, "hybrid+ppr", RecallSettings())
    recaller.ask("healing rules", "hybrid", RecallSettings())
    assert built == [1]


def test_a_failing_folders_lane_falls_back_with_a_warning(compendium, monkeypatch, caplog, closing):
    def broken(cls, store):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(FolderIndex, "from_store", classmethod(broken))
    result = closing(open_recaller(compendium)).ask(QUERY, "hybrid+ppr", RecallSettings())
    assert result.fallbacks["folders"] is True
    assert result.results  # fused without it
    assert any("folders lane failed" in r.getMessage() for r in caplog.records)


def test_odd_folder_names_and_a_huge_query_name_nothing_wrongly():
    paths = [
        "!!!/a.md",  # no word at all
        "!!!/b.md",
        "🚀 Launch/a.md",
        "🚀 Launch/b.md",
        "/".join(["deep"] * 200) + "/a.md",
        "/".join(["deep"] * 200) + "/b.md",
        "Other/c.md",
        "Other/d.md",
        "Other/e.md",
    ]
    index = FolderIndex.from_notes(enumerate(paths, 1))
    assert "!!!" not in index.folders  # nothing to be named by
    assert index.named_by("the launch notes") == ["🚀 Launch"]
    assert index.notes_in(index.named_by("deep")) == [5, 6]  # every level of the deep folder, each note once
    assert index.named_by("word " * 100_000) == []
