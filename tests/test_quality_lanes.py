"""Issue 13 stages: names lane, anchor lanes, fusion details, chunking strategies, fence links.

Plumbing on small hand-built vaults with the fake (lexical) embedder: each stage does what it
says, and with its switch off the results are the old ones exactly.
"""

from __future__ import annotations

import itertools

import pytest
from conftest import write

from brain.index.indexer import index_vault
from brain.recall.lexical import match_expression
from brain.recall.lexical import search_depth as lexical_search_depth
from brain.recall.opening import open_recaller
from brain.recall.types import RecallSettings


def _paths(result) -> list[str]:
    return [c.path for c in result.results]


def _ranked(result) -> list[tuple[str, float]]:
    return [(c.path, c.score) for c in result.results]


# ----- a note's score from several chunks, BM25 column weights ------------------------------


def test_chunk_decay_lifts_a_note_that_answers_in_several_passages(tmp_path, closing):
    from brain.recall.dense import decayed

    assert decayed([0.5, 0.25], 0.0) == 0.0
    assert decayed([0.5, 0.25], 0.5) == pytest.approx(0.25 + 0.0625)
    root = tmp_path / "v"
    body = "\n\n".join(f"## Part {i}\n\n" + f"orchard pepper ladder kettle section {i}. " * 12 for i in range(4))
    write(root, "Long.md", body + "\n")
    write(root, "Short.md", "orchard pepper ladder kettle basket.\n")
    for i in range(10):
        write(root, f"Other {i}.md", f"thunder marble pillow {i}.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    query = "orchard pepper ladder kettle"
    plain = recaller.ask(query, "vector", RecallSettings(k=3))
    summed = recaller.ask(query, "vector", RecallSettings(k=3, chunk_decay=0.5))
    assert _paths(plain)[0] == "Short.md" and _paths(summed)[0] == "Long.md"
    assert summed.results[0].dense_score < summed.results[0].score  # the shown cosine stays the best chunk's
    lexical = recaller.ask(query, "hybrid", RecallSettings(k=3, chunk_decay=0.5))
    long_lexical = next(c for c in lexical.results if c.path == "Long.md")
    assert "lexical" in long_lexical.sources
    for mode in ("vector", "hybrid+ppr"):
        default = recaller.ask(query, mode, RecallSettings())
        off = recaller.ask(query, mode, RecallSettings(chunk_decay=0.0))
        assert _ranked(off) == _ranked(default)


def _long_and_short(root) -> None:
    """Long.md: 40 chunks, one of them the query's words and one more; Short.md: the words and two more."""
    sections = [f"## Part {i}\n\n" + f"thunder marble pillow {i} " * 35 for i in range(39)]
    sections.append("## Kettle\n\n" + "orchard pepper ladder kettle basket. " * 25)
    write(root, "Long.md", "\n\n".join(sections) + "\n")
    write(root, "Short.md", "orchard pepper ladder kettle lantern velvet.\n")
    for i in range(6):
        write(root, f"Other {i}.md", f"velvet canyon {i} orchard.\n")


def test_long_notes_lose_a_little_of_their_dense_score(tmp_path):
    import math

    from brain.recall.dense import long_note_cost
    from brain.recall.types import LONG_NOTE_CHUNKS

    assert long_note_cost(LONG_NOTE_CHUNKS, 0.02) == 0.0 and long_note_cost(1, 0.02) == 0.0
    assert long_note_cost(40, 0.02) == pytest.approx(0.02 * math.log(40 / 16))
    assert long_note_cost(40, 0.0) == 0.0 and long_note_cost(40, 0.02, free=40) == 0.0
    root = tmp_path / "v"
    _long_and_short(root)
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    ids = {row.path: row.id for row in recaller.store.note_rows().values()}
    assert recaller.store.note_chunk_counts([ids["Long.md"], ids["Short.md"], 999]) == {
        ids["Long.md"]: 40,
        ids["Short.md"]: 1,
    }
    query = "orchard pepper ladder kettle basket"
    off = recaller.ask(query, "vector", RecallSettings(k=3, long_note_discount=0.0))
    assert _paths(off)[0] == "Long.md"  # its best chunk is the closer one
    gap = off.results[0].score - off.results[1].score
    assert 0 < gap < 0.5
    on = recaller.ask(query, "vector", RecallSettings(k=3, long_note_discount=gap / math.log(40 / 16) * 1.5))
    assert _paths(on)[:2] == ["Short.md", "Long.md"]
    long = on.results[1]
    assert long.dense_score == pytest.approx(off.results[0].dense_score)  # the shown cosine stays the chunk's
    assert long.score == pytest.approx(long.dense_score - gap * 1.5)
    # Past LONG_NOTE_CHUNKS only: with the threshold above the note's size nothing moves.
    spared = recaller.ask(query, "vector", RecallSettings(k=3, long_note_discount=1.0, long_note_chunks=40))
    assert _ranked(spared) == _ranked(off)
    assert RecallSettings().long_note_discount == 0.02 and RecallSettings().long_note_chunks == 16
    recaller.close()


def test_max_of_n_takes_the_querys_spread_times_the_expected_best_of_n_off(tmp_path):
    import math
    from statistics import pstdev

    from brain.recall.dense import expected_max, max_of_n_cost

    # Blom's approximation against the exact expected maxima of 2, 10 and 100 standard normals.
    assert expected_max(0) == 0.0 and expected_max(1) == 0.0
    assert expected_max(2) == pytest.approx(0.5642, abs=0.03)
    assert expected_max(10) == pytest.approx(1.5388, abs=0.03)
    assert expected_max(100) == pytest.approx(2.5076, abs=0.03)
    assert max_of_n_cost(40, 0.05, 0.0) == 0.0 and max_of_n_cost(1, 0.05, 1.0) == 0.0
    assert max_of_n_cost(40, 0.05, 0.5) == pytest.approx(0.5 * 0.05 * expected_max(40))
    root = tmp_path / "v"
    _long_and_short(root)
    index_vault(root, progress=False)
    recaller = open_recaller(root)

    def spread(query: str) -> float:  # of the cosines of every chunk the search reaches (47 < depth × 4)
        _, scores = recaller.vectors.search(recaller.embedder.embed_query(query), recaller.vectors.size)
        return pstdev(scores.tolist())

    query = "orchard pepper ladder kettle basket"
    off = recaller.ask(query, "vector", RecallSettings(k=3, long_note_discount=0.0))
    assert _paths(off)[0] == "Long.md"
    gap = off.results[0].score - off.results[1].score
    assert 0 < gap < 0.5 and spread(query) > 0
    weight = gap / (spread(query) * expected_max(40)) * 1.5
    on = recaller.ask(query, "vector", RecallSettings(k=3, long_note_discount=0.0, max_of_n=weight))
    assert _paths(on)[:2] == ["Short.md", "Long.md"]
    short, long = on.results[:2]
    assert short.score == pytest.approx(short.dense_score)  # one chunk: one draw, nothing off
    assert long.dense_score == pytest.approx(off.results[0].dense_score)  # the shown cosine stays the chunk's
    assert long.score == pytest.approx(long.dense_score - gap * 1.5)
    # The same weight takes off what another query's own spread gives, with the fixed discount on top.
    other = "thunder marble pillow orchard"
    both = recaller.ask(other, "vector", RecallSettings(k=10, max_of_n=weight))
    long = next(c for c in both.results if c.path == "Long.md")
    expected = weight * spread(other) * expected_max(40) + 0.02 * math.log(40 / 16)
    assert spread(other) != pytest.approx(spread(query)) and long.score == pytest.approx(long.dense_score - expected)
    assert RecallSettings().max_of_n == 0.0
    for mode in ("vector", "hybrid+ppr"):
        assert _ranked(recaller.ask(query, mode, RecallSettings(max_of_n=0.0))) == _ranked(
            recaller.ask(query, mode, RecallSettings())
        )
    recaller.close()


def test_max_of_n_reached_spares_the_share_of_a_note_the_search_reached(tmp_path):
    from brain.recall.dense import dense_search, unreached_share

    assert unreached_share(1, 1) == 1.0 and unreached_share(40, 1) == 1.0
    assert unreached_share(40, 40) == 0.0 and unreached_share(41, 11) == pytest.approx(0.75)
    root = tmp_path / "v"
    _long_and_short(root)
    write(root, "Thunder.md", "thunder marble pillow storm.\n")  # a second note among Long.md's thunder sections
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    store, vectors = recaller.store, recaller.vectors
    long_id = next(row.id for row in store.note_rows().values() if row.path == "Long.md")

    def long_cost(query: str, reached_only: bool) -> tuple[float, int]:
        """What Long.md loses under max_of_n 1, and how many of its chunks the search reached."""
        nearest: list[tuple[int, float]] = []
        vector = recaller.embedder.embed_query(query)
        hits = dense_search(store, vectors, vector, 2, nearest=nearest, max_of_n=1.0, max_of_n_reached=reached_only)
        long = next(c for c in hits if c.note_id == long_id)
        note_of = store.chunk_note_ids([chunk_id for chunk_id, _ in nearest])
        return long.dense_score - long.score, sum(note_of.get(chunk_id) == long_id for chunk_id, _ in nearest)

    # Each query spares the share of Long.md's other 39 chunks its search reached.
    for query in ("orchard pepper ladder kettle basket", "thunder marble pillow"):
        whole, reached = long_cost(query, False)
        spared, _ = long_cost(query, True)
        assert 1 < reached < 40 and whole > 0
        assert spared == pytest.approx(whole * (40 - reached) / 39) and spared < whole
    assert RecallSettings().max_of_n_reached is False
    query = "thunder marble pillow"
    on = recaller.ask(query, "vector", RecallSettings(k=2, depth=2, max_of_n=1.0, max_of_n_reached=True))
    off = recaller.ask(query, "vector", RecallSettings(k=2, depth=2, max_of_n=1.0))
    (long_on,) = [c for c in on.results if c.path == "Long.md"]
    (long_off,) = [c for c in off.results if c.path == "Long.md"]
    assert long_on.dense_score == pytest.approx(long_off.dense_score) and long_on.score > long_off.score
    recaller.close()


def test_a_past_view_counts_the_chunks_a_note_had_then(tmp_path):
    import time

    from brain.recall.past import PastIndex

    root = tmp_path / "v"
    _long_and_short(root)
    index_vault(root, progress=False)
    then = time.time()
    time.sleep(0.05)
    write(root, "Long.md", "## Kettle\n\norchard pepper ladder kettle basket.\n")  # now one chunk
    index_vault(root, progress=False)
    recaller = open_recaller(root)
    store = recaller.store
    ids = {row.path: row.id for row in store.note_rows().values()}
    assert store.note_chunk_counts([ids["Long.md"]]) == {ids["Long.md"]: 1}
    past = PastIndex(store, as_of=then)
    assert past.note_chunk_counts([ids["Long.md"], ids["Short.md"]]) == {ids["Long.md"]: 40, ids["Short.md"]: 1}
    recaller.close()


def test_lexical_column_weights_are_a_setting(tmp_path, closing):
    from brain.recall.lexical import WEIGHTS, lexical_search

    root = tmp_path / "v"
    write(root, "Kettle.md", "Orchard pepper ladder.\n")  # the word only in the title
    write(root, "Note.md", "# Kettle\n\nkettle kettle orchard.\n")  # in a heading and the text
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    assert WEIGHTS == (4.0, 2.0, 1.0) and RecallSettings().lexical_weights == WEIGHTS
    title_first = lexical_search(recaller.store, "kettle", 5, weights=(50.0, 1.0, 1.0))
    text_first = lexical_search(recaller.store, "kettle", 5, weights=(0.1, 1.0, 10.0))
    assert title_first[0].path == "Kettle.md" and text_first[0].path == "Note.md"
    hybrid = recaller.ask("kettle", "hybrid", RecallSettings(lexical_weights=(0.1, 1.0, 10.0)))
    assert hybrid.lanes["lexical"][0].path == "Note.md"


# ----- names lane ---------------------------------------------------------------------------

NAMES_OFF = {"dense": 1.0, "lexical": 0.3, "ppr": 1.0}  # the lanes hybrid+ppr fused before issue 13


def test_fold_and_stem():
    from brain.recall.names import fold, stem

    assert fold("Crème Brûlée ÅNGSTRÖM") == "creme brulee angstrom"
    assert [stem(w) for w in ("dragons", "abilities", "boxes", "class", "bus", "axis", "rogue")] == [
        "dragon",
        "ability",
        "box",
        "class",
        "bus",
        "axis",
        "rogue",
    ]


def test_fold_takes_a_shortcut_for_ascii_that_answers_the_same():
    """The names lane folds 200,000 names at 100,000 notes: ASCII ones skip NFKD and the mark
    walk, which must change nothing for any ASCII character."""
    import random
    import unicodedata

    from brain.recall.names import fold

    def by_decomposition(text: str) -> str:
        decomposed = unicodedata.normalize("NFKD", text.casefold())
        return "".join(ch for ch in decomposed if not unicodedata.combining(ch))

    every_ascii = "".join(chr(i) for i in range(128))
    assert fold(every_ascii) == by_decomposition(every_ascii)
    rng = random.Random(0)
    for _ in range(500):
        text = "".join(rng.choice(every_ascii) for _ in range(rng.randint(0, 30)))
        assert fold(text) == by_decomposition(text)
    assert fold("Crème Brûlée ŒUVRE Ёлка") == by_decomposition("Crème Brûlée ŒUVRE Ёлка")


@pytest.fixture
def named_vault(tmp_path):
    root = tmp_path / "named"
    write(
        root, "Monsters/Balor.md", "---\naliases: [Flame Demon]\n---\nA huge demon wreathed in fire. Hit points 500.\n"
    )
    write(root, "Rules/Escalation Die.md", "The counter starts at one and climbs to six.\n")
    write(root, "People/Sofía Castaño.md", "Works on the Lisbon depot, joined in 2023.\n")
    write(root, "Monsters/Red Dragon.md", "A red dragon breathes fire over the valley.\n")
    write(root, "Places/Home.md", "Where the heart is.\n")
    for i in range(30):  # notes full of the query's other words
        write(root, f"Filler/Round {i:02}.md", f"Each round the die rolls: round {i}, the die, fire stats.\n")
    index_vault(root, progress=False)
    return root


def test_name_index_finds_titles_aliases_typos_accents_and_plurals(named_vault, closing):
    from brain.recall.names import NameIndex

    recaller = closing(open_recaller(named_vault))
    index = NameIndex.from_store(recaller.store)
    path = {note_id: p for note_id, p, _ in recaller.store.note_names()}

    def top(query: str) -> str | None:
        found = index.search(query, 3)
        return path[found[0][0]] if found else None

    assert top("flame demon stats") == "Monsters/Balor.md"  # only an alias names it
    assert top("escalaton die") == "Rules/Escalation Die.md"  # one letter missing
    assert top("Sofia Castano") == "People/Sofía Castaño.md"  # no accents typed
    assert top("red dragons") == "Monsters/Red Dragon.md"  # plural
    # A short common word is not a typo of a name, and a name in passing is not what is asked.
    assert top("rules for the die in each round") != "Places/Home.md"
    assert top("how do I get home after the long trip through the valley with the kids") is None


def test_a_long_word_two_edits_from_a_name_still_matches_it_for_less():
    from brain.recall.names import FUZZY2_WEIGHT, FUZZY_WEIGHT, Name, NameIndex

    index = NameIndex(
        [
            Name(1, "Owlbear", ("owlbear",)),
            Name(2, "Dragon", ("dragon",)),
            Name(3, "Escalation Die", ("escalation", "die")),
        ]
    )
    assert index._matches("owlbear") == {"owlbear": 1.0}
    assert index._matches("owlbare") == {"owlbear": FUZZY2_WEIGHT}  # "are" for "ear": two edits
    assert index._matches("escalaton") == {"escalation": FUZZY_WEIGHT}  # one edit counts more
    assert index._matches("dargno") == {}  # six letters: one edit at most
    assert index._matches("owlbxyz") == {}  # three edits
    assert [m.note_id for m in index.search("owlbare", 3)] == [1]
    assert not index.search("owlbare", 3)[0].whole  # a guess is not the name


def test_a_word_too_long_to_be_a_typo_costs_no_variants(monkeypatch):
    # Each word's variants are the word less one letter: a 100,000-letter alias (frontmatter
    # holds 64 KB) or query word was 100,000 strings of 100,000 letters, built in seconds and
    # gigabytes. A word that long is matched as written.
    from brain.recall import names as names_module
    from brain.recall.names import FUZZY_MAX, Name, NameIndex

    seen: list[int] = []
    deletions = names_module._deletions
    monkeypatch.setattr(names_module, "_deletions", lambda word: seen.append(len(word)) or deletions(word))
    blob = "q" * 100_000
    index = NameIndex([Name(1, "Owlbear", ("owlbear",)), Name(2, blob, (blob,))])
    assert index._matches(blob) == {blob: 1.0}  # as written, still found
    assert index._matches(blob + "x") == {} and index._matches("owlbare") != {}
    assert seen and max(seen) <= FUZZY_MAX + 2


def test_names_lane_stays_out_of_questions(named_vault, closing):
    from brain.recall.query_form import is_question

    assert is_question("what is the current decision on the vector store?")
    assert is_question("Which demon burns?") and is_question("flame demon?")
    assert not is_question("flame demon stats") and not is_question("the ADR about Keycloak")
    assert not is_question("whatever happened to the red dragon")
    # A question may begin with a preposition before its question word, in English and Russian,
    # and Russian is written with ё or е alike.
    assert is_question("in which note did I list the ADRs") and is_question("for what reason did we drop Chroma")
    assert is_question("о чём была планёрка в марте") and is_question("о чем была планерка в марте")
    assert is_question("с кем я обсуждал ретраи") and is_question("сколько стоит подписка на Notion")
    assert not is_question("of mice and men") and not is_question("какао с кардамоном")
    recaller = closing(open_recaller(named_vault))
    settings = RecallSettings(weights={**NAMES_OFF, "names": 1.0})
    assert recaller.ask("what are the flame demon stats?", "hybrid", settings).lanes["names"] == []
    assert recaller.ask("flame demon stats", "hybrid", settings).lanes["names"][0].path == "Monsters/Balor.md"


def test_names_lane_answers_a_notes_name_typed_whole_though_it_opens_as_a_question(tmp_path, closing):
    """A book's note is named as the book is ("Why Nations Fail", "How Google Works"), a person's
    as they are ("Will Larson"): typed whole, that name opened as a question does, and the names
    lane stayed out of it, so the note of that name was not put first. A name typed whole is
    answered; a question about it still is not."""
    vault = tmp_path / "vault"
    write(vault, "Books/Why Nations Fail.md", "# Why Nations Fail\n\nAcemoglu and Robinson on institutions.\n")
    write(vault, "People/Will Larson.md", "# Will Larson\n\nWrote Staff Engineer and An Elegant Puzzle.\n")
    write(vault, "Economics.md", "# Economics\n\nWhy do nations fail? Extractive institutions, says the book.\n")
    index_vault(vault, progress=False)
    recaller = closing(open_recaller(vault))
    settings = RecallSettings(weights={**NAMES_OFF, "names": 1.0})
    for query, path in (("Why Nations Fail", "Books/Why Nations Fail.md"), ("will larson", "People/Will Larson.md")):
        lane = recaller.ask(query, "hybrid", settings).lanes["names"]
        assert [c.path for c in lane][:1] == [path] and lane[0].named, query
    assert recaller.ask("why do nations fail?", "hybrid", settings).lanes["names"] == []
    assert recaller.ask("why did the nations fail", "hybrid", settings).lanes["names"] == []


def test_names_lane_answers_a_question_that_compares(named_vault, closing):
    """A question that compares names what it asks about: both notes come from the names lane."""
    recaller = closing(open_recaller(named_vault))
    settings = RecallSettings(weights={**NAMES_OFF, "names": 1.0})
    lane = recaller.ask("how does the flame demon compare with a red dragon?", "hybrid", settings).lanes["names"]
    assert {"Monsters/Balor.md", "Monsters/Red Dragon.md"} <= {c.path for c in lane}
    assert recaller.ask("how does the flame demon fight a red dragon?", "hybrid", settings).lanes["names"] == []


def test_names_lane_brings_a_typoed_title_into_the_results(named_vault, closing):
    recaller = closing(open_recaller(named_vault))
    query = "escalaton die round"
    off = recaller.ask(query, "hybrid+ppr", RecallSettings(k=5, weights={**NAMES_OFF, "names": 0.0}))
    # Weighted to outvote the three lanes that all rank the filler notes first.
    on = recaller.ask(query, "hybrid+ppr", RecallSettings(k=5, weights={**NAMES_OFF, "names": 3.0}))
    assert "Rules/Escalation Die.md" not in _paths(off)
    assert _paths(on)[0] == "Rules/Escalation Die.md"
    assert list(on.lanes) == ["dense", "lexical", "names", "ppr"]
    assert on.lanes["names"][0].path == "Rules/Escalation Die.md"
    assert "names" in on.results[0].sources
    assert 0 < on.lanes["names"][0].dense_score < 1  # shown by its best chunk, with that chunk's cosine


def test_a_short_querys_misspelt_name_is_searched_as_that_name(named_vault, closing):
    """The blind set's hsrd-001, "owlbare stats": BM25 knew no "owlbare" and searched "stats"
    alone, ranking every note of stats above the owlbear."""
    recaller = closing(open_recaller(named_vault))
    store, index = recaller.store, recaller.name_index()
    assert match_expression(store, "escalaton stats") == '"stats"'  # the unknown word adds nothing
    # ("stats", in most chunks, is left out beside a rarer word: ``informative_terms``)
    assert match_expression(store, "escalaton stats", index.respellings) == '"escalation"'
    # A word the index holds is never respelled; nor one whose first letter differs ("hotline" is
    # no "outline"); nor an unknown word in a longer query, where it is more likely a word the
    # vault does not use ("picking which lorry …" is not about pricing).
    for query in ("dragon stats", "scalation stats", "escalaton stats for each fire round"):
        assert match_expression(store, query, index.respellings) == match_expression(store, query), query

    on = recaller.ask("escalaton stats", "hybrid", RecallSettings(k=5))
    off = recaller.ask("escalaton stats", "hybrid", RecallSettings(k=5, respell=False))
    assert on.lanes["lexical"][0].path == "Rules/Escalation Die.md"
    assert "Rules/Escalation Die.md" not in [c.path for c in off.lanes["lexical"]]
    without_names = RecallSettings(k=5, weights={**NAMES_OFF, "names": 0.0})
    assert "Rules/Escalation Die.md" not in [
        c.path for c in recaller.ask("escalaton stats", "hybrid", without_names).lanes["lexical"]
    ]


def test_a_word_with_marks_is_one_word_of_a_lookup(named_vault, closing):
    """A lookup of three words has its unknown words respelled: BM25's tokenizer cuts a Hindi
    word at its vowel signs ("देखो": "द", "ख"), and the query counted as four words, no lookup."""
    recaller = closing(open_recaller(named_vault))
    store, index = recaller.store, recaller.name_index()
    assert match_expression(store, "escalaton stats देखो", index.respellings) == '"escalation"'
    four = "escalaton stats round देखो"
    assert match_expression(store, four, index.respellings) == match_expression(store, four)


def test_no_respelling_when_the_name_index_cannot_load_and_the_search_goes_on(named_vault, monkeypatch, closing):
    import sqlite3

    from brain.recall import names

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(names.NameIndex, "from_store", locked)
    result = closing(open_recaller(named_vault)).ask("escalaton stats", "hybrid", RecallSettings(k=5))
    assert result.lanes["lexical"] and result.lanes["names"] == []  # "stats" searched as written
    assert result.fallbacks["names"] and any("names lane failed" in w for w in result.warnings)


def test_a_name_of_several_words_answers_to_its_initials_in_capitals():
    from brain.recall.names import Name, NameIndex, acronyms, query_acronyms

    assert acronyms("Signalling System 7") == {"ss7"}  # a number stays whole
    assert acronyms("Cost of Goods Sold") == {"cogs", "cgs"}  # with and without "of"
    assert acronyms("Kafka") == set() and acronyms("2024-11-04") == set()  # one word; no letters
    assert query_acronyms("SS7 vs PAM, ГОСТ") == ["ss7", "pam", "гост"]
    assert query_acronyms("ss7 Kafka A K8s") == []  # lower case, one capital: words, not acronyms
    names = [
        Name(1, "Signalling System 7", ("signalling", "system", "7")),
        Name(2, "Signal Strength", ("signal", "strength")),
    ]
    index = NameIndex(names, {"ss7": (0,), "ss": (1,)})
    assert [(m.note_id, m.whole) for m in index.search("SS7", 5)] == [(1, True)]
    assert index.search("ss7", 5) == []  # a word, not initials
    assert [(m.note_id, m.whole) for m in index.search("SS", 5)] == [(2, True)]
    assert {(m.note_id, m.whole) for m in index.search("SS7 signal", 5)} == {(1, False), (2, False)}  # a word more
    assert NameIndex.from_state(index.state()).initials == {"ss7": (0,), "ss": (1,)}


def test_russian_small_words_do_not_count_against_a_name():
    """An unknown word of the query lowers every name's share of it; "и" and "что" are no more
    words of a query than "and" and "what" (bilingual set, compare-07: neither name was found)."""
    from brain.recall.names import STOP, Name, NameIndex, words

    names = [Name(i, text, tuple(words(text))) for i, text in enumerate(["Эпишура", "Спирогира", "Омуль", "Нерпа"], 1)]
    index = NameIndex(names)
    assert {m.note_id for m in index.search("эпишура и спирогира: что общего", 5)} == {1, 2}
    assert {m.note_id for m in index.search("эпишура and спирогира: what in common", 5)} == {1, 2}
    assert "какои" in STOP and "и" in STOP  # as words() reads them: й folds to и


def test_russian_question_words_in_every_case_are_no_words_of_the_query():
    """Russian declines its question words ("какое железо", "какую книгу", "кому я писал"); the
    BM25 query searched every case but the few listed ("какое" as a word of the query), and the
    names lane counted it against every name's share, as it would not "which" or "whom"."""
    from brain.recall.lexical import fts_terms
    from brain.recall.names import Name, NameIndex, words

    assert fts_terms("какое железо нужно для LLM") == ["железо", "нужно", "llm"]
    assert fts_terms("какую книгу мне советовал Баир") == ["книгу", "мне", "советовал", "баир"]
    assert fts_terms("кому и чему я писал про нерпу") == ["писал", "нерпу"]
    index = NameIndex([Name(1, "Нерпа", tuple(words("Нерпа")))])
    assert [m.whole for m in index.search("какую нерпу", 5)] == [True]


def test_a_vaults_name_index_keeps_initials_apart_from_name_words(named_vault, tmp_path, closing):
    from brain.recall.names import NameIndex

    recaller = closing(open_recaller(named_vault))
    index = NameIndex.from_store(recaller.store)
    by_note = {note_id: p for note_id, p, _ in recaller.store.note_names()}
    assert {k: sorted(by_note[index.names[i].note_id] for i in v) for k, v in index.initials.items()} == {
        "fd": ["Monsters/Balor.md"],  # an alias
        "ed": ["Rules/Escalation Die.md"],
        "sc": ["People/Sofía Castaño.md"],
        "rd": ["Monsters/Red Dragon.md"],
    }  # "Round 07": one letter, no initials
    assert all(len(name.words) and not any(":" in w for w in name.words) for name in index.names)


def test_a_names_own_text_is_always_the_whole_query_for_it():
    import random
    import string

    from brain.recall.names import STOP, Name, NameIndex, words

    rng = random.Random(2)
    alphabet = string.ascii_letters + "éüß0123456789 -_'.,"
    checked = 0
    for _ in range(60):
        names = []
        for i in range(rng.randint(1, 30)):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 25)))
            content = tuple(w for w in words(text) if w not in STOP) or tuple(words(text))
            if content:
                names.append(Name(i, text, content))
        index = NameIndex(names)
        for name in names:
            if set(w for w in words(name.text) if w not in STOP) != set(name.words):
                continue  # only small words: the name is them, the query drops them
            found = {m.note_id: m for m in index.search(name.text, 100)}
            assert name.note_id in found and found[name.note_id].whole, name.text
            checked += 1
    assert checked > 500


