"""The bridge lane: a long question that describes one note and asks about a note it links to
("the aberration that rips spells out of minds teleports home: what is that home?") ranks the
notes the dense and BM25 lanes' first notes link to by their cosine with what the question
asks once the note it describes is explained away; a short query gets nothing from it."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace

import numpy as np
import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import bridge, query_form
from brain.recall.bridge import explained_away, long_enough
from brain.recall.dense import ChunkVectors, best_chunks
from brain.recall.opening import open_recaller
from brain.recall.types import Candidate, RecallSettings


def test_what_is_left_of_the_query_is_orthogonal_to_what_was_explained_away():
    rng = np.random.default_rng(7)
    query = rng.normal(size=16).astype(np.float32)
    query /= np.linalg.norm(query)
    described = [v / np.linalg.norm(v) for v in rng.normal(size=(2, 16)).astype(np.float32)]
    rest = explained_away(query, described)
    assert rest is not None
    assert float(np.linalg.norm(rest)) == pytest.approx(1.0, abs=1e-5)
    assert float(rest @ described[1]) == pytest.approx(0.0, abs=1e-5)  # the last one taken out exactly
    assert float(rest @ query) > 0  # still the query's direction, what the described notes do not say
    assert explained_away(query, [query]) is None  # a query that is the note itself leaves nothing to ask


@pytest.mark.parametrize(
    ("query", "long"),
    [
        ("owlbear stats", False),
        ("one two three four five six seven eight nine ten eleven", False),
        ("one two three four five six seven eight nine ten eleven twelve", True),
        ("  spaced   out   " * 6, True),
        ("长城有多长" * 20, False),  # a run of text without spaces is one word
    ],
)
def test_a_long_query(query, long):
    assert long_enough(query, 12) is long


@pytest.fixture
def bestiary(tmp_path):
    root = tmp_path / "bestiary"
    write(
        root,
        "Soul Flenser.md",
        "The soul flenser is a tentacled aberration that rips spells out of minds. Once it steals"
        " a spell it teleports back to its lair, the [[Underkrakens]]. It hunts beside the [[Star Masks]].\n",
    )
    write(
        root,
        "Underkrakens.md",
        "Drowned coral towers and sunken temples of a kraken city; krakens sleep and scheme in its"
        " flooded halls, their home beneath the sea.\n",
    )
    write(
        root,
        "Star Masks.md",
        "Star masks: tentacled aberrations that rip spells out of minds; once one steals a spell it teleports back.\n",
    )
    write(root, "Chaos Beast.md", "A chaos beast that fights the [[Soul Flenser]] over stolen spells.\n")
    write(root, "Sea Shanty.md", "A shanty of a city beneath the sea, home of sailors who sleep there.\n")
    index_vault(root, progress=False)
    return root


QUESTION = (
    "the tentacled aberration that rips spells out of minds teleports back once it steals one:"
    " what is that home beneath the sea?"
)


def test_the_lane_ranks_the_described_notes_links_by_what_the_question_asks(bestiary, closing):
    recaller = closing(open_recaller(bestiary))
    result = recaller.ask(QUESTION, "hybrid+ppr", RecallSettings())
    assert result.lanes["dense"][0].path == "Soul Flenser.md"  # the note the question describes
    lane = result.lanes["bridge"]
    # Only the notes it links to: not the note linking to it (Chaos Beast), not the unlinked one
    # the question's words fit too (Sea Shanty), not itself.
    assert [c.path for c in lane] == ["Underkrakens.md", "Star Masks.md"]
    assert all(c.sources == ["bridge"] for c in lane)
    assert [c.score for c in lane] == sorted((c.score for c in lane), reverse=True)
    assert all(
        c.via is not None and (c.via.from_path, c.via.direction) == ("Soul Flenser.md", "links to") for c in lane
    )
    # By the plain query the note repeating the description comes first; what is left once the
    # described note is explained away asks for the home.
    plain = best_chunks(recaller.store, [c.note_id for c in lane], recaller.embedder.embed_query(QUESTION))
    by_plain = sorted(lane, key=lambda c: -plain[c.note_id][1])
    assert by_plain[0].path == "Star Masks.md"
    assert all(c.dense_score == pytest.approx(plain[c.note_id][1]) for c in lane)  # shown with the query's own cosine


def test_the_lane_lifts_the_second_note_of_a_bridge_question(bestiary, closing):
    recaller = closing(open_recaller(bestiary))
    settings = RecallSettings(weights={**RecallSettings().weights, "bridge": 5.0})
    without = recaller.ask(QUESTION, "hybrid+ppr", RecallSettings(weights={**settings.weights, "bridge": 0.0}))
    strong = recaller.ask(QUESTION, "hybrid+ppr", settings)
    assert [c.path for c in strong.results].index("Underkrakens.md") < [c.path for c in without.results].index(
        "Underkrakens.md"
    )


def test_no_lane_for_a_short_query_or_outside_hybrid_ppr(bestiary, closing):
    recaller = closing(open_recaller(bestiary))
    assert recaller.ask("soul flenser home", "hybrid+ppr", RecallSettings()).lanes["bridge"] == []
    assert recaller.ask(QUESTION, "hybrid+ppr", RecallSettings(bridge_min_words=40)).lanes["bridge"] == []
    for mode in ("vector", "hybrid", "ppr"):  # it needs BM25's first note and the links: both families
        assert "bridge" not in recaller.ask(QUESTION, mode, RecallSettings()).lanes
    assert "bridge" not in recaller.ask(QUESTION, "hybrid+ppr", RecallSettings(weights={"bridge": 0.0})).lanes


def _two_passages(tmp_path, lair_link: str):
    """A described note of two passages: the one the question describes (its lair named by
    ``lair_link``), and songs linking to a note whose words fit what the question asks better."""
    root = tmp_path / "two-passages"
    write(
        root,
        "Soul Flenser.md",
        "# Soul Flenser\n\n## Hunting\n\n"
        + "The tentacled aberration rips spells out of minds, steals them and teleports back. " * 16
        + f"Its lair is {lair_link}.\n\n## Songs\n\n"
        + "Old ballads and drinking songs remember its victims by name in every port. " * 16
        + "Sailors sing of it in the [[Sea Shanty]].\n",
    )
    write(root, "Underkrakens.md", "Drowned coral towers of a kraken city; krakens scheme in its flooded halls.\n")
    write(root, "Sea Shanty.md", "A shanty of a city beneath the sea, home of sailors who sleep there.\n")
    index_vault(root, progress=False)
    return root


def test_the_notes_the_described_passage_links_to_come_first(tmp_path, closing):
    """The question describes the passage that names the lair: the note the songs link to fits
    "home beneath the sea" better (first without the rule), and is not the note asked about.
    It stays in the lane, after: what a reranker reads keeps it."""
    recaller = closing(open_recaller(_two_passages(tmp_path, "the [[Underkrakens]]")))
    result = recaller.ask(QUESTION, "hybrid+ppr", RecallSettings())
    assert result.lanes["dense"][0].path == "Soul Flenser.md"
    lane = result.lanes["bridge"]
    assert [c.path for c in lane] == ["Underkrakens.md", "Sea Shanty.md"]
    assert lane[1].score > lane[0].score  # by what is left alone the songs' note would lead
    plain = recaller.ask(QUESTION, "hybrid+ppr", RecallSettings(bridge_in_passage=False))
    assert [c.path for c in plain.lanes["bridge"]] == ["Sea Shanty.md", "Underkrakens.md"]
    # It leads nothing: the note after it scores higher, so no bonus for it.
    assert bridge.sure_first(lane, 0.0, QUESTION) == []


def test_every_linked_note_when_the_described_passage_links_to_none(tmp_path, closing):
    result = closing(open_recaller(_two_passages(tmp_path, "far below the waves"))).ask(
        QUESTION, "hybrid+ppr", RecallSettings()
    )
    assert [c.path for c in result.lanes["bridge"]] == ["Sea Shanty.md"]


def _scored(score: float, note_id: int) -> Candidate:
    return Candidate(note_id, f"{note_id}.md", str(note_id), note_id, "", "", score, score)


@pytest.mark.parametrize(
    ("scores", "margin", "sure"),
    [
        ([0.30, 0.20, 0.10], 0.08, [1]),  # a clear first: the note the question asks about
        ([0.30, 0.25, 0.10], 0.08, []),  # a close race: a guess
        ([0.5, 0.375], 0.125, [1]),  # exactly the margin (both exact in binary)
        ([0.10], 0.08, [1]),  # a lone linked note leads nothing, which scores 0
        ([0.05], 0.08, []),
        ([0.30, 0.29], 0.0, [1]),  # margin 0: its first note, always
        ([0.30, 0.10, 0.28], 0.08, []),  # first by the passage rule, not by score: it must lead them all
        ([], 0.08, []),
    ],
)
def test_sure_first(scores, margin, sure):
    found = [_scored(s, i) for i, s in enumerate(scores, 1)]
    assert bridge.sure_first(found, margin, "what is that home beneath the sea") == sure


@pytest.mark.parametrize(
    ("query", "compares"),
    [
        ("How does the Jewish idea of Ruach HaKodesh compare with the Christian Holy Spirit?", True),
        ("kafka vs rabbitmq for the telemetry pipeline, which did we pick and why", True),
        ("what is the difference between a mook and a normal monster in a fight", True),
        ("чем отличается кафка от кролика в нашей телеметрии", True),
        ("сравнение двух подходов к ретраям", True),
        ("the aberration teleports back once it steals a spell: what is that home?", False),
        ("how vs. code handles it", True),  # a word on its own, even where it is not a comparison
        ("the canvas of the vision", False),  # "vs" inside a word is not "vs"
    ],
)
def test_a_question_that_compares(query, compares):
    assert query_form.compares(query) is compares
    clear = [_scored(0.5, 1), _scored(0.1, 2)]
    assert bridge.sure_first(clear, 0.08, query) == ([] if compares else [1])


def _bonus_of(recaller, settings: RecallSettings, question: str = QUESTION) -> dict[str, float]:
    """Each fused note's score with the top-rank bonus less its score without it."""
    with_bonus = recaller.ask(question, "hybrid+ppr", settings)
    without = recaller.ask(question, "hybrid+ppr", replace(settings, top_bonus=()))
    plain = {c.path: c.score for c in without.results}
    return {c.path: c.score - plain[c.path] for c in with_bonus.results}


