"""Recall stages read as a reviewer: each test here failed on the code it was written against."""

from __future__ import annotations

import json
import unicodedata

import pytest
from click.testing import CliRunner
from conftest import write

from brain.cli import cli
from brain.index.indexer import index_vault
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings


class Constant:
    """A cross-encoder that cannot tell the passages apart, at a logit below zero (an MS MARCO
    model scores a passage it finds irrelevant at about -5 to -11)."""

    def __init__(self, value: float):
        self.value = value

    def score(self, query, candidates):
        return [self.value] * len(candidates)


@pytest.fixture
def yearly(tmp_path):
    root = tmp_path / "dated"
    for year in (2022, 2023, 2024, 2025):
        head = f"---\ndate: {year}-06-01\ntitle: Launch deadline\n---\n"
        write(root, f"Deadline {year}.md", f"{head}The launch deadline is set for the spring release.\n")
    index_vault(root, progress=False)
    return root


@pytest.mark.parametrize("logit", [-5.0, 5.0])
def test_freshness_after_the_reranker_puts_the_newest_first_also_at_scores_below_zero(yearly, monkeypatch, logit):
    """A temporal query prefers the newest of near-equals. After a cross-encoder the scores are
    its logits, below zero for most passages: × 1.15 made the newest note's the lowest, and
    "what is the current launch deadline" answered the oldest of four equal notes first."""
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "a-cross-encoder")
    monkeypatch.setattr("brain.recall.pipeline.load_reranker", lambda name: Constant(logit))
    recaller = open_recaller(yearly)
    try:
        result = recaller.ask("what is the current launch deadline", "hybrid+rerank")
    finally:
        recaller.close()
    assert result.reranked
    assert [c.path for c in result.results] == [f"Deadline {year}.md" for year in (2025, 2024, 2023, 2022)]
    assert [c.score for c in result.results] == sorted((c.score for c in result.results), reverse=True)


@pytest.mark.parametrize("mode", ["vector+rerank", "hybrid+ppr+rerank"])
def test_a_reranker_pool_smaller_than_k_still_answers_k_notes(yearly, monkeypatch, mode):
    """The reranker scored the top --pool and the answer was those alone: `-k 4 --pool 2` gave
    two notes of the four asked for, and nothing said why."""
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "a-cross-encoder")
    monkeypatch.setattr("brain.recall.pipeline.load_reranker", lambda name: Constant(1.0))
    recaller = open_recaller(yearly)
    try:
        result = recaller.ask("spring release", mode, RecallSettings(k=4, pool=2))
    finally:
        recaller.close()
    assert result.reranked and len(result.results) == 4, [c.path for c in result.results]
    out = CliRunner().invoke(
        cli,
        ["ask", "--vault", str(yearly), "--no-server", "--json", "-k", "4", "--pool", "2", "--mode", mode, "spring"],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["results"]) == 4 and all(r["rerank_score"] is not None for r in data["results"])


