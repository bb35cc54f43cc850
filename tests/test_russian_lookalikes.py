"""A Russian word typed or pasted with a Latin letter drawn as a Cyrillic one ("кaкое" with a Latin
"a", "Пëтр" with a Latin "ë"): the query-form rules, the names, BM25 and dates lanes read it as the
Cyrillic word; a word whose Latin letters are not all look-alikes stays as written."""

from __future__ import annotations

import pytest
from conftest import write
from index_helpers import index_into

from brain.index.store import IndexStore
from brain.recall import query_form
from brain.recall.lexical import fts_terms, lexical_search
from brain.recall.names import STOP, Name, NameIndex, words

# Latin letters in Cyrillic words, written as escapes so that no editor "fixes" them.
KAKOE = "к\u0061кое"  # Latin a
SRAVNENIE = "сравн\u0065ние"  # Latin e
CHEM = "ч\u0065м"  # Latin e
PYOTR = "П\u00ebтр"  # Latin ë
KARAMAZOVY = "К\u0061рамазовы"  # Latin a
NERPA = "н\u0065рпа"  # Latin e


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (f"{KAKOE} железо", "какое железо"),
        (f"{PYOTR} Ёлкин", "Пётр Ёлкин"),
        ("Т\u004fК\u0045Н", "ТОКЕН"),  # capitals
        ("iPhoneы", "iPhoneы"),  # "i", "h", "n" draw no Cyrillic letter: the word stays
        ("plain English, Москва", "plain English, Москва"),
    ],
)
def test_lookalikes_as_cyrillic(text, read):
    from brain.text import lookalikes_as_cyrillic

    assert lookalikes_as_cyrillic(text) == read


def test_the_query_form_rules_read_a_word_with_a_latin_lookalike():
    assert query_form.is_question(f"{KAKOE} железо нужно для LLM")
    assert query_form.compares(f"{SRAVNENIE} баз данных")
    assert query_form.asks(f"{CHEM} отличается Postgres от SQLite")
    assert query_form.asks_only_why("почему н\u0065рпа живёт в Байкале") is True
    assert query_form.seeks_note(f"з\u0061метка про {KARAMAZOVY}х")


def test_the_names_lane_reads_a_word_with_a_latin_lookalike():
    texts = ["Братья Карамазовы", "Пётр Ёлкин", "Б\u0061йкал"]  # the last a title typed so
    names = [Name(i, t, tuple(w for w in words(t) if w not in STOP)) for i, t in enumerate(texts)]
    index = NameIndex.from_state(NameIndex(names).state())

    def whole(query: str) -> list[str]:
        return [texts[m.note_id] for m in index.search(query, 5) if m.whole]

    assert whole(f"Братья {KARAMAZOVY}") == ["Братья Карамазовы"]
    assert whole(f"{PYOTR} Ёлкин") == ["Пётр Ёлкин"]
    assert whole("Байкал") == [texts[2]]


def test_bm25_finds_the_note_a_word_with_a_latin_lookalike_names(tmp_path):
    assert fts_terms(f"{NERPA} байкал") == [NERPA, "байкал", "нерпа"]  # as typed, and in Cyrillic
    root = tmp_path / "vault"
    write(root, "Нерпа.md", "# Нерпа\n\nБайкальская нерпа живёт только в пресной воде.\n")
    write(root, "Омуль.md", "# Омуль\n\nОмуль — рыба из семейства лососёвых.\n")
    _, directory = index_into(tmp_path / "home", root)
    store = IndexStore.open(directory, create=False)
    try:
        assert [c.path for c in lexical_search(store, f"пресная {NERPA}", depth=5)][:1] == ["Нерпа.md"]
        assert [c.path for c in lexical_search(store, NERPA, depth=5)] == ["Нерпа.md"]
    finally:
        store.close()


def test_the_dates_lane_reads_a_month_with_a_latin_lookalike():
    import datetime as dt

    from brain.recall.dates import Period, query_period

    assert query_period("что было 3 м\u0061рта 2026") == Period(dt.date(2026, 3, 3), dt.date(2026, 3, 4))
    assert query_period("вчер\u0061", dt.date(2026, 12, 7)) == Period(dt.date(2026, 12, 6), dt.date(2026, 12, 7))