def test_its_first_note_takes_the_bonus_only_when_it_stands_clear(bestiary, closing):
    """Only the bridge lane votes (besides dense, for the pool): its first note gets the rank-1
    bonus times its weight times its scale when it leads the second by the margin; its second
    note never gets one; raise the margin past the lead and the first gets none either (README,
    "What each stage is worth": a bridge question's answer, second behind the note it describes,
    goes first; the bonus on its first three notes by share cost vaultofknowledge)."""
    recaller = closing(open_recaller(bestiary))
    weights = {lane: 0.0 for lane in RecallSettings().weights} | {"dense": 1.0, "bridge": 1.0}
    base = RecallSettings(weights=weights, lane_rrf_k={}, bonus_margin=0.0, bonus_scale={"dense": 0.0})
    lane = recaller.ask(QUESTION, "hybrid+ppr", base).lanes["bridge"]
    first, second = lane[0], lane[1]
    lead = first.score - second.score
    assert lead > 0
    sure = replace(base, bridge_margin=lead * 0.9, bonus_scale={"dense": 0.0, "bridge": 3.0})
    bonus = _bonus_of(recaller, sure)
    assert bonus[first.path] == pytest.approx(3.0 * 1.0 * sure.top_bonus[0])
    assert bonus[second.path] == pytest.approx(0.0)
    unsure = replace(sure, bridge_margin=lead * 1.1)
    assert all(value == pytest.approx(0.0) for value in _bonus_of(recaller, unsure).values())
    # The same question set beside another note names both notes it asks about: however clear
    # the lane's first note, no bonus.
    comparing = QUESTION + " How does it compare with the star masks?"
    lane = recaller.ask(comparing, "hybrid+ppr", base).lanes["bridge"]
    assert len(lane) == 2 and lane[0].score > lane[1].score
    clear = replace(sure, bridge_margin=(lane[0].score - lane[1].score) * 0.9)
    assert all(value == pytest.approx(0.0) for value in _bonus_of(recaller, clear, comparing).values())
    assert RecallSettings().bonus_scale["bridge"] > 0 and RecallSettings().bridge_margin > 0  # on by default


