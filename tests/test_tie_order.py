"""Notes that score exactly the same come in the order of their paths, whatever order the index
met them in: a note's id follows when it was first indexed (a vault indexed afresh, a rename, a
``--rebuild``), so ties broken by id, or by numpy's partition order, put the same vault's same
answer in another order on another machine. Fake embedder: copies of a note tie exactly."""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner
from conftest import write

from brain.cli import cli
from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.types import BASE_MODES, RecallSettings

QUESTION = "harbour crane winter storm schedule"
DEPTH = 5  # each lane: the copies and the storms, not the leaves (no seeds), and a cut in a tie
CRANE = (
    "# Crane schedule\n\nThe harbour crane schedule during winter storms: cranes stop above gale force."
    " [[alpha/leaf]] [[zulu/leaf]]\n"
)
# Copies of one note in three folders (the same text: the same cosine, BM25 and names), a hub
# linking to all of them (a symmetric graph: the same PageRank), and notes around them.
NOTES = {
    "alpha/crane.md": CRANE,
    "mid/crane.md": CRANE,
    "zulu/crane.md": CRANE,
    "hub.md": "# Hub\n\n[[alpha/crane]] [[mid/crane]] [[zulu/crane]] the harbour in winter.\n",
    # Reached by PageRank alone, through the copies, and alike: the same PageRank.
    "alpha/leaf.md": "# Leaf\n\nNothing of it.\n",
    "zulu/leaf.md": "# Leaf\n\nNothing of it.\n",
    "alpha/storm.md": "# Storm\n\nWinter storm warnings for the harbour.\n",
    "zulu/storm.md": "# Storm\n\nWinter storm warnings for the harbour.\n",
    "ferry.md": "# Ferry\n\nThe ferry timetable, summer and winter.\n",
}


def _vault(root, paths):
    for rel in paths:
        write(root, rel, NOTES[rel])


def _built_two_ways(tmp_path):
    """The same vault twice: indexed at once, and with its notes first indexed in reverse order."""
    first = tmp_path / "first"
    _vault(first, sorted(NOTES))
    index_vault(first)
    second = tmp_path / "second"
    for rel in sorted(NOTES, reverse=True):  # each its own index run: ids in reverse path order
        _vault(second, [rel])
        index_vault(second)
    return first, second


def _answer(vault, mode):
    """Each lane's notes and the answer's, with their scores."""
    recaller = open_recaller(vault)
    try:
        result = recaller.ask(QUESTION, mode, RecallSettings(k=10, depth=DEPTH))
    finally:
        recaller.close()
    # Rounded: PageRank's sums run in the order of the ids, and differ in the last bit or so.
    lanes = {name: [(c.path, round(c.score, 12)) for c in lane] for name, lane in result.lanes.items()}
    return lanes, [(c.path, round(c.score, 12), c.dense_score) for c in result.results]


@pytest.mark.parametrize("mode", BASE_MODES)
def test_ties_come_in_path_order_whatever_order_the_notes_were_indexed_in(tmp_path, mode):
    first, second = _built_two_ways(tmp_path)
    lanes, shown = _answer(first, mode)
    assert _answer(second, mode) == (lanes, shown)
    for ranked in [*lanes.values(), [(path, (score, dense)) for path, score, dense in shown]]:
        for (path, score), (after, same) in itertools.pairwise(ranked):
            assert score != same or path < after, ranked  # an equal score: by path
    dense = [path for path, _ in lanes["dense"] if path.endswith("crane.md")]
    assert dense == ["alpha/crane.md", "mid/crane.md", "zulu/crane.md"]


def test_brain_ask_json_orders_ties_the_same_after_a_rebuild_in_another_order(tmp_path):
    first, second = _built_two_ways(tmp_path)
    answers = []
    for vault in (first, second):
        out = CliRunner().invoke(cli, ["ask", "--vault", str(vault), "--json", "-k", "10", QUESTION])
        assert out.exit_code == 0, out.output
        answers.append([(r["path"], r["score"]) for r in json.loads(out.stdout)["results"]])
    assert answers[0] == answers[1]