def test_the_name_index_says_which_names_are_the_whole_query(named_vault, closing):
    from brain.recall.names import NameIndex

    recaller = closing(open_recaller(named_vault))
    index = NameIndex.from_store(recaller.store)
    path = {note_id: p for note_id, p, _ in recaller.store.note_names()}

    def whole(query: str) -> list[str]:
        return [path[m.note_id] for m in index.search(query, 5) if m.whole]

    assert whole("flame demon") == ["Monsters/Balor.md"]  # an alias, whole
    assert whole("the Red Dragons") == ["Monsters/Red Dragon.md"]  # small words and plurals aside
    assert whole("flame demon stats") == []  # a word more
    assert whole("escalaton die") == []  # a typo is a guess: found, not named
    assert whole("red") == []  # a part of a name


def _site_names():
    """The name index of a vault whose apps are named as sites are written ("Linear.app",
    "Shortcut.com"), beside notes whose names share their words."""
    from brain.recall.names import NameIndex, name_entries

    titles = ["Linear.app", "Shortcut.com", "Linear Algebra", "Keyboard Shortcuts", "Trello", "Jira Software"]
    titles += [f"Filler {word} {i}" for i, word in enumerate(["app", "ideas", "notes", "plans"] * 10)]
    notes = [(i, f"Apps/{title}.md", title) for i, title in enumerate(titles, 1)]
    return NameIndex.from_entries(*name_entries(notes, [])), {i: title for i, _, title in notes}