def test_past_max_targets_an_index_notes_links_are_not_all_scored(bestiary, monkeypatch, closing):
    monkeypatch.setattr(bridge, "MAX_TARGETS", 1)
    lane = closing(open_recaller(bestiary)).ask(QUESTION, "hybrid+ppr", RecallSettings()).lanes["bridge"]
    assert [c.path for c in lane] == ["Underkrakens.md"]  # the first link written


def test_the_lane_answers_over_the_vault_as_it_was(bestiary, closing):
    result = closing(open_recaller(bestiary, as_of=time.time())).ask(QUESTION, "hybrid+ppr", RecallSettings())
    assert [c.path for c in result.lanes["bridge"]] == ["Underkrakens.md", "Star Masks.md"]


def test_a_failing_bridge_lane_falls_back_with_a_warning(bestiary, monkeypatch, caplog, closing):
    recaller = closing(open_recaller(bestiary))

    def broken(note_ids):
        raise sqlite3.OperationalError("database disk image is malformed")

    monkeypatch.setattr(recaller.store, "neighbour_edges", broken)
    result = recaller.ask(QUESTION, "hybrid+ppr", RecallSettings())
    assert result.fallbacks["graph"] is True
    assert result.lanes["bridge"] == []
    assert result.results  # fused without it
    assert any("bridge lane failed" in r.getMessage() for r in caplog.records)