SUPERSEDED = {
    "old.md": "---\nstatus: superseded\ndate: 2024-01-01\n---\n# Old plan\n\nThe old harbour plan.\n",
    "zulu/plan.md": "---\nsupersedes: '[[old]]'\ndate: 2025-01-01\n---\n# Zulu plan\n\nA new plan. [[old]]\n",
    "alpha/plan.md": "---\nsupersedes: '[[old]]'\ndate: 2025-01-01\n---\n# Alpha plan\n\nA new plan. [[old]]\n",
    "gone.md": "---\nstatus: obsolete\ndate: 2024-01-01\n---\n# Gone\n\nGone now.\n",
    "zulu/after.md": "---\ndate: 2025-02-02\n---\n# After\n\n[[gone]] is no more.\n",
    "alpha/after.md": "---\ndate: 2025-02-02\n---\n# After\n\n[[gone]] is no more.\n",
}


def test_of_two_notes_that_replace_one_the_successor_is_the_first_by_path_whatever_order_they_were_indexed_in(
    tmp_path,
):
    """Two notes that say they supersede one (or two of the same date linking to an obsolete
    one): its successor was the first the index met, another after the vault was indexed anew."""
    from index_helpers import open_store

    from brain.recall.supersession import successors

    found = []
    for name, order in (("first", sorted(SUPERSEDED)), ("second", sorted(SUPERSEDED, reverse=True))):
        vault = tmp_path / name
        for rel in order:
            write(vault, rel, SUPERSEDED[rel])
            index_vault(vault)
        store = open_store(vault)
        try:
            path = {note_id: p for note_id, (p, _) in store.notes_brief(store.note_ids()).items()}
            found.append({path[old]: path[new] for old, new in successors(store).items()})
        finally:
            store.close()
    assert found[0] == found[1] == {"old.md": "alpha/plan.md", "gone.md": "alpha/after.md"}


SPELLS = {
    "wizard.md": "# Wizard\n\nThe wizard's spells. [[spells/aaa]] [[spells/mmm]] [[spells/zzz]]\n",
    "spells/aaa.md": "# Ember\n\nAn ember bolt that burns.\n",
    "spells/mmm.md": "# Chill\n\nA lance of frost: cold damage.\n",
    "spells/zzz.md": "# Stone\n\nSkin of stone.\n",
}


@pytest.mark.parametrize("depth", [2, 4])
def test_notes_pagerank_cannot_tell_apart_come_by_their_cosine_with_the_query(tmp_path, monkeypatch, depth):
    """The pages one note links alike (every spell of a class) share one PageRank value: the
    question tells them apart where the walk cannot, and decides which of them the cut keeps."""
    from brain.recall import ppr

    for rel, text in SPELLS.items():
        write(tmp_path, rel, text)
    index_vault(tmp_path)
    recaller = open_recaller(tmp_path)
    try:
        ids = {path: note_id for note_id, (path, _) in recaller.store.notes_brief(recaller.store.note_ids()).items()}
        tied = {ids["wizard.md"]: 0.4, ids["spells/aaa.md"]: 0.2, ids["spells/mmm.md"]: 0.2, ids["spells/zzz.md"]: 0.2}
        monkeypatch.setattr(ppr.LinkGraph, "rank", lambda self, *args, **kwargs: list(tied.items()))
        result = recaller.ask("frost lance damage", "hybrid+ppr", RecallSettings(k=10, depth=depth))
    finally:
        recaller.close()
    lane = result.lanes["ppr"]
    assert [c.path for c in lane[:2]] == ["wizard.md", "spells/mmm.md"]  # by path, Ember (aaa) would come second
    assert len(lane) == depth
    spells = [(-c.dense_score, c.path) for c in lane[1:]]
    assert spells == sorted(spells)
