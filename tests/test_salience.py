"""Query-side salience for the BM25 lane (``RecallSettings.query_salience``, off by default): each
query word weighted by how far the query's embedding moves without it, the lane's hits scored
again with FTS5's own formula, each word's part times its weight."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall import bm25, salience
from brain.recall.lexical import match_expression
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings


@pytest.mark.parametrize(
    ("query", "term", "rest"),
    [
        ("holding a blade in each hand", "blade", "holding a in each hand"),
        ("Blade, blade and shield", "blade", ", and shield"),  # every occurrence, in any case
        ("Ruairí's blade", "ruairi", "'s blade"),  # the index's word: accents folded
        ("owlbare stats", "owlbear", None),  # a respelled word: the query does not hold it
    ],
)
def test_the_query_without_a_word(query, term, rest):
    assert salience.without_term(query, term) == rest


class WordWeights:
    """An embedder whose vector is each word's one-hot times its weight, normalised: leaving out a
    heavy word moves the query more than leaving out a light one."""

    def __init__(self, weights: dict[str, float]):
        self.weights = weights
        self.words = sorted(weights)

    def embed_query(self, text: str) -> np.ndarray:
        vector = np.zeros(len(self.words), dtype=np.float32)
        for word in text.lower().split():
            if word in self.weights:
                vector[self.words.index(word)] += self.weights[word]
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector


def test_a_word_the_meaning_rests_on_is_more_salient():
    embedder = WordWeights({"blade": 5.0, "hand": 2.0, "each": 0.5})
    query = "blade each hand"
    found = salience.saliences(embedder, query, embedder.embed_query(query), ["blade", "each", "hand", "shield"])
    assert set(found) == {"blade", "each", "hand"}  # "shield" is no word of the query
    assert found["blade"] > found["hand"] > found["each"] > 0


def test_the_weights_average_one_and_strength_zero_is_bm25_as_it_is():
    found = {"blade": 0.3, "each": 0.1}
    weights = salience.term_weights(found, ["blade", "each", "owlbear"], 1.0)
    assert weights == pytest.approx({"blade": 1.5, "each": 0.5, "owlbear": 1.0})
    assert salience.term_weights(found, ["blade", "each"], 0.5) == pytest.approx({"blade": 1.25, "each": 0.75})
    assert salience.term_weights(found, ["blade", "each"], 0.0) == {"blade": 1.0, "each": 1.0}
    assert salience.term_weights({"blade": 0.0}, ["blade"], 1.0) == {"blade": 1.0}  # nothing moved the query
    damped = salience.term_weights(found, ["blade", "each"], 1.0, damps_only=True)
    assert damped == pytest.approx({"blade": 1.0, "each": 0.5})


def test_a_phrase_weight_scales_its_part_of_bm25():
    stats = bm25.TableStats(10, 5.0, {("blade",): 2, ("hand",): 3})
    fields = ("", "", "a blade in each hand")
    query = [("blade",), ("hand",)]
    blade = bm25.score(fields, [("blade",)], (1.0, 1.0, 1.0), stats)
    hand = bm25.score(fields, [("hand",)], (1.0, 1.0, 1.0), stats)
    assert bm25.score(fields, query, (1.0, 1.0, 1.0), stats) == pytest.approx(blade + hand)
    weighted = bm25.score(fields, query, (1.0, 1.0, 1.0), stats, {("blade",): 2.0, ("hand",): 0.5})
    assert weighted == pytest.approx(2 * blade + 0.5 * hand)


@pytest.fixture
def armoury(tmp_path):
    root = tmp_path / "armoury"
    write(root, "Two-Weapon Fighting.md", "# Two-Weapon Fighting\n\nA blade in each hand: on a 2 you reroll.\n")
    write(root, "Comes Around.md", "# Comes Around\n\nWhat comes up comes around, each time it comes.\n")
    # emoji are tokens to FTS5 (its length of the chunk), no words to bm25.tokens
    write(root, "Shields.md", "# Shields\n\n🛡️ A shield in the off hand adds to your defence. ⚔️ 🗡️\n")
    for i in range(8):  # more chunks, so that the words above are rare to BM25
        write(root, f"Filler {i}.md", f"# Filler {i}\n\nNothing of note here, page {i}.\n")
    index_vault(root, progress=False)
    return root


def test_weights_of_one_score_the_hits_as_fts5_does(armoury, closing):
    store = closing(open_recaller(armoury, rerank_model=None)).store
    expression = match_expression(store, "blade each hand comes")
    assert expression is not None
    hits = store.fts_search(expression, (4.0, 2.0, 1.0), 50)
    again = salience.reweighted(store, hits, expression, (4.0, 2.0, 1.0), {})
    assert [c for c, _ in again] == [c for c, _ in hits]
    assert [s for _, s in again] == pytest.approx([s for _, s in hits], rel=1e-6)


def test_the_bm25_lane_ranks_the_salient_words_note_first(armoury, monkeypatch, closing):
    # "comes" is rarer and said four times in *Comes Around*: BM25 alone puts it first. The
    # query means blades in hands: with the salience of each word, *Two-Weapon Fighting* leads.
    query = "blade each hand comes"
    monkeypatch.setattr(salience, "saliences", lambda *_: {"blade": 0.3, "hand": 0.2, "each": 0.02, "comes": 0.02})
    recaller = closing(open_recaller(armoury, rerank_model=None))

    def lexical(strength: float) -> list[str]:
        result = recaller.ask(query, "hybrid", RecallSettings(query_salience=strength))
        return [c.title for c in result.lanes["lexical"]]

    assert lexical(0.0)[0] == "Comes Around"
    assert lexical(1.0)[:2] == ["Two-Weapon Fighting", "Shields"]
