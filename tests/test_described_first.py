"""`RecallSettings.described_first` (on by default): a query that asks nothing, whose dense and
BM25 lanes put the same note first, that note's best passage linking to the note an anchor or
bridge lane puts first, is a description of the note, not a question through its link: the
described note goes first. Its plumbing only; what it is worth is measured in bench/."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import bridge
from brain.recall.opening import open_recaller
from brain.recall.types import Candidate, RecallSettings

DESCRIPTION = "tentacled aberration that rips spells out of minds and teleports back to its lair"
QUESTION = DESCRIPTION + ": what is that lair?"


def _hit(note_id: int, chunk_id: int | None = None) -> Candidate:
    return Candidate(note_id, f"{note_id}.md", str(note_id), chunk_id or note_id * 10, "", "", 0.5, 0.5)


def _links(table: dict[int, list[int]], asked: list[int]):
    def linked(chunk_id: int) -> list[int]:
        asked.append(chunk_id)
        return table.get(chunk_id, [])

    return linked


@pytest.mark.parametrize(
    ("dense", "lexical", "link_firsts", "table", "query", "first"),
    [
        ([1, 2], [1, 3], [2], {10: [2]}, "an aberration teleporting home", 1),  # the passage mentions 2
        ([1, 2], [1, 3], [4, 2], {10: [2]}, "an aberration teleporting home", 1),  # any link lane's first
        ([1, 2], [1, 3], [2], {10: [2]}, "where does the aberration teleport?", None),  # a question
        ([1, 2], [1, 3], [2], {10: [2]}, "what aberration teleports home", None),  # a question word
        ([1, 2], [1, 3], [2], {10: [2]}, "sleeping aberration, can I finish it off", None),  # asked, no "?"
        ([1, 2], [1, 3], [2], {10: [2]}, "sleeping aberration. can I finish it off", None),  # a sentence, then asked
        ([1, 2], [1, 3], [2], {10: [2]}, "can I finish the aberration off", None),  # opens as a question
        ([1, 2], [3, 1], [2], {10: [2]}, "an aberration teleporting home", None),  # BM25 puts 3 first
        ([1, 2], [1, 3], [2], {10: [5]}, "an aberration teleporting home", None),  # links elsewhere
        ([1, 2], [1, 3], [1], {10: [2]}, "an aberration teleporting home", None),  # the link lanes agree
        ([1, 2], [1, 3], [], {10: [2]}, "an aberration teleporting home", None),  # no link lane ran
        ([], [1, 3], [2], {10: [2]}, "an aberration teleporting home", None),
        ([1, 2], [], [2], {10: [2]}, "an aberration teleporting home", None),
    ],
)
def test_described_first(dense, lexical, link_firsts, table, query, first):
    asked: list[int] = []
    got = bridge.described_first(
        [_hit(n) for n in dense], [_hit(n) for n in lexical], link_firsts, _links(table, asked), query
    )
    assert got == first
    if first is not None:
        assert asked == [10]  # the dense lane's first note's best passage


def test_the_links_are_read_only_once_the_cheap_tests_pass():
    asked: list[int] = []
    bridge.described_first([_hit(1)], [_hit(3)], [2], _links({10: [2]}, asked), "an aberration")
    bridge.described_first([_hit(1)], [_hit(1)], [2], _links({10: [2]}, asked), "what aberration?")
    assert asked == []


@pytest.fixture
def lair(tmp_path):
    root = tmp_path / "vault"
    write(
        root,
        "Soul Flenser.md",
        "The soul flenser is a tentacled aberration that rips spells out of minds. Once it steals"
        " a spell it teleports back to its lair, the [[Underkrakens]].\n",
    )
    write(root, "Underkrakens.md", "Drowned coral towers of a kraken city; krakens sleep in its halls.\n")
    write(root, "Star Masks.md", "Star masks: tentacled aberrations that hunt in the dark between stars.\n")
    index_vault(root, progress=False)
    return root


def test_the_pipeline_asks_the_rule_only_when_it_is_on(lair, monkeypatch, closing):
    """On, the rule sees the dense and BM25 lanes and the link lanes' first notes, and for the
    description names *Soul Flenser*, whose passage links to *Underkrakens*; off, it is not asked."""
    seen: list[tuple[str, str, list[int], int | None]] = []
    real = bridge.described_first

    def spy(dense, lexical, link_firsts, linked, query):
        got = real(dense, lexical, link_firsts, linked, query)
        seen.append((dense[0].path, lexical[0].path, list(link_firsts), got))
        return got

    monkeypatch.setattr(bridge, "described_first", spy)
    recaller = closing(open_recaller(lair))
    on = RecallSettings(described_first=True)
    result = recaller.ask(DESCRIPTION, "hybrid+ppr", on)
    assert result.results[0].path == "Soul Flenser.md"
    ids = {c.path: c.note_id for c in result.results}
    assert len(seen) == 1
    dense_first, lexical_first, link_firsts, got = seen[0]
    assert dense_first == lexical_first == "Soul Flenser.md"
    assert ids["Underkrakens.md"] in link_firsts and got == ids["Soul Flenser.md"]
    seen.clear()
    # The question: the bridge lane and anchor_lex agree on the note it asks about, which goes
    # first (bridge.agreed_first), and this rule is not asked.
    assert recaller.ask(QUESTION, "hybrid+ppr", on).results[0].path == "Underkrakens.md"
    recaller.ask(DESCRIPTION, "hybrid+ppr", replace(on, described_first=False))
    assert RecallSettings().described_first is True  # the default
    recaller.ask(DESCRIPTION, "vector", on)  # no BM25 lane to agree with
    assert seen == []


def test_the_note_the_rule_names_goes_first(lair, monkeypatch, closing):
    """Whatever note the rule names is put first in the fused order, ahead of the dense lane's."""
    recaller = closing(open_recaller(lair))
    off = RecallSettings(described_first=False)
    ids = {c.path: c.note_id for c in recaller.ask(DESCRIPTION, "hybrid+ppr", off).results}
    monkeypatch.setattr(bridge, "described_first", lambda *args: ids["Star Masks.md"])
    assert recaller.ask(DESCRIPTION, "hybrid+ppr", RecallSettings()).results[0].path == "Star Masks.md"  # default
    assert recaller.ask(DESCRIPTION, "hybrid+ppr", off).results[0].path == "Soul Flenser.md"