def test_a_query_that_compares_finds_each_name_it_sets_side_by_side():
    """A query that compares names two things and what they are compared for: "linear vs
    shortcut for issue tracking" named *Linear.app* and *Shortcut.com*, yet the names lane found
    neither. Each name held under a quarter of the query (its topic's words, in no name, weigh as
    the rarest), the share any other query's name needs, and the domain a site's name is written
    with counted as a word of its name the query left out: *Shortcut.com* was under half present."""
    from brain.recall.names import MIN_QUERY_SHARE

    index, title = _site_names()

    def found(query: str, **options) -> list[str]:
        return [title[m.note_id] for m in index.search(query, 5, **options)]

    query = "linear vs shortcut for issue tracking"
    assert set(found(query, min_share=0.125)) == {"Linear.app", "Shortcut.com"}
    assert found(query, min_share=MIN_QUERY_SHARE, site_domains=False) == []  # as before
    assert found(query, min_share=0.125, site_domains=False) == ["Linear.app"]  # "Shortcut.com" half present
    assert found(query, min_share=MIN_QUERY_SHARE) == []  # each a fifth of the query


def test_a_site_is_named_by_its_name_but_whole_only_with_its_domain():
    """The word "linear" is a word as well as *Linear.app*: the note answers to it, and is put first only
    where the query writes the site as its title does."""
    index, title = _site_names()

    def whole(query: str) -> list[str]:
        return [title[m.note_id] for m in index.search(query, 5) if m.whole]

    assert [title[m.note_id] for m in index.search("linear", 5)][:1] == ["Linear.app"]
    assert whole("linear") == [] and whole("shortcut") == []
    assert whole("Linear.app") == ["Linear.app"] and whole("shortcut.com") == ["Shortcut.com"]
    assert whole("linear app") == ["Linear.app"]  # its words, the domain said
    # A word that is no domain stays a word of its name: "Filler notes 2" is not "filler 2".
    assert [title[m.note_id] for m in index.search("keyboard", 5)] == ["Keyboard Shortcuts"]


