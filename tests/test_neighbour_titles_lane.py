"""The neighbour-titles lane: a note found by the titles of the notes it links to and from."""

from __future__ import annotations

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall.neighbour_titles import NeighbourTitles, match_terms
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings

TITLES = {1: "Agile", 2: "Gantt Charts", 3: "Waterfall", 4: "Scrum", 5: "Index", 6: "Kanban Boards"}


def test_a_note_is_found_by_its_neighbours_titles_either_way():
    # Waterfall links to Agile; Gantt Charts links to Waterfall: both are its neighbours.
    index = NeighbourTitles.build(TITLES, [(3, 1), (2, 3), (4, 1)])
    scores = index.scores(["agile", "charts"])
    assert max(scores, key=scores.__getitem__) == 3  # the note between the two names
    assert set(scores) == {3, 4}  # Scrum links to Agile too; the named notes' own fields do not hold their names
    assert index.scores(["waterfall"]).keys() == {1, 2}  # its neighbours either way are found by its title
    assert index.scores(["nothing"]) == {}


def test_a_hub_is_no_ones_neighbour_and_has_no_field():
    edges = [(5, n) for n in (1, 2, 3, 4, 6)] + [(3, 1)]
    index = NeighbourTitles.build(TITLES, edges, hub=4)  # Index links to 5 notes: a hub
    assert index.scores(["index"]) == {}  # its title is no neighbour's word
    assert 5 not in index.scores(["agile", "charts", "waterfall", "scrum", "kanban"])
    assert NeighbourTitles.build(TITLES, edges, hub=5).scores(["index"]).keys() == {1, 2, 3, 4, 6}


def test_no_field_for_a_trigram_index():
    assert NeighbourTitles.build(TITLES, [(3, 1)], tokenizer="trigram").scores(["agile"]) == {}


def test_the_terms_of_a_match_expression():
    assert match_terms('"agile" OR "say ""hi"""') == ["agile", 'say "hi"']
    assert match_terms(None) == []


@pytest.fixture
def methods(tmp_path):
    root = tmp_path / "methods"
    write(root, "Agile.md", "Short loops of work with fast feedback from users.\n")
    write(root, "Gantt Charts.md", "Bars on a timeline, one per task.\n")
    write(root, "Waterfall.md", "Plan everything up front, unlike [[Agile]]; plan with [[Gantt Charts]].\n")
    write(root, "Scrum.md", "Sprints and a backlog.\n")
    index_vault(root, progress=False)
    return root


QUERY = "the method that plans with gantt charts instead of agile"


def test_the_lane_ranks_the_note_between_the_names_first(methods, closing):
    recaller = closing(open_recaller(methods))
    result = recaller.ask(QUERY, "hybrid+ppr", RecallSettings(weights={"neighbour_titles": 0.2}))
    lane = result.lanes["neighbour_titles"]
    assert lane[0].path == "Waterfall.md"
    assert all(c.sources == ["neighbour_titles"] for c in lane)
    assert [c.score for c in lane] == sorted((c.score for c in lane), reverse=True)


def test_off_by_default_and_outside_the_modes_of_both_families(methods, closing):
    recaller = closing(open_recaller(methods))
    assert "neighbour_titles" not in recaller.ask(QUERY, "hybrid+ppr", RecallSettings()).lanes
    on = RecallSettings(weights={"neighbour_titles": 0.2})
    assert "neighbour_titles" not in recaller.ask(QUERY, "hybrid", on).lanes
    assert "neighbour_titles" not in recaller.ask(QUERY, "ppr", on).lanes


def test_a_failing_lane_falls_back_with_a_warning(methods, monkeypatch, caplog, closing):
    import sqlite3

    def broken(cls, store, hub=30, out_only=False):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(NeighbourTitles, "from_store", classmethod(broken))
    result = closing(open_recaller(methods)).ask(QUERY, "hybrid+ppr", RecallSettings(weights={"neighbour_titles": 0.2}))
    assert result.fallbacks["graph"] is True
    assert result.results  # fused without it
    assert any("neighbour_titles lane failed" in r.getMessage() for r in caplog.records)


def test_neighbourhood_agreement_raises_a_dense_note_whose_neighbour_is_dense_too():
    from brain.recall.fusion import neighbourhood_agreement

    fused = {1: 0.030, 2: 0.029, 3: 0.028, 4: 0.020}
    dense = [2, 3, 4]  # 1 is BM25's alone
    neighbours = {1: {2}, 2: {9}, 3: {4}, 4: {3}}
    out = neighbourhood_agreement(fused, dense, neighbours, 0.1)
    assert out[1] == fused[1]  # its neighbour is near, but it is not: no evidence of its own
    assert out[2] == fused[2]  # a lone look-alike: its neighbour is not near the query
    assert out[3] == pytest.approx(0.0308) and out[4] == pytest.approx(0.022)
    assert neighbourhood_agreement(fused, dense, {3: {3}}, 0.1) == fused  # a link to itself is no neighbour
