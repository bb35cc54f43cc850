"""The small-notes lane (off unless weighted): each note of one chunk under small_note_chars is
embedded with its folders, title and text, and ranked by the query's cosine with that. Plumbing
only, with the fake embedder; what it is worth is measured in the README's stage table."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import small_notes
from brain.recall.opening import open_recaller
from brain.recall.small_notes import SmallNotes
from brain.recall.types import RecallSettings

QUERY = "project management apps we tried"
ON = {"small_notes": 0.2}


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    write(root, "01. Work/PM Software/Testing PM Software/Trello.md", "Simple UI\n\n- Kanban boards\n- Power-ups\n")
    write(root, "01. Work/PM Software/Testing PM Software/Linear.app.md", "Clean UI for issues, no epics.\n")
    write(root, "Games.md", "God of War\nMass Effect\n")
    write(root, "Long.md", "# One\n\n" + "project management words " * 40 + "\n\n# Two\n\n" + "apps " * 200 + "\n")
    index_vault(root, progress=False)
    return root


def test_the_lane_is_off_by_default(vault, closing):
    recaller = closing(open_recaller(vault))
    assert "small_notes" not in recaller.ask(QUERY, "hybrid+ppr", RecallSettings()).lanes
    assert RecallSettings().weights.get("small_notes", 0.0) == 0.0


def test_weighted_it_ranks_the_small_notes_by_their_folders_title_and_text(vault, closing):
    result = closing(open_recaller(vault)).ask(QUERY, "hybrid+ppr", RecallSettings(weights=ON))
    lane = result.lanes["small_notes"]
    assert sorted(c.path for c in lane) == [
        "01. Work/PM Software/Testing PM Software/Linear.app.md",
        "01. Work/PM Software/Testing PM Software/Trello.md",
        "Games.md",
    ]  # the long note is no small note
    scores = [c.dense_score for c in lane]
    assert scores == sorted(scores, reverse=True)
    assert all(c.sources == ["small_notes"] for c in lane)
    assert "small_notes" in result.lanes and "vector" not in result.mode
    assert "small_notes" not in closing(open_recaller(vault)).ask(QUERY, "vector", RecallSettings(weights=ON)).lanes


def test_what_is_embedded_is_the_folders_without_their_sorting_numbers(vault, monkeypatch, closing):
    seen: list[str] = []
    recaller = closing(open_recaller(vault))
    real = recaller.embedder.embed_documents
    monkeypatch.setattr(recaller.embedder, "embed_documents", lambda texts, **kw: seen.extend(texts) or real(texts))
    recaller.ask(QUERY, "hybrid", RecallSettings(weights=ON))
    trello = next(t for t in seen if "Trello" in t)
    assert trello.startswith("Work > PM Software > Testing PM Software > Trello\n\n")
    assert "Kanban boards" in trello
    assert next(t for t in seen if "God of War" in t).startswith("Games\n\n")


def test_the_threshold_says_which_notes_are_small(vault, closing):
    recaller = closing(open_recaller(vault))
    result = recaller.ask(QUERY, "hybrid", RecallSettings(weights=ON, small_note_chars=25))
    assert [c.path for c in result.lanes["small_notes"]] == ["Games.md"]  # the others' text is longer


def test_the_notes_are_embedded_once_while_the_index_is_unchanged(vault, monkeypatch, closing):
    built = []
    real = SmallNotes.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(SmallNotes, "build", classmethod(lambda cls, *a: built.append(1) or real(cls, *a)))
    recaller = closing(open_recaller(vault))
    recaller.ask(QUERY, "hybrid+ppr", RecallSettings(weights=ON))
    recaller.ask("games I play", "hybrid", RecallSettings(weights=ON))
    assert built == [1]


def test_a_failing_lane_falls_back_with_a_warning(vault, monkeypatch, caplog, closing):
    def broken(cls, *args):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(SmallNotes, "build", classmethod(broken))
    result = closing(open_recaller(vault)).ask(QUERY, "hybrid+ppr", RecallSettings(weights=ON))
    assert result.fallbacks["folders"] is True
    assert result.results  # fused without it
    assert any("small_notes lane failed" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("06. Collected Knowledge/Compersion.md", "Collected Knowledge/Compersion.md"),
        ("2024. Plans/a.md", "Plans/a.md"),
        ("2024/a.md", "2024/a.md"),  # a folder that is only a number says which year
        ("3.5 Notes/a.md", "3.5 Notes/a.md"),
        ("Top.md", "Top.md"),
    ],
)
def test_a_folders_sorting_number_is_dropped(path, shown):
    assert small_notes._folders(path) == shown