def test_explain_says_a_description_put_its_note_first(lair, monkeypatch, closing):
    """`brain eval --explain` names the note the rule put first, and says why, in text and JSON."""
    from brain.evaluation.explain import explain, format_explanation
    from brain.evaluation.queries import EvalQuery

    recaller = closing(open_recaller(lair))
    ids = {c.path: c.note_id for c in recaller.ask(DESCRIPTION, "hybrid+ppr", RecallSettings()).results}
    monkeypatch.setattr(bridge, "described_first", lambda *args: ids["Star Masks.md"])
    query = EvalQuery("d1", DESCRIPTION, "paraphrase", ("Soul Flenser.md",))
    ex = explain(recaller, query, "hybrid+ppr", RecallSettings(described_first=True))
    assert ex.described == "Star Masks.md" and ex.as_dict()["described"] == "Star Masks.md"
    assert ex.top[0].path == "Star Masks.md"
    assert "the dense and BM25 lanes both put Star Masks.md first, the query asks nothing" in format_explanation(ex)
    off = explain(recaller, query, "hybrid+ppr", RecallSettings(described_first=False))
    assert off.described is None and "the dense and BM25 lanes both put" not in format_explanation(off)


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("sleeping creature, can I finish it off", True),
        ("attacking someone you cant see, is there a coin flip to whiff", True),
        ("can I zoom over the enemies without a free swing at me", True),  # a question's opening
        ("flying rules - do they take a move action", True),
        ("можно ли добить спящего", True),
        ("sleeping creature. can I finish it off", True),  # after a sentence, not a clause
        ("flying rules! do they take a move action", True),
        ("sleeping creature… can I finish it off", True),
        ("what is that lair", True),
        ("the default random generator in python that's fine for simulations but unsafe for secrets", False),
        ("notes from the Lisbon offsite", False),
        ("a scanner that can it all", False),  # "can it" with no clause break before it
        ("Islington", False),  # "ли" only as a word
        ("фильмы с Брюсом Ли", False),  # a name, not the particle: ли never opens a sentence
        ("Стэн Ли и комиксы Marvel", False),
        ("знаешь ли ты Брюса Ли", True),
    ],
)
def test_asks_in_any_form(query, asks):
    from brain.recall import query_form

    assert query_form.asks_in_any_form(query) is asks