def test_the_names_lane_in_the_fusion_reads_its_two_settings(tmp_path, closing):
    root = tmp_path / "apps"
    write(root, "Apps/Linear.app.md", "Streamlined, nice UI, fast. Cycles and roadmaps.\n")
    write(root, "Apps/Shortcut.com.md", "Nice UI. Stories, epics and milestones.\n")
    write(root, "Maths/Linear Algebra.md", "Vectors, matrices, eigenvalues.\n")  # the names' words elsewhere
    write(root, "Editor/Keyboard Shortcuts.md", "Ctrl-K opens the palette.\n")
    for i in range(20):
        write(root, f"Log/Day {i:02}.md", f"Day {i}: issue tracking for the team, issue {i} closed.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    query = "linear vs shortcut for issue tracking"
    on = recaller.ask(query, "hybrid", RecallSettings(weights={**NAMES_OFF, "names": 0.3}))
    assert {c.path for c in on.lanes["names"]} == {"Apps/Linear.app.md", "Apps/Shortcut.com.md"}
    off = RecallSettings(weights={**NAMES_OFF, "names": 0.3}, names_compare_share=0.25, names_site_domains=False)
    assert recaller.ask(query, "hybrid", off).lanes["names"] == []


@pytest.fixture
def acronym_vault(tmp_path):
    root = tmp_path / "acr"
    write(root, "Telecom/Signalling System 7.md", "The protocol suite of the telephone network's control plane.\n")
    for i in range(12):  # notes that say the letters, and nothing of the network
        write(root, f"Chatter/Chat {i:02}.md", f"ss7 ss7 said the parrot {i}, ss7 again.\n")
    index_vault(root, progress=False)
    return root


def test_a_query_that_is_one_notes_name_puts_it_first(acronym_vault, closing):
    recaller = closing(open_recaller(acronym_vault))
    on = recaller.ask("SS7", "hybrid+ppr", RecallSettings(k=5))
    off = recaller.ask("SS7", "hybrid+ppr", RecallSettings(k=5, name_first=False))
    assert _paths(on)[0] == "Telecom/Signalling System 7.md"
    assert on.lanes["names"][0].named and on.results[0].named
    assert "Telecom/Signalling System 7.md" not in _paths(off)[:1]
    assert _paths(on)[1:] == [p for p in _paths(off) if p != "Telecom/Signalling System 7.md"][:4]
    # Lower case is a word: no name is the whole query, nothing is put first.
    assert _ranked(recaller.ask("ss7", "hybrid+ppr", RecallSettings(k=5))) == _ranked(
        recaller.ask("ss7", "hybrid+ppr", RecallSettings(k=5, name_first=False))
    )
    assert recaller.ask("SS7", "vector", RecallSettings(k=5)).results[0].path != "Telecom/Signalling System 7.md"


def test_a_name_two_notes_share_puts_neither_first(tmp_path, closing):
    from brain.recall.names import named_note

    root = tmp_path / "twins"
    write(root, "People/Kafka.md", "---\naliases: [Franz]\n---\nA writer from Prague.\n")
    write(root, "Tech/Kafka.md", "A log-based message broker.\n")
    for i in range(8):
        write(root, f"Other {i}.md", f"kafka kafka topic {i}.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    on = recaller.ask("Kafka", "hybrid+ppr", RecallSettings(k=5))
    assert sum(c.named for c in on.lanes["names"]) == 2 and named_note(on.lanes["names"]) is None
    assert _ranked(on) == _ranked(recaller.ask("Kafka", "hybrid+ppr", RecallSettings(k=5, name_first=False)))
    franz = recaller.ask("Franz", "hybrid+ppr", RecallSettings(k=5))
    assert franz.results[0].path == "People/Kafka.md" and franz.results[0].named


def test_names_lane_off_is_the_old_behaviour_exactly(named_vault, closing):
    recaller = closing(open_recaller(named_vault))
    for query in ("flame demon stats", "escalaton die round", "fire in the valley"):
        old = recaller.ask(query, "hybrid+ppr", RecallSettings(weights=dict(NAMES_OFF)))
        off = recaller.ask(query, "hybrid+ppr", RecallSettings(weights={**NAMES_OFF, "names": 0.0}))
        assert _ranked(off) == _ranked(old)
        assert "names" not in off.lanes and "names" not in off.timings_ms


def test_names_lane_only_joins_lexical_modes(named_vault, closing):
    recaller = closing(open_recaller(named_vault))
    settings = RecallSettings(weights={**NAMES_OFF, "names": 1.0})
    assert "names" not in recaller.ask("flame demon", "ppr", settings).lanes
    assert "names" in recaller.ask("flame demon", "hybrid", settings).lanes
    assert list(recaller.ask("flame demon", "vector", settings).lanes) == ["dense"]


def test_a_names_lane_that_cannot_read_the_index_is_a_warning_and_the_fusion_goes_on(named_vault, monkeypatch, closing):
    import sqlite3

    from brain.recall import names

    recaller = closing(open_recaller(named_vault))
    settings = RecallSettings(weights={**NAMES_OFF, "names": 1.0})

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(names, "names_search", locked)
    result = recaller.ask("flame demon", "hybrid+ppr", settings)
    assert result.results and result.lanes["names"] == []
    assert result.fallbacks == {
        "graph": False,
        "lexical": False,
        "names": True,
        "dates": False,
        "folders": False,
        "rerank": False,
    }
    assert any("names lane failed (OperationalError: database is locked)" in w for w in result.warnings)

    def bug(*args, **kwargs):
        raise KeyError("a bug in our own code")

    monkeypatch.setattr(names, "names_search", bug)  # anything else is a bug: it fails loudly
    with pytest.raises(KeyError):
        recaller.ask("flame demon", "hybrid+ppr", settings)


def test_the_names_lane_over_the_past_matches_the_names_notes_had_then(tmp_path):
    import time

    root = tmp_path / "v"
    write(root, "Monsters/Balor.md", "---\naliases: [Flame Demon]\n---\nA huge demon wreathed in fire.\n")
    write(root, "Rules/Other.md", "Nothing about demons here.\n")
    index_vault(root, progress=False)
    time.sleep(0.01)
    before = time.time()
    time.sleep(0.01)
    write(root, "Monsters/Balor.md", "---\naliases: [Pit Fiend]\n---\nA huge demon wreathed in fire.\n")
    index_vault(root, progress=False)
    settings = RecallSettings(weights={**NAMES_OFF, "names": 1.0})

    def names_lane(query: str, **past) -> list[str]:
        recaller = open_recaller(root, update=False, **past)
        try:
            return [c.path for c in recaller.ask(query, "hybrid", settings).lanes["names"]]
        finally:
            recaller.close()

    assert names_lane("flame demon") == [] and names_lane("pit fiend") == ["Monsters/Balor.md"]
    assert names_lane("flame demon", as_of=before) == ["Monsters/Balor.md"]
    assert names_lane("pit fiend", as_of=before) == []


def test_each_lanes_ranking_stays_in_process(named_vault, closing):
    from brain.server import protocol

    recaller = closing(open_recaller(named_vault))
    result = recaller.ask("flame demon stats", "hybrid+ppr", RecallSettings(weights={**NAMES_OFF, "names": 1.0}))
    assert set(result.lanes) == {"dense", "lexical", "names", "ppr"}
    wire = protocol.encode_result(result)
    assert "lanes" not in wire  # up to six lists of candidates: `brain eval --explain` reads them in-process
    back = protocol.decode_result(wire)
    assert back.lanes == {} and _ranked(back) == _ranked(result)


# ----- anchor lanes -------------------------------------------------------------------------


@pytest.fixture
def anchored_vault(tmp_path):
    root = tmp_path / "anchored"
    write(root, "Rules/Coup de Grace.md", "Deal triple damage to a foe who cannot act.\n")
    write(
        root,
        "Rules/Helpless.md",
        "A sleeping or paralysed creature is helpless: you may finish it off with a [[Coup de Grace]].\n",
    )
    # An index note whose one passage links to forty notes, all under the same words.
    links = " ".join(f"[[Spell {i:02}]]" for i in range(40))
    write(root, "Index.md", f"Sleeping, paralysed, finish: every spell that can finish a sleeping creature: {links}\n")
    for i in range(40):
        write(root, f"Spells/Spell {i:02}.md", f"Spell {i}: a bolt of light, range {i} feet.\n")
    for i in range(20):
        write(root, f"Filler/Camp {i:02}.md", f"Sleeping at camp {i}: the creature watch, finish the fire.\n")
    index_vault(root, progress=False)
    return root


ANCHORS_OFF = {**NAMES_OFF, "anchor_dense": 0.0, "anchor_lex": 0.0}


def test_anchor_lanes_find_a_note_by_words_only_its_backlinks_use(anchored_vault, closing):
    recaller = closing(open_recaller(anchored_vault))
    query = "sleeping creature, can I finish it off"
    both = recaller.ask(
        query, "hybrid+ppr", RecallSettings(weights={**NAMES_OFF, "anchor_dense": 1.0, "anchor_lex": 1.0})
    )
    for lane in ("anchor_dense", "anchor_lex"):
        # The hub's forty targets are discounted: the one passage that links to a single note wins.
        assert both.lanes[lane][0].path == "Rules/Coup de Grace.md", [c.path for c in both.lanes[lane]]
        top = both.lanes[lane][0]
        assert -1 <= top.dense_score <= 1 and top.dense_score != top.score  # shown by its own best chunk's cosine
    off = recaller.ask(query, "hybrid+ppr", RecallSettings(k=5, weights=dict(ANCHORS_OFF)))
    on = recaller.ask(query, "hybrid+ppr", RecallSettings(k=5, weights={**ANCHORS_OFF, "anchor_lex": 2.0}))
    assert "Rules/Coup de Grace.md" not in _paths(off)
    assert "Rules/Coup de Grace.md" in _paths(on)
    assert on.lanes["anchor_lex"][0].path == "Rules/Coup de Grace.md"


def test_anchor_votes_skip_self_links_and_links_outside_the_passage(tmp_path, closing):
    from brain.links import written_targets
    from brain.recall.anchors import linked_from_chunks

    assert written_targets('see [[B|bee]] and [[C#Top]], [x](a%20b.md#h) [y](<c d.md> "t")') == [
        "B",
        "C",
        "a b.md",
        "c d.md",
    ]
    root = tmp_path / "v"
    write(
        root,
        "A.md",
        "# One\n\n"
        + "alpha words here. " * 20
        + "See [[B]] and [[A]].\n\n# Two\n\n"
        + "beta words there. " * 20
        + "Then [C](C.md).\n",
    )
    write(root, "B.md", "bee\n")
    write(root, "C.md", "sea\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    ids = dict(recaller.store.conn.execute("SELECT path, id FROM notes"))
    chunks = recaller.store.conn.execute(
        "SELECT id, heading FROM chunks WHERE note_id = ? ORDER BY ordinal", (ids["A.md"],)
    ).fetchall()
    linked = linked_from_chunks(recaller.store, [c[0] for c in chunks])
    assert linked == {chunks[0][0]: [ids["B.md"]], chunks[1][0]: [ids["C.md"]]}


def test_anchor_lanes_read_the_links_again_once_the_index_changes(anchored_vault, closing):
    """A recaller kept open (brain serve) keeps each passage's links while the index is
    unchanged; a passage whose link resolves to another note after an index votes for that note."""
    recaller = closing(open_recaller(anchored_vault))
    query = "sleeping creature, can I finish it off"
    settings = RecallSettings(weights={**NAMES_OFF, "anchor_dense": 1.0, "anchor_lex": 1.0})
    for _ in range(2):  # the second ask reads the links kept
        before = recaller.ask(query, "hybrid+ppr", settings)
        assert before.lanes["anchor_lex"][0].path == "Rules/Coup de Grace.md"
    old_id = before.lanes["anchor_lex"][0].note_id
    helpless = recaller.store.conn.execute(
        "SELECT c.id FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path = 'Rules/Helpless.md'"
    ).fetchall()
    # Helpless.md is untouched; the note its [[Coup de Grace]] names is another note now.
    (anchored_vault / "Rules" / "Coup de Grace.md").unlink()
    write(anchored_vault, "Moves/Coup de Grace.md", "A finishing blow: the foe must be unable to act at all.\n")
    index_vault(anchored_vault, progress=False)
    assert (
        recaller.store.conn.execute(
            "SELECT c.id FROM chunks c JOIN notes n ON n.id = c.note_id WHERE n.path = 'Rules/Helpless.md'"
        ).fetchall()
        == helpless
    )  # the same passage, by the same chunk id
    after = recaller.ask(query, "hybrid+ppr", settings)
    top = after.lanes["anchor_lex"][0]
    assert (top.path, top.note_id != old_id) == ("Moves/Coup de Grace.md", True), [
        c.path for c in after.lanes["anchor_lex"]
    ]


def test_anchor_lanes_off_are_the_old_behaviour_exactly(anchored_vault, closing):
    recaller = closing(open_recaller(anchored_vault))
    for query in ("sleeping creature finish", "bolt of light", "camp fire"):
        old = recaller.ask(query, "hybrid+ppr", RecallSettings(weights=dict(NAMES_OFF)))
        off = recaller.ask(query, "hybrid+ppr", RecallSettings(weights=dict(ANCHORS_OFF)))
        assert _ranked(off) == _ranked(old)
        assert set(off.lanes) == {"dense", "lexical", "ppr"}


def test_anchor_lanes_only_join_pagerank_modes(anchored_vault, closing):
    recaller = closing(open_recaller(anchored_vault))
    settings = RecallSettings(weights={**ANCHORS_OFF, "anchor_dense": 1.0, "anchor_lex": 1.0})
    assert set(recaller.ask("finish it off", "hybrid", settings).lanes) == {"dense", "lexical"}
    assert set(recaller.ask("finish it off", "ppr", settings).lanes) == {"dense", "anchor_dense", "anchor_lex", "ppr"}


def test_an_anchor_lane_that_cannot_read_the_index_falls_back_under_the_graph_flag(
    anchored_vault, monkeypatch, closing
):
    import sqlite3

    from brain.recall import anchors

    recaller = closing(open_recaller(anchored_vault))

    def locked(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(anchors, "anchor_lex", locked)
    result = recaller.ask("finish it off", "hybrid+ppr", RecallSettings(weights={**ANCHORS_OFF, "anchor_lex": 1.0}))
    assert result.results and result.lanes["anchor_lex"] == []
    assert result.fallbacks["graph"] is True
    assert any("anchor_lex lane failed (OperationalError" in w for w in result.warnings)


def test_both_bm25_lanes_of_a_query_are_one_fts5_search(anchored_vault, monkeypatch, closing):
    """hybrid+ppr's lexical and anchor_lex lanes read one FTS5 search (issue 16: at 100,000 notes
    scoring every match is most of a search's cost), and anchor_lex gets what its own search,
    with the lexical lane's weights, would give it."""
    from brain.index.store import IndexStore
    from brain.recall import anchors

    recaller = closing(open_recaller(anchored_vault))
    settings = RecallSettings(weights={**ANCHORS_OFF, "anchor_lex": 0.5})
    queries = ("finish it off", "bolt of light", "camp fire", "sleeping creature finish")
    calls: list[int] = []
    search = IndexStore.fts_search

    def counted(self, expression, weights, limit):
        calls.append(limit)
        return search(self, expression, weights, limit)

    monkeypatch.setattr(IndexStore, "fts_search", counted)
    together = {q: recaller.ask(q, "hybrid+ppr", settings) for q in queries}
    assert calls == [lexical_search_depth(settings.depth)] * len(queries)
    monkeypatch.setattr(IndexStore, "fts_search", search)
    for query, result in together.items():
        state = recaller.prepare(query, settings)
        expression = match_expression(recaller.store, state.query)
        alone = anchors.anchor_lex(
            recaller.store, expression, state.vector, settings.depth, settings.anchor_hub, settings.lexical_weights
        )
        assert _paths_of(result.lanes["anchor_lex"]) == _paths_of(alone)
    assert any(result.lanes["anchor_lex"] for result in together.values())  # the shared search fed the lane


def test_anchor_dense_reads_the_dense_lanes_search(anchored_vault, monkeypatch, closing):
    """anchor_dense votes from the chunks nearest the query, which the dense lane has just
    searched for (as deep or deeper): one vector search a query, not two, and the lane ranks as
    with a search of its own."""
    from brain.recall import anchors

    recaller = closing(open_recaller(anchored_vault))
    settings = RecallSettings(weights={**ANCHORS_OFF, "anchor_dense": 0.5})
    queries = ("finish it off", "bolt of light", "camp fire", "sleeping creature finish")
    searches: list[int] = []
    search = recaller.vectors.search

    def counted(vector, k, *args, **kwargs):
        searches.append(k)
        return search(vector, k, *args, **kwargs)

    monkeypatch.setattr(recaller.vectors, "search", counted)
    together = {q: recaller.ask(q, "hybrid+ppr", settings) for q in queries}
    assert len(searches) == len(queries)  # the dense lane's, once a query
    monkeypatch.setattr(recaller.vectors, "search", search)
    for query, result in together.items():
        state = recaller.prepare(query, settings)
        ids, scores = search(state.vector, settings.depth * anchors.CHUNKS_PER_NOTE)
        alone = anchors.anchor_dense(
            recaller.store, list(zip(ids.tolist(), scores.tolist())), state.vector, settings.depth, settings.anchor_hub
        )
        assert _paths_of(result.lanes["anchor_dense"]) == _paths_of(alone)
    assert any(result.lanes["anchor_dense"] for result in together.values())


def _paths_of(candidates) -> list[str]:
    return [c.path for c in candidates]


def test_the_anchor_lanes_over_the_past_read_the_links_as_they_were_written_then(tmp_path):
    import time

    root = tmp_path / "v"
    write(root, "Rules/Coup de Grace.md", "Deal triple damage to a foe who cannot act.\n")
    write(root, "Rules/Dodge.md", "Step aside from a blow.\n")
    helpless = "A sleeping creature is helpless: you may finish it off with a [[{}]].\n"
    write(root, "Rules/Helpless.md", helpless.format("Coup de Grace"))
    index_vault(root, progress=False)
    time.sleep(0.01)
    before = time.time()
    time.sleep(0.01)
    write(root, "Rules/Helpless.md", helpless.format("Dodge"))
    index_vault(root, progress=False)
    settings = RecallSettings(weights={**ANCHORS_OFF, "anchor_dense": 1.0, "anchor_lex": 1.0})

    def anchored(**past) -> dict[str, list[str]]:
        recaller = open_recaller(root, update=False, **past)
        try:
            lanes = recaller.ask("sleeping creature finish it off", "hybrid+ppr", settings).lanes
            return {lane: [c.path for c in lanes[lane]] for lane in ("anchor_dense", "anchor_lex")}
        finally:
            recaller.close()

    now = {"anchor_dense": ["Rules/Dodge.md"], "anchor_lex": ["Rules/Dodge.md"]}
    assert anchored() == now
    assert anchored(as_of=before) == {
        "anchor_dense": ["Rules/Coup de Grace.md"],
        "anchor_lex": ["Rules/Coup de Grace.md"],
    }
    assert anchored(as_of=time.time()) == now


# ----- fusion details -----------------------------------------------------------------------


def test_rank_bonus_and_score_fusion_arithmetic():
    from brain.recall import fusion

    rankings = {"dense": [1, 2, 3], "lexical": [3, 2]}
    bonus = fusion.rank_bonus(rankings, (0.05, 0.02), {"dense": 1.0, "lexical": 0.5})
    assert bonus == pytest.approx({1: 0.05, 2: 0.02 + 0.5 * 0.02, 3: 0.5 * 0.05})
    plain = fusion.rrf(rankings, 60, None)
    with_bonus = fusion.rank_bonus(rankings, (0.05,), None, plain)
    assert with_bonus[1] == pytest.approx(plain[1] + 0.05) and with_bonus[2] == plain[2]
    scored = fusion.score_fusion(
        {"dense": [(1, 0.9), (2, 0.5), (3, 0.1)], "lexical": [(3, 10.0), (4, 10.0)]}, {"dense": 1.0, "lexical": 0.5}
    )
    # min-max within a lane; a lane whose scores are all equal gives each listed note its full weight
    assert scored == pytest.approx({1: 1.0, 2: 0.5, 3: 0.0 + 0.5, 4: 0.5})


def test_bonus_only_where_a_lane_is_sure():
    from brain.recall import fusion

    rankings = {"dense": [1, 2, 3]}
    sure = fusion.rank_bonus(rankings, (0.05, 0.02), None, None, {"dense": [0.9, 0.5, 0.49]}, 0.05)
    assert sure == pytest.approx({1: 0.05})  # 2 is no surer than 3: within 5% of it
    unsure = fusion.rank_bonus(rankings, (0.05, 0.02), None, None, {"dense": [0.50, 0.49, 0.1]}, 0.05)
    assert unsure == pytest.approx({2: 0.02})
    assert fusion.rank_bonus(rankings, (0.05,), None, None, {"dense": [0.5, 0.49]}, 0.0) == pytest.approx({1: 0.05})


def test_top_bonus_adds_to_each_lanes_first_ranks(named_vault, closing):
    recaller = closing(open_recaller(named_vault))
    query = "escalaton die round"
    weights = {**NAMES_OFF, "names": 1.0}
    plain = recaller.ask(query, "hybrid+ppr", RecallSettings(k=60, weights=weights, top_bonus=()))
    bonus = recaller.ask(
        query, "hybrid+ppr", RecallSettings(k=60, weights=weights, top_bonus=(0.05, 0.02), bonus_margin=0.0)
    )
    before = {c.path: c.score for c in plain.results}
    assert any(c.score != before[c.path] for c in bonus.results)
    for c in bonus.results:
        ranks = {
            lane: [x.path for x in ranking].index(c.path) + 1
            for lane, ranking in bonus.lanes.items()
            if c.path in [x.path for x in ranking]
        }
        extra = sum(weights[lane] * (0.05, 0.02)[r - 1] for lane, r in ranks.items() if r <= 2)
        assert c.score == pytest.approx(before[c.path] + extra), c.path
    scores = [c.score for c in bonus.results]
    assert scores == sorted(scores, reverse=True)


def test_a_lanes_bonus_counts_its_scale_times_its_weight(anchored_vault, closing):
    """``bonus_scale``: the anchor lanes' bonus doubled (the default from stop 27 to 38;
    bench/quality_ablation.py, "new anchor bonus x2 (stop 27 to 38)"): the note both put first
    gets twice their bonus; every other lane's is its weight, as every lane's is by default
    since stop 39."""
    from dataclasses import replace

    recaller = closing(open_recaller(anchored_vault))
    query = "sleeping creature, can I finish it off"
    assert RecallSettings().bonus_scale == {"bridge": 3.0}  # the bridge lane's, for its first note when sure
    settings = RecallSettings(k=60, bonus_margin=0.0, bonus_scale={"anchor_dense": 2.0, "anchor_lex": 2.0})
    plain = recaller.ask(query, "hybrid+ppr", replace(settings, top_bonus=()))
    bonus = recaller.ask(query, "hybrid+ppr", settings)
    single = recaller.ask(query, "hybrid+ppr", replace(settings, bonus_scale={}))
    before = {c.path: c.score for c in plain.results}
    ranks = {
        c.path: {
            lane: [x.path for x in lane_hits].index(c.path) + 1
            for lane, lane_hits in bonus.lanes.items()
            if c.path in [x.path for x in lane_hits]
        }
        for c in bonus.results
    }
    weights = settings.weights
    for result, scale in ((bonus, settings.bonus_scale), (single, {})):
        for c in result.results:
            extra = sum(
                weights[lane] * scale.get(lane, 1.0) * settings.top_bonus[r - 1]
                for lane, r in ranks[c.path].items()
                if r <= len(settings.top_bonus)
            )
            assert c.score == pytest.approx(before[c.path] + extra), c.path
    coup = "Rules/Coup de Grace.md"
    assert ranks[coup]["anchor_dense"] == ranks[coup]["anchor_lex"] == 1
    gained = {c.path: c.score for c in bonus.results}[coup] - {c.path: c.score for c in single.results}[coup]
    assert gained == pytest.approx((weights["anchor_dense"] + weights["anchor_lex"]) * settings.top_bonus[0])


def test_the_dense_lane_votes_with_its_own_rrf_k(anchored_vault, closing):
    """Fused scores are each lane's weight over (its k + rank): k 120 for the dense lane, 60 for
    the others, by default (bench/quality_ablation.py, "new -dense k 120")."""
    from dataclasses import replace

    recaller = closing(open_recaller(anchored_vault))
    settings = RecallSettings(k=60, top_bonus=(), prefer_present=False, name_first=False)
    assert settings.lane_rrf_k == {"dense": 120} and settings.rrf_k == 60
    assert len(RecallSettings().top_bonus) == 3

    def expected(result, lane_k: dict[str, int]) -> dict[str, float]:
        out: dict[str, float] = {}
        for lane, hits in result.lanes.items():
            for rank, hit in enumerate(hits, 1):
                vote = settings.weights.get(lane, 1.0) / (lane_k.get(lane, settings.rrf_k) + rank)
                out[hit.path] = out.get(hit.path, 0.0) + vote
        return out

    query = "sleeping creature, can I finish it off"
    for lane_k in (settings.lane_rrf_k, {}):
        result = recaller.ask(query, "hybrid+ppr", replace(settings, lane_rrf_k=lane_k))
        votes = expected(result, lane_k)
        assert result.results and all(c.score == pytest.approx(votes[c.path]) for c in result.results)
    flat = {c.path: c.score for c in recaller.ask(query, "hybrid+ppr", settings).results}
    steep = {c.path: c.score for c in recaller.ask(query, "hybrid+ppr", replace(settings, lane_rrf_k={})).results}
    assert any(flat[p] != pytest.approx(steep[p]) for p in flat if p in steep)


def test_score_fusion_runs_every_fused_mode_and_the_pagerank_lane_carries_its_values(named_vault, closing):
    from brain.errors import ConfigError

    recaller = closing(open_recaller(named_vault))
    assert RecallSettings().fusion_method == "rrf"
    for mode in ("hybrid", "ppr", "hybrid+ppr"):
        result = recaller.ask("fire valley dragon", mode, RecallSettings(fusion_method="score"))
        assert result.results[0].path == "Monsters/Red Dragon.md", mode
        assert 0 < result.results[0].score <= sum(RecallSettings().weights.values())
    ppr = recaller.ask("fire valley dragon", "ppr").lanes["ppr"]
    values = [c.score for c in ppr]
    assert values == sorted(values, reverse=True) and 0 < sum(values) <= 1.0 + 1e-6  # PageRank mass, not cosines
    with pytest.raises(ConfigError, match="unknown fusion method"):
        recaller.ask("fire valley dragon", "hybrid", RecallSettings(fusion_method="borda"))


# ----- PageRank restarts --------------------------------------------------------------------


def test_ppr_seeds_by_score_and_without_hubs(anchored_vault, closing):
    from brain.recall.ppr import drop_hubs, seed_weights_by_score

    assert seed_weights_by_score([[(1, 0.8), (2, 0.4), (3, 0.2)], [(2, 10.0), (4, 5.0)]], 2) == {
        1: 1.0,
        2: 0.5 + 1.0,
        4: 0.5,
    }
    recaller = closing(open_recaller(anchored_vault))
    ids = dict(recaller.store.conn.execute("SELECT path, id FROM notes"))
    index, helpless = ids["Index.md"], ids["Rules/Helpless.md"]
    degrees = recaller.store.out_degrees([index, helpless, ids["Spells/Spell 00.md"]])
    assert degrees == {index: 40, helpless: 1}
    seeds = {index: 1.0, helpless: 0.5}
    assert drop_hubs(seeds, degrees, 30) == {helpless: 0.5}
    assert drop_hubs(seeds, degrees, 0) == seeds
    assert drop_hubs({index: 1.0}, degrees, 30) == {index: 1.0}  # only hubs: keep them
    query = "every spell that can finish a sleeping creature"
    hubless = recaller.ask(query, "ppr", RecallSettings(ppr_hub_seeds=30))
    with_hub = recaller.ask(query, "ppr", RecallSettings(ppr_hub_seeds=0))
    assert RecallSettings().ppr_hub_seeds == 30  # the default: no restarts from a note of over 30 links

    def spell_mass(result) -> float:
        return sum(c.score for c in result.lanes["ppr"] if c.path.startswith("Spells/"))

    assert "Index.md" in [c.path for c in with_hub.lanes["dense"][:15]]  # it is a seed
    assert spell_mass(hubless) < 0.8 * spell_mass(with_hub)  # and its walk is gone
    by_score = recaller.ask(query, "ppr", RecallSettings(ppr_seed_scores=True, ppr_hub_seeds=0))
    assert [c.path for c in by_score.lanes["ppr"]] != [c.path for c in with_hub.lanes["ppr"]] or [
        c.score for c in by_score.lanes["ppr"]
    ] != [c.score for c in with_hub.lanes["ppr"]]
    for mode in ("ppr", "hybrid+ppr"):  # off is the old behaviour exactly; the default drops hubs
        off = recaller.ask(query, mode, RecallSettings(ppr_seed_scores=False, ppr_hub_seeds=0))
        assert _ranked(off) == _ranked(recaller.ask(query, mode, RecallSettings(ppr_hub_seeds=0)))
        assert _ranked(recaller.ask(query, mode, RecallSettings())) == _ranked(
            recaller.ask(query, mode, RecallSettings(ppr_hub_seeds=30))
        )


def test_the_past_answers_out_degrees_as_the_links_were_then(tmp_path):
    import time

    root = tmp_path / "v"
    write(root, "Hub.md", "[[A]] [[B]] [[C]]\n")
    for name in "ABC":
        write(root, f"{name}.md", f"note {name}\n")
    index_vault(root, progress=False)
    time.sleep(0.01)
    before = time.time()
    time.sleep(0.01)
    write(root, "Hub.md", "[[A]]\n")
    index_vault(root, progress=False)
    now = open_recaller(root, update=False)
    then = open_recaller(root, update=False, as_of=before)
    try:
        hub = dict(now.store.conn.execute("SELECT path, id FROM notes"))["Hub.md"]
        assert now.store.out_degrees([hub]) == {hub: 1}
        assert then.store.out_degrees([hub]) == {hub: 3}
    finally:
        now.close()
        then.close()


# ----- chunking strategies (BRAIN_CHUNKING) -------------------------------------------------


def _store(root):
    from brain import config
    from brain.index.store import IndexStore
    from brain.vault import resolve_vault

    return IndexStore.open(config.index_dir(resolve_vault(root)))


def test_window_chunks_cover_the_text_with_overlap_and_cut_at_spaces():
    from brain.chunking import chunk_windows

    words = [f"w{i:04d}" for i in range(900)]
    chunks = chunk_windows(" ".join(words), size=1200, overlap=200)
    assert len(chunks) > 4 and all(len(c.text) <= 1200 for c in chunks)
    assert all(c.heading_path == () for c in chunks)
    for c in chunks:  # never a cut word
        assert all(t in words for t in c.text.split())
    assert set(" ".join(c.text for c in chunks).split()) == set(words)
    for a, b in itertools.pairwise(chunks):
        shared = set(a.text.split()) & set(b.text.split())
        assert 20 <= len(shared) <= 45  # about 200 characters carried over
    assert chunk_windows("   ") == [] and [c.text for c in chunk_windows("short note")] == ["short note"]


def test_note_strategy_keeps_a_short_note_whole_and_splits_a_long_one_by_headings():
    from brain.chunking import MAX_CHARS, chunk_body, chunk_note

    short = "# A\n\n" + "alpha " * 60 + "\n\n## B\n\n" + "beta " * 60 + "\n\n## C\n\n" + "gamma " * 60
    assert len(short) <= MAX_CHARS and len(chunk_body(short)) == 3
    [whole] = chunk_note(short, "note")
    assert whole.heading_path == () and "## B" in whole.text and "gamma" in whole.text
    long = short * 3
    assert chunk_note(long, "note") == chunk_body(long)
    assert chunk_note(short, "heading") == chunk_body(short)
    assert chunk_note(short, "windows")[0].text.startswith("# A")


def test_short_strategy_keeps_chunks_within_a_small_model_s_window():
    from brain.chunking import SHORT_MAX, chunk_body, chunk_note

    section = "\n\n".join(f"sentence number {i} of a long paragraph, with words." for i in range(24))
    body = "# Long\n\n" + section + "\n\n# Other\n\n" + "short text here. " * 20
    assert max(len(c.text) for c in chunk_body(body)) > SHORT_MAX  # heading keeps up to 1600 whole
    short = chunk_note(body, "short")
    assert max(len(c.text) for c in short) <= SHORT_MAX
    assert short[0].heading_path == ("Long",) and short[-1].heading_path == ("Other",)
    assert "sentence number 23" in " ".join(c.text for c in short)


def test_the_index_keeps_one_chunking_and_says_how_to_change_it(tmp_path, monkeypatch):
    from brain.errors import ConfigError, IndexMismatchError

    root = tmp_path / "v"
    write(root, "A.md", "# One\n\n" + "alpha " * 60 + "\n\n# Two\n\n" + "beta " * 60 + "\n")
    index_vault(root, progress=False)
    store = _store(root)
    assert store.get_meta("chunking") == "heading" and store.chunk_count() == 2
    store.close()
    monkeypatch.setenv("BRAIN_CHUNKING", "note")
    with pytest.raises(IndexMismatchError, match=r"BRAIN_CHUNKING=heading, not note.*--rebuild"):
        index_vault(root, progress=False)
    with pytest.raises(IndexMismatchError, match="BRAIN_CHUNKING=heading"):  # recall says so too
        open_recaller(root, update=False)
    index_vault(root, progress=False, rebuild=True)
    store = _store(root)
    assert store.get_meta("chunking") == "note" and store.chunk_count() == 1
    store.close()
    monkeypatch.setenv("BRAIN_CHUNKING", "sentences")
    with pytest.raises(ConfigError, match="BRAIN_CHUNKING must be one of heading, short, note, windows"):
        index_vault(root, progress=False)


def test_an_index_from_before_chunking_was_recorded_counts_as_heading(tmp_path, monkeypatch):
    from brain.errors import IndexMismatchError

    root = tmp_path / "v"
    write(root, "A.md", "alpha\n")
    index_vault(root, progress=False)
    store = _store(root)
    with store.transaction():
        store.conn.execute("DELETE FROM meta WHERE key = 'chunking'")
    store.close()
    write(root, "B.md", "beta\n")
    index_vault(root, progress=False)  # heading, as it was built: no rebuild asked for
    monkeypatch.setenv("BRAIN_CHUNKING", "short")
    with pytest.raises(IndexMismatchError, match="BRAIN_CHUNKING=heading, not short"):
        index_vault(root, progress=False)


def test_path_strategies_put_the_folders_in_front_of_every_chunk(tmp_path, monkeypatch):
    from conftest import FakeEmbedder

    from brain.chunking import Chunk, embedding_text
    from brain.config import parse_chunking

    assert embedding_text("Trello", Chunk(0, ("Features",), "Boards."), "Work/PM Software/Trello.md") == (
        "Work > PM Software > Trello > Features\n\nBoards."
    )
    assert embedding_text("Top", Chunk(0, (), "x"), "Top.md") == "Top\n\nx"
    assert parse_chunking("heading+path") == ("heading", True) and parse_chunking("windows") == ("windows", False)
    assert parse_chunking("heading+folders") is None and parse_chunking("lines") is None
    root = tmp_path / "v"
    write(root, "Work/PM Software/Trello.md", "Boards and cards.\n")
    monkeypatch.setenv("BRAIN_CHUNKING", "note+path")
    embedder = FakeEmbedder()
    index_vault(root, progress=False, embedder=embedder)
    assert embedder.embedded == ["Work > PM Software > Trello\n\nBoards and cards."]


# ----- links inside code fences (BRAIN_LINK_FENCES) -----------------------------------------


def _edges(root) -> list[tuple[str, str]]:
    """(source path, target path) of the index's resolved links."""
    store = _store(root)
    try:
        paths = {row.id: path for path, row in store.note_rows().items()}
        return [(paths[s], paths[t]) for s, t, _ in store.resolved_edges()]
    finally:
        store.close()


def test_fence_links_count_only_for_the_listed_languages():
    from brain.links import extract_links, fence_language

    body = (
        'Intro [[Rules]].\n\n```statblock\nname: Balor\ntraits:\n  - desc: "[[Demon|demonic]] powers"\n```\n\n'
        "```python\nx = '[[Not a link]]'\n```\n\n~~~ StatBlock {.yaml}\n- [[Dragon]]\n~~~\n"
    )
    assert [link.target for link in extract_links(body)] == ["Rules"]
    assert [link.target for link in extract_links(body, frozenset({"statblock"}))] == ["Rules", "Demon", "Dragon"]
    demon = extract_links(body, frozenset({"statblock"}))[1]
    assert demon.display == "demonic" and demon.line == 6
    assert fence_language("```statblock") == "statblock" and fence_language("~~~ StatBlock {.yaml}") == "statblock"
    assert fence_language("```") == "" and fence_language("no fence") == ""


def test_changing_link_fences_relinks_without_re_embedding_and_the_history_records_it(tmp_path, monkeypatch):
    import time

    from conftest import FakeEmbedder

    root = tmp_path / "v"
    write(root, "Balor.md", 'A demon.\n\n```statblock\nname: Balor\ntraits: "[[Demon|demonic]]"\n```\n')
    write(root, "Demon.md", "Demons are fiends.\n")
    embedder = FakeEmbedder()
    monkeypatch.setenv("BRAIN_LINK_FENCES", "none")
    index_vault(root, progress=False, embedder=embedder)

    def links() -> list[tuple[str, str]]:
        return _edges(root)

    assert links() == []
    time.sleep(0.01)
    before = time.time()
    time.sleep(0.01)
    embedded = len(embedder.embedded)
    monkeypatch.setenv("BRAIN_LINK_FENCES", "statblock, dataview")
    report = index_vault(root, progress=False, embedder=embedder)
    assert links() == [("Balor.md", "Demon.md")]
    assert report.embedded == 0 and len(embedder.embedded) == embedded
    store = _store(root)
    try:  # the link history: none then, one now
        assert store.edges_at(before) == [] and len(store.edges_at(time.time())) == 1
    finally:
        store.close()
    monkeypatch.setenv("BRAIN_LINK_FENCES", "none")
    index_vault(root, progress=False, embedder=embedder)
    assert links() == []


def test_statblock_links_count_by_default_and_only_notes_with_such_a_fence_are_read_again(tmp_path, monkeypatch):
    from brain.config import link_fences
    from brain.index import indexer
    from brain.links import has_fence_of

    assert link_fences() == frozenset({"statblock"})
    monkeypatch.setenv("BRAIN_LINK_FENCES", "none")
    assert link_fences() == frozenset()
    assert has_fence_of("x\n~~~ StatBlock {.yaml}\n[[A]]\n~~~\n", frozenset({"statblock"}))
    assert not has_fence_of("```python\n[[A]]\n```\nstatblock", frozenset({"statblock"}))
    root = tmp_path / "v"
    write(root, "Balor.md", 'A demon.\n\n```statblock\nname: Balor\ntraits: "[[Demon|demonic]]"\n```\n')
    write(root, "Demon.md", "Demons are fiends. [[Balor]]\n")
    for i in range(5):
        write(root, f"Other {i}.md", f"Plain note {i}, linking [[Demon]].\n\n```python\nx = {i}\n```\n")
    # The word without its fence, and a fence in UTF-16: read to be sure, the first for nothing.
    write(root, "Mention.md", "I like statblock plugins; see [[Demon]].\n")
    (root / "Wide.md").write_bytes('```StatBlock\nname: Wide\nsee: "[[Demon]]"\n```\n'.encode("utf-16"))
    index_vault(root, progress=False)  # an index from before: fence links did not count
    monkeypatch.delenv("BRAIN_LINK_FENCES")
    parsed: list[str] = []
    real_parse = indexer.parse_note

    def counting(path, *args, **kwargs):
        parsed.append(path)
        return real_parse(path, *args, **kwargs)

    monkeypatch.setattr(indexer, "parse_note", counting)
    report = index_vault(root, progress=False)
    assert sorted(parsed) == ["Balor.md", "Wide.md"]  # the notes whose links change; the rest only scanned
    assert report.links["resolved"] == 9
    edges = _edges(root)
    assert ("Balor.md", "Demon.md") in edges and ("Wide.md", "Demon.md") in edges


def test_brain_ask_reads_the_links_again_when_the_fences_changed_though_no_note_did(tmp_path, monkeypatch):
    root = tmp_path / "v"
    write(root, "Balor.md", 'A demon.\n\n```statblock\nname: Balor\ntraits: "[[Demon|demonic]]"\n```\n')
    write(root, "Demon.md", "Demons are fiends.\n")
    monkeypatch.setenv("BRAIN_LINK_FENCES", "none")  # an index from before: no fence counted
    index_vault(root, progress=False)
    monkeypatch.delenv("BRAIN_LINK_FENCES")

    def edges(recaller) -> int:
        return len(recaller.store.resolved_edges())

    stale = open_recaller(root, update=False)
    assert edges(stale) == 0
    assert any("BRAIN_LINK_FENCES changed since the last index" in w for w in stale.warnings)
    stale.close()
    from brain.recall import opening

    with monkeypatch.context() as m:  # an index that cannot be written now (a read-only home, a running index)
        m.setattr(opening, "_update", lambda *args: "the index folder is read-only")
        cannot = open_recaller(root)
        assert edges(cannot) == 0 and cannot.ask("demon", "hybrid+ppr").results
        assert any("cannot be read again now (the index folder is read-only)" in w for w in cannot.warnings)
        cannot.close()
    fresh = open_recaller(root)  # updates: reads the links again, embeds nothing
    assert edges(fresh) == 1 and not fresh.warnings
    fresh.close()


def test_the_ppr_lane_ranks_pagerank_over_the_square_root_of_degree(anchored_vault, closing):
    recaller = closing(open_recaller(anchored_vault))
    query = "every spell that can finish a sleeping creature"
    assert RecallSettings().ppr_degree_norm == 0.5
    normed = recaller.ask(query, "ppr", RecallSettings())
    raw = recaller.ask(query, "ppr", RecallSettings(ppr_degree_norm=0.0))
    graph = recaller.link_graph()
    position = {int(n): i for i, n in enumerate(graph.note_ids)}
    degree = {c.note_id: float(graph._degree[position[c.note_id]]) for c in raw.lanes["ppr"]}
    raw_scores = {c.note_id: c.score for c in raw.lanes["ppr"]}
    for c in normed.lanes["ppr"]:  # each lane score is its raw PageRank over √degree
        if c.note_id in raw_scores:
            assert c.score == pytest.approx(raw_scores[c.note_id] / degree[c.note_id] ** 0.5, rel=1e-9)

    # The index note, linked with all 40 spells, falls: every walk passes it, few stop there.
    def place(result) -> int:
        paths = [c.path for c in result.lanes["ppr"]]
        return paths.index("Index.md") if "Index.md" in paths else len(paths)

    assert place(normed) > place(raw)


def test_a_russian_name_in_another_case_is_that_name():
    """Russian inflects a name where English adds a plural or a possessive: "про Карамазовых",
    "с Машей", "Анну Каренину" found no name ("Brothers Karamazov's notes" found its note), and
    "в Москве" counted as a typo. Other cases of a name's words are those words; surnames in -ов
    are no first names, and a short form is its own name."""
    from brain.recall.names import STOP, Name, NameIndex, words

    texts = ["Братья Карамазовы", "Маша", "Анна Каренина", "Москва", "Иван Петров", "Пётр I", "Brothers Karamazov"]
    names = [Name(i, t, tuple(w for w in words(t) if w not in STOP)) for i, t in enumerate(texts)]
    index = NameIndex.from_state(NameIndex(names).state())

    def whole(query: str) -> list[str]:
        return [texts[m.note_id] for m in index.search(query, 5) if m.whole]

    assert whole("Братьев Карамазовых") == ["Братья Карамазовы"] == whole("Братья Карамазовы")
    assert whole("Brothers Karamazov's") == ["Brothers Karamazov"]
    assert whole("с Машей") == ["Маша"] == whole("Машу")
    assert whole("Анны Карениной") == ["Анна Каренина"]
    assert whole("про Ивана Петрова") == ["Иван Петров"]
    assert [texts[m.note_id] for m in index.search("встреча в Москве", 5)] == ["Москва"]
    assert [texts[m.note_id] for m in index.search("встреча с Москвой", 5)] == ["Москва"]
    assert "Пётр I" not in {texts[m.note_id] for m in index.search("Петрова", 5)}  # -ов is no ending
    # the lexical lane's respelling of a form no chunk holds gives the name's word, й or и alike
    assert index.respellings("москвой") == ["москва"]


def test_a_russian_name_whose_stem_ends_in_i_kratkoe_is_that_name_in_every_case():
    """A stem in -й or -и keeps its е or и before some endings and not others: "с Сергеем",
    "Андрея", "Марию" found no *Сергей*, *Андрей*, *Мария* ("сергеем" → серге, "сергеи" → серг)."""
    from brain.recall.names import STOP, Name, NameIndex, words

    texts = ["Сергей Иванов", "Андрей", "Мария", "Россия", "Маша"]
    names = [Name(i, t, tuple(w for w in words(t) if w not in STOP)) for i, t in enumerate(texts)]
    index = NameIndex.from_state(NameIndex(names).state())

    def whole(query: str) -> list[str]:
        return [texts[m.note_id] for m in index.search(query, 5) if m.whole]

    assert whole("с Сергеем Ивановым") == ["Сергей Иванов"] == whole("у Сергея Иванова")
    assert whole("про Андрея") == ["Андрей"] == whole("с Андреем")
    assert whole("у Марии") == ["Мария"] == whole("про Марию") == whole("с Марией")
    assert whole("в России") == ["Россия"]
    assert whole("с Машей") == ["Маша"]


def test_a_misspelt_russian_name_with_i_kratkoe_is_searched_as_that_name(tmp_path, closing):
    """The names lane reads й as и; its respelling of "байкла" was "баикал", a word no chunk holds
    (the index keeps й), and BM25 searched the query's other words alone."""
    root = tmp_path / "vault"
    write(root, "Места/Байкал.md", "Байкал — самое глубокое озеро, нерпа живёт только там.\n")
    write(root, "Люди/Чайковский.md", "Чайковский писал музыку; озеро он любил.\n")
    for i in range(8):
        write(root, f"Прочее/Озеро {i}.md", f"Озеро номер {i}, вода и камни.\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    store, index = recaller.store, recaller.name_index()
    assert index.respellings("байкла") == ["байкал"]
    assert match_expression(store, "байкла озеро", index.respellings) == '"байкал"'
    assert match_expression(store, "чайковскйи", index.respellings) == '"чайковский"'
    assert recaller.ask("байкла озеро", "hybrid", RecallSettings(k=5)).lanes["lexical"][0].path == "Места/Байкал.md"


def test_anchor_lanes_read_a_passage_s_links_as_the_index_read_them(tmp_path, closing):
    """A passage links to the notes the index found linked in it (``links.extract_links``), not
    to what a second reading finds: a markdown link to a name with parentheses, one with a title
    in single quotes, a link inside inline code, a fence or an HTML comment, a ```statblock's
    link (``BRAIN_LINK_FENCES``'s default)."""
    root = tmp_path / "v"
    write(
        root,
        "A.md",
        "# One\n\n"
        + "alpha words here. " * 20
        + "Notes of [the meeting](Meeting%20(2024).md) and [the plan](Plan.md 'The plan').\n"
        + "Write `[[Code]]` for a link; <!-- [[Hidden]] --> here.\n\n"
        + "```\n[[Fenced]]\n```\n\n```statblock\nname: [[Beast]]\n```\n\n# Two\n\n"
        + "beta words there. " * 20
        + "Then [[Code]], [[Hidden]] and [[Fenced]].\n",
    )
    for name in ("Meeting (2024)", "Plan", "Code", "Hidden", "Fenced", "Beast"):
        write(root, f"{name}.md", f"{name} text\n")
    index_vault(root, progress=False)
    recaller = closing(open_recaller(root))
    from brain.recall.anchors import linked_from_chunks

    ids = dict(recaller.store.conn.execute("SELECT path, id FROM notes"))
    chunks = [
        c[0]
        for c in recaller.store.conn.execute("SELECT id FROM chunks WHERE note_id = ? ORDER BY ordinal", (ids["A.md"],))
    ]
    assert len(chunks) == 2
    linked = linked_from_chunks(recaller.store, chunks)
    assert linked[chunks[0]] == [ids["Meeting (2024).md"], ids["Plan.md"], ids["Beast.md"]]
    assert linked[chunks[1]] == [ids["Code.md"], ids["Hidden.md"], ids["Fenced.md"]]
