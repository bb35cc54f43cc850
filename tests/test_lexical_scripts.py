"""BM25 over scripts whose letters carry marks, text composed or not, full-width Latin.

unicode61 by default takes only letters, digits and private use (L* N* Co) for a word's
characters: a combining mark (a Devanagari or Tamil vowel sign, a virama, Thai's vowels above
and below, Arabic's harakat, Hebrew's niqqud) ended a word, so "मेरा" was "म" and "र". A word
typed composed and stored decomposed (macOS names files so) was another word where the mark is
not a Latin accent ("й" as "и" + U+0306 was "и"), and full-width "ＳＱＬｉｔｅ" another than
"sqlite". Schema migration m023_marks_in_words, ``text.for_search``.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import environ, index_into

from brain import config
from brain.index.schema import FTS_TOKENIZERS, INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.index.tokens import index_words
from brain.recall import bm25
from brain.recall.lexical import fts_terms, lexical_search
from brain.recall.names import NameIndex, name_entries, words
from brain.text import for_search

OLD_TOKENIZER = "unicode61 remove_diacritics 2"  # what m002 to m021 made
FILLER = "Tea kettles, copper pots and a garden of herbs fill the kitchen shelves."


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.mark.parametrize(
    "query, words",
    [
        ("मेरा नाम", ["मेरा", "नाम"]),  # Hindi: vowel signs
        ("मराठी भाषा", ["मराठी", "भाषा"]),  # Marathi
        ("বাংলা ভাষা", ["বাংলা", "ভাষা"]),  # Bengali
        ("தமிழ் மொழி", ["தமிழ்", "மொழி"]),  # Tamil: the virama ends a word
        ("മലയാളം ഭാഷ", ["മലയാളം", "ഭാഷ"]),  # Malayalam
        ("กินข้าว", ["กินข้าว"]),  # Thai: vowels above and a tone mark
        ("كَتَبَ الكِتَابَ", ["كَتَبَ", "الكِتَابَ"]),  # Arabic with harakat
        ("שָׁלוֹם עוֹלָם", ["שָׁלוֹם", "עוֹלָם"]),  # Hebrew with niqqud
    ],
)
def test_a_query_word_with_marks_is_one_term(query, words):
    assert fts_terms(query) == words


@pytest.mark.parametrize(
    "text, words",
    [
        ("Café CRÈME naïve Ruairí", ["cafe", "creme", "naive", "ruairi"]),  # Latin accents still fold
        (nfd("Café CRÈME naïve"), ["cafe", "creme", "naive"]),
        ("Ёлкин ещё МОСКВА Йошкар", ["елкин", "еще", "москва", "йошкар"]),  # й stays й
        ("Straße wpa_supplicant x\u0301y", ["straße", "wpa", "supplicant", "xy"]),
        ("⚠️Warning love❤️you 1️⃣ step", ["warning", "love", "you", "1", "step"]),  # an emoji's selectors
    ],
)
def test_the_index_still_folds_case_accents_and_yo(text, words):
    assert index_words(text, FTS_TOKENIZERS["unicode61"]) == words


@pytest.mark.parametrize(
    "text, searched",
    [
        ("ＳＱＬｉｔｅ ２０２４年，テスト！", "SQLite 2024年，テスト！"),  # full-width punctuation stays
        ("ｶﾞｲﾄﾞ", "ガイド"),  # half-width katakana, its voiced mark composed
        (nfd("Мой café"), "Мой café"),
        ("ﬁle x² ①", "ﬁle x² ①"),  # no other compatibility folding: a ligature, a superscript
        ("Ａ\u200cB", "AB"),  # a joiner after a full-width letter is judged as after the letter it is
    ],
)
def test_for_search_composes_and_folds_widths(text, searched):
    assert for_search(text) == searched
    assert for_search(searched) == searched


def test_the_mimic_tokenizes_as_fts5():
    """The postings base and the past's scores tokenize with ``bm25.tokens``: a word FTS5 holds
    whole and the mimic cut was left to FTS5 (postings) or scored 0 (a past chunk)."""
    text = "मेरा नाम राम है। தமிழ் กินข้าว كَتَبَ שָׁלוֹם Café x\u0301y a\u0332b Straße \ue000q ⚠️Warning 1️⃣"
    assert bm25.tokens(text) == index_words(text, FTS_TOKENIZERS["unicode61"])
    for cp in range(0x300, 0x370):  # every mark after a Latin letter: dropped or kept as FTS5 does
        if cp != 0x345:  # which casefolds to ι (FTS5) where lower() keeps it: left to FTS5
            sample = unicodedata.normalize("NFC", f"x{chr(cp)}y")  # as the index holds it (for_search)
            assert bm25.tokens(sample) == index_words(sample, FTS_TOKENIZERS["unicode61"]), hex(cp)


def test_the_marks_table_is_unicodedatas():
    """``bm25._MARK_RANGES`` is written out (reading it costs a process 0.1 s): it is what
    ``unicodedata`` says, or this Python's Unicode moved on and it is to be written again."""
    marks = {
        cp
        for span in (range(0x300, 0x20000), range(0xE0100, 0xE01F0))
        for cp in span
        if unicodedata.category(chr(cp)) in ("Mn", "Mc")
    }
    marks -= {0xFE0E, 0xFE0F}
    assert {cp for a, b in bm25._MARK_RANGES for cp in range(a, b + 1)} == marks
    assert all(
        unicodedata.category(chr(cp))[0] != "M" for cp in range(0x20000, 0x110000) if cp < 0xE0100 or cp > 0xE01EF
    )