def test_a_note_linking_to_itself_or_to_nothing_gives_nothing(tmp_path, closing):
    root = tmp_path / "v"
    write(root, "Loop.md", "A loop note about rivers and mountains and seas, see [[Loop]].\n")
    write(root, "Alone.md", "Rivers and mountains, without a single link.\n")
    index_vault(root, progress=False)
    query = "rivers and mountains and seas and lakes and hills and plains and valleys and more"
    assert closing(open_recaller(root)).ask(query, "hybrid+ppr", RecallSettings()).lanes["bridge"] == []


def test_notes_without_chunks_score_nothing(bestiary, closing):
    store = closing(open_recaller(bestiary)).store
    vector = np.ones(64, dtype=np.float32) / 8
    assert ChunkVectors(store, []).best(vector) == {}
    assert ChunkVectors(store, [10_000]).closest(vector) == {}  # no such note


def test_a_note_only_the_lane_proposed_says_which_note_links_to_it(bestiary, closing):
    weights = {**RecallSettings().weights, "anchor_dense": 0.0, "anchor_lex": 0.0}  # they find it too
    result = closing(open_recaller(bestiary)).ask(QUESTION, "hybrid+ppr", RecallSettings(depth=2, weights=weights))
    assert "Underkrakens.md" not in [c.path for c in result.lanes["dense"] + result.lanes["lexical"]]
    found = {c.path: c for c in result.results}["Underkrakens.md"]
    assert found.via is not None and (found.via.from_path, found.via.direction) == ("Soul Flenser.md", "links to")


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("the aberration teleports back once it steals a spell: what is that home?", True),
        ("who mentors the new SRE who used to captain ferries across the Tagus", True),
        ("we are short of a heal-up, how does the party get out of the fight", True),
        ("feat that adds the escalation die to a skill check - whats the max it reaches", True),
        ("the note I wrote on the ferry captain's mentor?", True),  # a question mark is enough
        ("кто наставник нового инженера, который раньше водил паромы", True),
        ("сколько стоят логгеры нового поставщика", True),
        ("о чём я писал после планёрки про логгеры", True),  # ё: "чём" is "чем"
        ("с кем я обсуждал ретраи в телеметрии", True),
        ("какао с кардамоном по рецепту бабушки", False),  # "какао" is no "какой"
        ("big rubbery brute that heals itself every turn unless you burn it or hit it with acid", False),
        ("dimensionless number saying whether a droplet breaks up from stickiness or from momentum", False),
        ("showhow somewhere whatever", False),  # question words inside other words are not questions
    ],
)
def test_a_query_that_asks(query, asks):
    assert query_form.asks(query) is asks


@pytest.mark.parametrize(
    ("query", "only_why"),
    [
        ("why do two clean, flat pieces of the same metal fuse into one with no air around?", True),
        ("WHY does the aberration go home", True),
        ("почему два куска металла срастаются в вакууме", True),
        ("the talmud note on the heavenly voice - which side did it favour and why?", False),  # asks which
        ("the aberration teleports back once it steals a spell: what is that home?", False),
        ("the note on why empires fall?", True),  # asks for that note too: the rule reads only words
        ("the aberration's home beneath the sea?", False),  # a question mark, no question word
        ("whyever somewhy", False),  # inside other words
    ],
)
def test_a_question_that_only_asks_why(query, only_why):
    assert query_form.asks_only_why(query) is only_why