@pytest.mark.parametrize(
    ("written", "asked"),
    [
        (unicodedata.normalize("NFD", "crème brûlée"), unicodedata.normalize("NFC", "crème brûlée")),
        (unicodedata.normalize("NFC", "crème brûlée"), unicodedata.normalize("NFD", "crème brûlée")),
        ("всё включено", "все включено"),
        ("ｓｑｌｉｔｅ ｔｕｎｉｎｇ", "sqlite tuning"),
    ],
)
def test_the_entity_gate_knows_a_name_however_it_is_composed(tmp_path, written, asked):
    """The gate keyed titles and aliases as written and looked the query up as the index searches
    it (composed, narrow): a name a Mac wrote decomposed, or with ё, or in full width, was no
    name of the vault to it, and `gated` followed the links of a query that names a note."""
    root = tmp_path / "names"
    write(root, "Dessert.md", f"---\naliases: [{written}]\n---\nA custard under burnt sugar.\n")
    write(root, "Kitchen.md", "The [[Dessert]] is served cold.\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    try:
        gate = recaller.ask(asked, "gated").gate
    finally:
        recaller.close()
    assert gate.entity and "Dessert.md" in gate.reason, gate


def test_a_note_the_query_names_stays_first_in_a_temporal_query(tmp_path):
    """A query that is one note's name, whole, puts that note first (README, names lane): by
    0.003 of fused score, and freshness then added up to 15% to a newer note's: "current sprint"
    answered a 2025 log first and the note named *Current sprint* second."""
    root = tmp_path / "sprints"
    write(root, "Current sprint.md", "---\ndate: 2020-01-01\n---\nGoals and owners, kettle lantern meadow.\n")
    write(
        root, "Sprint log 2025.md", "---\ndate: 2025-06-01\n---\nCurrent sprint. The current sprint, current sprint.\n"
    )
    for i in range(6):
        write(root, f"Other {i}.md", f"---\ndate: 2021-0{i + 1}-01\n---\nUnrelated kettle anchor {i}.\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    try:
        plain = recaller.ask("current sprint", "hybrid+ppr", RecallSettings(freshness=0.0)).results
        fresh = recaller.ask("current sprint", "hybrid+ppr").results
    finally:
        recaller.close()
    assert plain[0].path == "Current sprint.md" and plain[0].named  # put first by the names lane
    assert plain[1].path == "Sprint log 2025.md"  # the newer note: near enough for freshness to matter
    assert [c.path for c in fresh[:2]] == ["Current sprint.md", "Sprint log 2025.md"]
    assert [c.score for c in fresh] == sorted((c.score for c in fresh), reverse=True)


@pytest.mark.parametrize("depth", [1, 2])
def test_no_note_is_said_to_be_put_first_when_the_query_names_two(tmp_path, depth):
    """The names lane marks each note it names whole; the fusion puts one first only where it is
    the only one. A note the names lane brought to the pool kept its mark when two were named, and
    `brain eval --explain` said "the query is the name of …, and only of it: put first"; and at
    --depth 1 the lane listed one of the two, which was then the only one, and was put first."""
    root = tmp_path / "twins"
    write(root, "Alpha/Plan.md", "---\naliases: [Roadmap]\n---\nKettle lantern meadow.\n")
    write(root, "Beta/Plan.md", "---\naliases: [Roadmap]\n---\nOrchard pepper ladder.\n")
    for i in range(4):
        write(root, f"Other {i}.md", f"Roadmap roadmap anchor {i}.\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    try:
        result = recaller.ask("roadmap", "hybrid", RecallSettings(depth=depth, k=6))
        plain = recaller.ask("roadmap", "hybrid", RecallSettings(depth=depth, k=6, name_first=False))
    finally:
        recaller.close()
    assert {"Alpha/Plan.md", "Beta/Plan.md"} & {c.path for c in result.results}
    assert not [c.path for c in result.results if c.named]
    assert [c.path for c in result.results] == [c.path for c in plain.results]


@pytest.mark.parametrize("mode", ["hybrid+rerank", "vector+rerank"])
def test_no_rerank_beside_a_mode_that_reranks_is_a_usage_error(yearly, monkeypatch, mode):
    """`--no-rerank --mode hybrid+rerank` loaded the cross-encoder and reranked, the flag dropped
    without a word; an option `brain ask` would drop is a usage error (cli.py). (With --ab it
    is how two modes, one reranked, are compared: --no-rerank adds +rerank to neither.)"""
    monkeypatch.setenv("BRAIN_RERANK_MODEL", "a-cross-encoder")
    monkeypatch.setattr("brain.recall.pipeline.load_reranker", lambda name: Constant(1.0))
    out = CliRunner().invoke(
        cli, ["ask", "--vault", str(yearly), "--no-server", "--no-rerank", "--mode", mode, "spring"]
    )
    assert out.exit_code == 2, out.output
    assert "--no-rerank" in out.output and "+rerank" in out.output


def test_modes_compared_rerank_the_passage_each_shows(tmp_path, monkeypatch):
    """`Recaller.compare` (`brain ask --ab`, `brain eval`) shares the cross-encoder's scores
    between modes; they were kept by note, and a note hybrid shows by its BM25 passage and ppr by
    its nearest one took in ppr the score of hybrid's passage: a rerank_score of another passage
    than the snippet, and an order by it."""
    from brain.recall.rerank import passage

    class ByPassage:
        def score(self, query, candidates):
            return [float(len(passage(c))) for c in candidates]

    monkeypatch.setenv("BRAIN_RERANK_MODEL", "a-cross-encoder")
    monkeypatch.setattr("brain.recall.pipeline.load_reranker", lambda name: ByPassage())
    root = tmp_path / "passages"
    write(root, "O1.md", "alpha beta gamma. See [[X]].\n")
    write(root, "O2.md", "alpha beta gamma.\n")
    write(root, "O3.md", "alpha beta gamma kettle.\n")
    one = "zyx " + "lantern meadow orchard pepper ladder copper valley river stone. " * 40
    two = "alpha beta window " + "basket thunder marble pillow candle ribbon. " * 40
    write(root, "X.md", f"# X\n\n## One\n\n{one}\n\n## Two\n\n{two}\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    try:
        results = recaller.compare("alpha beta gamma zyx", ["hybrid+rerank", "ppr+rerank"], RecallSettings(depth=2))
    finally:
        recaller.close()
    shown = {(r.mode, c.path): c.heading for r in results for c in r.results}
    assert shown["hybrid+rerank", "X.md"] != shown["ppr+rerank", "X.md"]  # two passages of one note
    for result in results:
        for c in result.results:
            assert c.rerank_score == float(len(passage(c))), (result.mode, c.path, c.heading)


@pytest.mark.parametrize(
    ("query", "lead"),
    [
        ("what is the deadline", "This other note is about the other things. "),
        ("deadline", "Straße " * 150),  # ß casefolds to two letters: the window was found in another text
        ("моё deadline", "Это моё, и это моё. "),  # a small word of Russian, written with ё
    ],
)
def test_a_snippet_is_centred_on_the_word_asked_for(query, lead):
    """The snippet centred on the first query word found anywhere in the chunk: "the" inside
    "other", at the chunk's start, and `--json` showed an agent the start of the chunk rather than
    the deadline asked about; and it looked in the casefolded text, whose positions are not the
    text's where a letter folds to two."""
    from brain.output import snippet
    from brain.recall.types import Candidate

    filler = "Kettle anchor ribbon lantern meadow orchard pepper ladder copper valley. " * 8
    body = lead + filler + "The launch deadline is the first of June. " + filler
    candidate = Candidate(1, "Plan.md", "Plan", 1, "", body, 0.5, 0.5)
    assert "launch deadline is the first of June" in snippet(candidate, query)


def test_a_long_note_the_hop_brings_is_scored_as_the_dense_lane_scores_it(tmp_path):
    """The dense lane lowers a note of many chunks by the long-note discount (its best chunk is
    high by luck); the one-hop expansion scored the same note by its best chunk alone, so in
    `graph` and `gated` a long note outranked the notes the dense lane had discounted it below,
    whenever the hop brought it rather than the dense lane: its score hung on --depth."""
    root = tmp_path / "long"
    write(root, "Hub.md", "kettle anchor ribbon harbour crane. See [[Manual]].\n")
    sections = "".join(
        f"## Part {i}\n\n"
        + ("kettle anchor ribbon. " if i == 7 else "")
        + "lantern meadow orchard pepper. " * 30
        + "\n\n"
        for i in range(40)
    )
    write(root, "Manual.md", f"# Manual\n\n{sections}")
    for i in range(5):
        write(root, f"Other {i}.md", f"orchard pepper ladder {i}.\n")
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    try:
        wide = recaller.ask("kettle anchor ribbon", "graph", RecallSettings(depth=10, k=10)).results
        narrow = recaller.ask("kettle anchor ribbon", "graph", RecallSettings(depth=1, k=10)).results
    finally:
        recaller.close()
    dense = next(c for c in wide if c.path == "Manual.md")
    hopped = next(c for c in narrow if c.path == "Manual.md")
    assert dense.via is None and hopped.via is not None  # the dense lane's, then the hop's
    assert dense.chunk_id == hopped.chunk_id and dense.score < dense.dense_score  # discounted there
    assert hopped.score == pytest.approx(dense.score)


def test_a_snippet_reads_its_passage_once_however_many_words_the_query_has():
    """A pasted query of 2,000 words: the snippet searched the passage once a word (2,000 regex
    searches a result, 4 s of CPU for `brain ask` over 12 passages of 200 links); now one pass
    over the passage's words finds the same first word asked for."""
    import sys

    from brain.output import snippet
    from brain.recall.types import Candidate

    words = [f"w{n:04d}x" for n in range(2000)]
    body = " ".join(f"[[Link {n}]]" for n in range(200)) + " the w1999x at last " + "filler " * 50
    candidate = Candidate(1, "Hub.md", "Hub", 1, "", body, 0.5, 0.5)
    searches = 0

    def count(frame, event, arg):  # every regex method called, whichever module calls it
        nonlocal searches
        if event == "c_call" and getattr(arg, "__name__", "") in ("search", "match", "finditer", "findall", "sub"):
            searches += 1

    sys.setprofile(count)
    try:
        shown = snippet(candidate, " ".join(words))
    finally:
        sys.setprofile(None)
    assert "w1999x at last" in shown
    assert searches < 20, searches