SCRIPTS = {
    "Ghar.md": "# Ghar\n\nमेरा घर पहाड़ों में है।\n",
    "Mira.md": "# Mira\n\nमीरा ने मोर को मारा, मुरली मेरठ में।\n",  # the consonants of मेरा, in other words
    "Tamil.md": "# Tamil\n\nதமிழ் மொழி பழமையானது.\n",
    "Thambi.md": "# Thambi\n\nதம்பி தமக்கை பழம் வாங்கினார்.\n",
    nfd("Мой кот.md"): nfd("# Мой кот\n\nМой кот спит на окне.\n"),  # as macOS may write it
    "Ελληνικά.md": "# Ελληνικά\n\nΗ γλώσσα μου είναι ελληνική.\n",
    "ＳＱＬｉｔｅ メモ.md": "# ＳＱＬｉｔｅ メモ\n\nＳＱＬｉｔｅ の ＦＴＳ５ は ２０２４ 年 から 使う。\n",
    "Postgres.md": "# Postgres\n\nPostgreSQL replication lag tips.\n",
}


@pytest.fixture
def scripts(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for name, text in SCRIPTS.items():
        write(root, name, text)
    for i in range(6):
        write(root, f"Other {i}.md", f"# Other {i}\n\n{FILLER}\n")
    return root


def _found(store: IndexStore, query: str) -> list[str]:
    return [c.path for c in lexical_search(store, query, depth=5)]


FOUND = [
    ("मेरा", ["Ghar.md"]),  # not Mira.md, for the consonants they share
    ("तमिल मेरा घर", ["Ghar.md"]),
    ("தமிழ்", ["Tamil.md"]),  # not Thambi.md (தம்பி was "தம" "ப", தமிழ் "தம" "ழ")
    ("мой", [nfd("Мой кот.md")]),  # composed query, decomposed note
    (nfd("ελληνικά"), ["Ελληνικά.md"]),  # decomposed query, composed note
    ("sqlite fts5", ["ＳＱＬｉｔｅ メモ.md"]),
    ("2024", ["ＳＱＬｉｔｅ メモ.md"]),
    ("ＰｏｓｔｇｒｅＳＱＬ", ["Postgres.md"]),  # a full-width query
]


def test_bm25_finds_words_with_marks_composed_either_way_and_wide(scripts, tmp_path):
    _, directory = index_into(tmp_path / "home", scripts)
    store = IndexStore.open(directory, create=False)
    try:
        for query, paths in FOUND:
            assert _found(store, query) == paths, query
    finally:
        store.close()


def _as_before_m023(db: Path) -> None:
    """An index as a brain from before m023 left it: both BM25 indexes tokenized without marks,
    no searched form where only composing or a width differs, m023 not recorded."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("UPDATE notes SET search_title = NULL")
    conn.execute("UPDATE chunks SET search_heading = NULL, search_text = NULL")
    conn.execute("UPDATE chunk_history SET search_title = NULL, search_heading = NULL, search_text = NULL")
    for table, source in (("chunks_fts", "chunks_fts_source"), ("chunk_history_fts", "chunk_history_fts_source")):
        conn.execute(f"DROP TABLE {table}")
        conn.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5 (title, heading, text, content = '{source}',"
            f" content_rowid = 'id', tokenize = '{OLD_TOKENIZER}')"
        )
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('postings_stamp', 'abc')")
    conn.execute("DELETE FROM _migrations WHERE name = 'm023_marks_in_words'")
    conn.execute("COMMIT")
    conn.close()


def test_an_index_from_before_m023_is_tokenized_again_and_reads_again_only_the_notes_it_must(scripts, tmp_path):
    home = tmp_path / "home"
    write(scripts, "Ghar.md", SCRIPTS["Ghar.md"] + "\nपुराना घर बेचा गया।\n")  # a past version: मेरा
    index_into(home, scripts)
    write(scripts, "Ghar.md", SCRIPTS["Ghar.md"])
    _, directory = index_into(home, scripts)
    _as_before_m023(directory / "index.db")
    conn = sqlite3.connect(directory / "index.db")
    hindi = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH '\"मेरा\"'"
    assert conn.execute(hindi).fetchone()[0] == 2  # "म र": Mira.md's consonants too
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()

    store = IndexStore.open(directory, create=False)  # migrates
    try:
        assert "m023_marks_in_words" in INDEX_MIGRATIONS.applied(store.conn)
        assert store.conn.execute(hindi).fetchone()[0] == 1
        for query, paths in FOUND:  # at once, before any run: the searched forms are stored
            assert _found(store, query) == paths, query
        store.conn.execute("CREATE VIRTUAL TABLE temp.past_words USING fts5vocab(main, chunk_history_fts, 'row')")
        past_words = {row[0] for row in store.conn.execute("SELECT term FROM temp.past_words")}
        assert {"मेरा", "पुराना"} <= past_words and "र" not in past_words
        assert store.get_meta("postings_stamp") is None  # the base was tokenized otherwise
        for table in ("chunks_fts", "chunk_history_fts"):
            store.conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        store.close()

    embedder = FakeEmbedder()
    report, _ = index_into(home, scripts, embedder)
    # the two notes held decomposed or wide are read again (the same bytes: no new version),
    # their chunks embedded as searched; the Hindi and Tamil notes only needed the new tokenizer
    assert (report.changed, report.embedded) == (2, 2)
    assert all(for_search(text) == text for text in embedder.embedded)
    with environ(BRAIN_HOME=str(home)):
        assert config.index_dir(scripts) == directory
    store = IndexStore.open(directory, create=False)
    try:
        assert store.conn.execute("SELECT count(*) FROM note_versions").fetchone()[0] == versions
        for query, paths in FOUND:
            assert _found(store, query) == paths, query
    finally:
        store.close()
    again = FakeEmbedder()
    report, _ = index_into(home, scripts, again)
    assert report.changed == 0 and again.embedded == []


def test_a_trigram_index_is_asked_the_trigrams_of_a_word_with_marks(scripts, tmp_path):
    """The query's words for a trigram index are brain's own split (``\\w`` had no marks: "मेरा"
    was "म" "र", too short for any trigram, and BM25 searched nothing)."""
    assert fts_terms("मेरा नाम", "trigram") == ["मेर", "ेरा", "नाम"]
    with environ(BRAIN_FTS_TOKENIZER="trigram"):
        _, directory = index_into(tmp_path / "home", scripts)
        store = IndexStore.open(directory, create=False)
        try:
            assert store.fts_tokenizer() == "trigram"
            assert _found(store, "मेरा")[:1] == ["Ghar.md"]
            assert _found(store, "தமிழ்") == ["Tamil.md"]
        finally:
            store.close()


def test_the_names_lane_reads_a_word_with_marks_whole():
    """The names lane's words were Python's ``\\w`` runs: "मेरा" was "म" and "र", and every name
    holding those letters in other words answered the query as well as the one holding it."""
    assert words("मेरा घर") == ["मेरा", "घर"]
    titled, aliased = name_entries(
        [(1, "मेरा घर.md", "मेरा घर"), (2, "मीरा मार.md", "मीरा मार"), (3, "தமிழ்.md", "தமிழ்"), (4, "தம்பி.md", "தம்பி")],
        [],
    )
    index = NameIndex([name for name, _ in titled + aliased])
    assert [m.note_id for m in index.search("मेरा", 5)] == [1]
    assert [m.note_id for m in index.search("தமிழ்", 5)] == [3]