@pytest.mark.parametrize(
    ("bridge_ids", "anchor_ids", "query", "first"),
    [
        ([3, 4], [3, 5], "what is that home beneath the sea?", 3),  # both lanes' first: the note asked about
        ([3, 4], [4, 3], "what is that home beneath the sea?", None),  # they disagree: a guess
        ([3, 4], [3], "the aberration's home beneath the sea", None),  # a description asks for what it describes
        ([3, 4], [3], "how does its home compare with the star masks' lair?", None),  # names both it wants
        ([3, 4], [3], "why does it go home beneath the sea?", None),  # asks for the described thing's reason
        ([3, 4], [3], "where is that home beneath the sea, and why?", 3),  # asks where too
        ([], [3], "what is that home beneath the sea?", None),
        ([3], [], "what is that home beneath the sea?", None),
    ],
)
def test_agreed_first(bridge_ids, anchor_ids, query, first):
    found = [_scored(0.5, n) for n in bridge_ids]
    anchors = [_scored(9.0, n) for n in anchor_ids]
    assert bridge.agreed_first(found, anchors, query) == first


def _lair(tmp_path, described_newer: bool = False):
    """A described note whose one link is the answer: the bridge lane and anchor_lex agree on it.
    ``described_newer``: the described note dated 2026, the others 2019 (freshness lifts it)."""
    root = tmp_path / "vault"

    def dated(year: int) -> str:
        return f"---\ndate: {year}-01-01\n---\n" if described_newer else ""

    write(
        root,
        "Soul Flenser.md",
        dated(2026) + "The soul flenser is a tentacled aberration that rips spells out of minds. Once it"
        " steals a spell it teleports back to its lair, the [[Underkrakens]].\n",
    )
    write(root, "Underkrakens.md", dated(2019) + "Drowned coral towers of a kraken city; krakens sleep in its halls.\n")
    write(root, "Star Masks.md", dated(2019) + "Star masks: tentacled aberrations that rip spells out of minds.\n")
    index_vault(root, progress=False)
    return root


def test_a_note_both_the_bridge_lane_and_anchor_lex_put_first_goes_first(tmp_path, closing):
    """The question describes the soul flenser and asks for its home: the bridge lane (what is
    left of the question) and anchor_lex (BM25's best passage voting for what it links to) both
    put *Underkrakens* first, and it goes first, though the other lanes vote for the note the
    question describes; not with the rule off, and not for the same words as a description."""
    recaller = closing(open_recaller(_lair(tmp_path)))
    settings = RecallSettings()
    result = recaller.ask(QUESTION, "hybrid+ppr", settings)
    assert result.lanes["bridge"][0].path == result.lanes["anchor_lex"][0].path == "Underkrakens.md"
    assert result.results[0].path == "Underkrakens.md"
    off = recaller.ask(QUESTION, "hybrid+ppr", replace(settings, bridge_agreed_first=False))
    assert off.results[0].path == "Soul Flenser.md"
    described = QUESTION.replace(": what is that home beneath the sea?", " to its home beneath the sea")
    assert not query_form.asks(described)
    assert recaller.ask(described, "hybrid+ppr", settings).results[0].path == "Soul Flenser.md"
    why = QUESTION.replace(": what is that home beneath the sea?", ": why does it go home beneath the sea?")
    result = recaller.ask(why, "hybrid+ppr", settings)
    assert result.lanes["bridge"][0].path == result.lanes["anchor_lex"][0].path == "Underkrakens.md"
    assert result.results[0].path == "Soul Flenser.md"


def test_an_agreed_first_note_stays_first_in_a_temporal_question(tmp_path, closing):
    """With "now" in it a question is temporal, and freshness lifts newer notes by up to 15% of
    their score: the note two lanes agree on is a whole rank-1 bonus ahead, not a near-equal."""
    root = _lair(tmp_path, described_newer=True)
    question = QUESTION.replace("?", " now?")
    result = closing(open_recaller(root)).ask(question, "hybrid+ppr", RecallSettings())
    assert [c.path for c in result.results[:2]] == ["Underkrakens.md", "Soul Flenser.md"]


def test_explain_says_when_two_lanes_agree_on_the_first_note(tmp_path, closing):
    """`brain eval --explain` names the note put first because the bridge lane and anchor_lex agree."""
    from brain.evaluation.explain import explain, format_explanation
    from brain.evaluation.queries import EvalQuery

    recaller = closing(open_recaller(_lair(tmp_path)))
    query = EvalQuery("b1", QUESTION, "bridge", ("Underkrakens.md",))
    ex = explain(recaller, query, "hybrid+ppr", RecallSettings())
    assert ex.agreed == "Underkrakens.md" and ex.as_dict()["agreed"] == "Underkrakens.md"
    text = format_explanation(ex)
    assert "the bridge lane and anchor_lex both put Underkrakens.md first, and the query asks: put first" in text
    assert ex.kept is None and ex.as_dict()["agreed_kept_in_place"] is None
    off = explain(recaller, query, "hybrid+ppr", RecallSettings(bridge_agreed_first=False))
    assert off.agreed is None and off.kept is None and "anchor_lex both put" not in format_explanation(off)


def test_explain_says_why_a_note_two_lanes_agree_on_stays_where_it_was(tmp_path, closing):
    """For a question that asks only why, the two lanes still agree on *Underkrakens*, and the
    note the question describes keeps first place: `--explain` says so and why, not nothing."""
    from brain.evaluation.explain import explain, format_explanation
    from brain.evaluation.queries import EvalQuery

    recaller = closing(open_recaller(_lair(tmp_path)))
    why = QUESTION.replace(": what is that home beneath the sea?", ": why does it go home beneath the sea?")
    ex = explain(recaller, EvalQuery("w1", why, "paraphrase", ("Soul Flenser.md",)), "hybrid+ppr", RecallSettings())
    assert ex.agreed is None and ex.top[0].path == "Soul Flenser.md"
    assert ex.kept == ("Underkrakens.md", "asks only why")
    assert ex.as_dict()["agreed_kept_in_place"] == {"note": "Underkrakens.md", "because": "asks only why"}
    text = format_explanation(ex)
    assert "the bridge lane and anchor_lex both put Underkrakens.md first, but the query asks only why" in text
    query = EvalQuery("w1", why, "paraphrase", ("Soul Flenser.md",))
    off = explain(recaller, query, "hybrid+ppr", RecallSettings(bridge_agreed_first=False))
    assert off.kept is None  # the rule off: nothing was kept from it


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("what is that home beneath the sea?", None),
        ("the aberration's home beneath the sea", "asks nothing"),
        ("how does its home compare with the star masks' lair?", "compares"),
        ("why does it go home beneath the sea?", "asks only why"),
        ("where is that home beneath the sea, and why?", None),
    ],
)
def test_kept_in_place_names_the_query_form(query, why):
    assert bridge.kept_in_place(query) == why


@pytest.mark.parametrize("query", ["", "?", "   ", "\udcff why", "почему? " * 50_000, "why " * 100_000 + "what"])
def test_the_query_form_tests_take_any_text(query):
    """Empty, a lone surrogate (a file name's bytes), 100,000 words: an answer, never an exception."""
    for test in (query_form.is_question, query_form.compares, query_form.asks, query_form.asks_only_why):
        assert isinstance(test(query), bool)
    assert query_form.asks_only_why("почему? " * 50_000) and not query_form.asks_only_why("why " * 100_000 + "what")


@pytest.mark.parametrize(
    ("query", "compares"),
    [
        ("Postgres против MySQL", True),  # Russian's "versus": it was read as no comparison
        ("Postgres vs. MySQL", True),
        ("Postgres vs MySQL", True),
        ("Postgres versus MySQL", True),
        ("сравнить Postgres и MySQL", True),
        ("Postgres compared to MySQL", True),
        ("чем Postgres лучше MySQL", True),
        ("что лучше: Postgres или MySQL", True),
        ("Postgres лучше, чем MySQL?", True),
        ("is Postgres better than MySQL for telemetry", True),
        ("Postgres or MySQL, which is better for telemetry?", True),
        # "or", «или», «либо» alone weigh nothing: a question about one thing holds them as often
        ("Postgres или MySQL", False),
        ("Postgres либо MySQL", False),
        ("Postgres or MySQL", False),
        ("is Bowline still Dutch-only or does it do Spain now?", False),
        ("за и против Postgres", False),  # pros and cons of one thing
        ("как лучше настроить vim", False),  # "how best", not which of two
    ],
)
def test_the_comparison_words_users_type(query, compares):
    assert query_form.compares(query) is compares


@pytest.mark.parametrize(
    ("query", "compares"),
    [
        # «против» is "versus" only between two named things; before what a remedy or a vote is against it
        # is "against": «средство против боли» was read as a comparison, and the names lane stayed in.
        ("средство против боли", False),
        ("Средство против боли", False),
        ("таблетки против кашля для детей", False),
        ("я против этого решения", False),
        ("голосовал против", False),
        ("заклинание против нежити", False),
        ("что помогает против Covid", False),
        ("Спартак против Зенита", True),
        ("vim против emacs", True),
        ("кто сильнее: Гэндальф против Саурона", True),
        ("PostgreSQL против MySQL для логов", True),
        ("python 3.12 против 3.13", True),
    ],
)
def test_against_is_no_comparison_unless_between_two_names(query, compares):
    assert query_form.compares(query) is compares
