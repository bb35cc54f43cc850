"""BM25 over text composed or not and full-width Latin; brain's own split of words with marks.

A word typed composed and stored decomposed (macOS names files so) was another word where the
mark is not a Latin accent ("й" as "и" + U+0306 was "и"), and full-width "ＳＱＬｉｔｅ" another than
"sqlite": ``text.for_search``, schema migration m023_composed_and_narrow. The names lane and a
trigram index's query split words with Python's ``\\w``, which holds no combining mark: a Hindi
word was cut at each vowel sign. (FTS5's unicode61 cuts it too, as it always did: README,
Languages in the BM25 lane.)
"""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import environ, index_into

from brain import config
from brain import text as brain_text
from brain.autorecall import select
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.output import snippet
from brain.recall.dates import stated_date
from brain.recall.gate import entity_gate
from brain.recall.lexical import fts_terms, lexical_search
from brain.recall.names import NameIndex, name_entries, words
from brain.recall.types import Candidate
from brain.text import for_search

FILLER = "Tea kettles, copper pots and a garden of herbs fill the kitchen shelves."


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


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


def test_the_marks_table_is_unicodedatas():
    """``text._MARK_RANGES`` is written out (reading it costs a process 0.1 s): it is what
    ``unicodedata`` says at ``text.MARKS_UNICODE``. A newer Python's Unicode (3.12: 15.0.0) has
    42 more marks, at code points new to it; the table stays (one index, split alike by every
    Python), and holds none that is no longer a mark. It failed on 3.12 for the 42."""
    marks = {
        cp
        for span in (range(0x300, 0x20000), range(0xE0100, 0xE01F0))
        for cp in span
        if unicodedata.category(chr(cp)) in ("Mn", "Mc")
    }
    marks -= {0xFE0E, 0xFE0F}
    table = {cp for a, b in brain_text._MARK_RANGES for cp in range(a, b + 1)}
    if unicodedata.unidata_version == brain_text.MARKS_UNICODE:
        assert table == marks
    else:

        def version(text: str) -> tuple[int, ...]:
            return tuple(map(int, text.split(".")))

        # an older Unicode than the table's: a mark it does not have would split no word
        assert version(unicodedata.unidata_version) > version(brain_text.MARKS_UNICODE)
        assert table < marks
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
    ("мой", [nfd("Мой кот.md")]),  # composed query, decomposed note
    (nfd("ελληνικά"), ["Ελληνικά.md"]),  # decomposed query, composed note
    ("sqlite fts5", ["ＳＱＬｉｔｅ メモ.md"]),
    ("2024", ["ＳＱＬｉｔｅ メモ.md"]),
    ("ＰｏｓｔｇｒｅＳＱＬ", ["Postgres.md"]),  # a full-width query
]


def test_bm25_finds_words_composed_either_way_and_wide(scripts, tmp_path):
    _, directory = index_into(tmp_path / "home", scripts)
    store = IndexStore.open(directory, create=False)
    try:
        for query, paths in FOUND:
            assert _found(store, query) == paths, query
    finally:
        store.close()


def _as_before_m023(db: Path) -> None:
    """An index as a brain from before m023 left it: no searched form where only composing or a
    width differs (the fixture holds no other), both BM25 indexes read so, m023 not recorded."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("UPDATE notes SET search_title = NULL")
    conn.execute("UPDATE chunks SET search_heading = NULL, search_text = NULL")
    conn.execute("UPDATE chunk_history SET search_title = NULL, search_heading = NULL, search_text = NULL")
    for table in ("chunks_fts", "chunk_history_fts"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    conn.execute("DELETE FROM _migrations WHERE name = 'm023_composed_and_narrow'")
    conn.execute("COMMIT")
    conn.close()


def test_an_index_from_before_m023_searches_composed_at_once_and_reads_again_only_the_notes_it_must(scripts, tmp_path):
    home = tmp_path / "home"
    cat = nfd("Мой кот.md")
    write(scripts, cat, SCRIPTS[cat] + nfd("\nСтарый кот мой.\n"))  # a past version, decomposed
    index_into(home, scripts)
    write(scripts, cat, SCRIPTS[cat])
    _, directory = index_into(home, scripts)
    _as_before_m023(directory / "index.db")
    conn = sqlite3.connect(directory / "index.db")
    assert _found_in(conn, "мой") == 0  # FTS5 read "мои"
    versions = conn.execute("SELECT count(*) FROM note_versions").fetchone()[0]
    conn.close()

    store = IndexStore.open(directory, create=False)  # migrates
    try:
        assert "m023_composed_and_narrow" in INDEX_MIGRATIONS.applied(store.conn)
        assert _found_in(store.conn, "мой") == 1
        for query, paths in FOUND:  # at once, before any run: the searched forms are stored
            assert _found(store, query) == paths, query
        store.conn.execute("CREATE VIRTUAL TABLE temp.past_words USING fts5vocab(main, chunk_history_fts, 'row')")
        past_words = {row[0] for row in store.conn.execute("SELECT term FROM temp.past_words")}
        assert {"мой", "старый"} <= past_words and "мои" not in past_words
        for table in ("chunks_fts", "chunk_history_fts"):
            store.conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        store.close()

    embedder = FakeEmbedder()
    report, _ = index_into(home, scripts, embedder)
    # the two notes held decomposed or wide are read again (the same bytes: no new version),
    # their chunks embedded as searched
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


def _found_in(conn: sqlite3.Connection, word: str) -> int:
    return conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{word}"',)).fetchone()[0]


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


# Every other split of words is ``text.word_chars``': ``\w`` and the combining marks.


def test_the_entity_gate_counts_a_word_with_marks_once():
    """ "Ọ̀ṣun" (Ọ + U+0300: no composed form) was "Ọ" and "ṣun", a word in lower case: the
    Yoruba name read as a phrase. A Hindi phrase of four words was a dozen pieces."""
    assert entity_gate("Ọ̀ṣun Festival").entity
    assert entity_gate("Ọ̀ṣun Festival").reason == "a short capitalised name (2 words)"
    assert entity_gate("मेरा घर पहाड़ों में").reason == "a short phrase, not a name"
    assert entity_gate("प्रधानमंत्री").reason == "a single common word 'प्रधानमंत्री'"


def test_a_snippet_is_centred_on_a_query_word_with_marks():
    """The snippet centres on a query word of three characters or more: "मेरा" was "म" and "र",
    none long enough, and the snippet showed the chunk's start."""
    body = FILLER * 5 + " मेरा घर पहाड़ों में है। " + FILLER * 5
    candidate = Candidate(1, "Ghar.md", "Ghar", 1, "", body, 0.5, 0.5)
    assert "मेरा घर" in snippet(candidate, "मेरा")
    assert "मेरा घर" not in snippet(candidate, "xyz")


def test_a_date_glued_to_a_word_is_no_date_whatever_the_word_ends_with():
    """A date glued to a word is not read from a note's name ("v2024-11-04"): after a Hindi
    word that ends in a vowel sign it was, after one that ends in a letter it was not."""
    assert stated_date("घर2024-11-04") is None
    assert stated_date("मेरा2024-11-04") is None
    assert stated_date("मेरा 2024-11-04") == stated_date("2024-11-04 मेरा")


def test_a_long_word_with_marks_is_one_word_to_the_prompt_hook():
    """A prompt of one word is too short, however long the word ("supercalifragilistic"); a
    Hindi word was a word at each vowel sign, and passed."""
    assert select.skip_reason("supercalifragilistic") == select.TOO_SHORT
    assert select.skip_reason("प्रधानमंत्रीजी") == select.TOO_SHORT
    assert select.skip_reason("प्रधानमंत्री कौन है") is None


POINTED = {
    "Bereshit.md": "# Bereshit\n\n" + unicodedata.normalize("NFC", "בְּרֵאשִׁית בָּרָא אֱלֹהִים אֵת הַשָּׁמַיִם וְאֵת הָאָרֶץ.\n"),
    "Tehillim.md": "# Tehillim\n\nספר תהלים נכתב בידי דוד המלך.\n",
    "Kitab.md": "# Kitab\n\nقرأت الكتاب في المكتبة.\n",
}


def test_a_pointed_query_finds_the_note_written_unpointed(tmp_path):
    """unicode61 cuts pointed Hebrew or Arabic at each point ("תְּהִלִּים": "ת", "ה", "ל", "ים"):
    the note written unpointed, as most are, was not found; a pointed note still is (by those
    pieces, which any pointed text holds: Bereshit answers תְּהִלִּים too, as before)."""
    root = tmp_path / "vault"
    for name, body in POINTED.items():
        write(root, name, body)
    for i in range(6):
        write(root, f"Other {i}.md", f"# Other {i}\n\n{FILLER}\n")
    assert brain_text.unpointed("שָׁלוֹם \ufb2aָלוֹם الْكِتَابُ أَحْمَدُ هٰذَا café") == "שלום שלום الكتاب أحمد هذا café"
    _, directory = index_into(tmp_path / "home", root)
    store = IndexStore.open(directory, create=False)
    try:
        for query, path in [
            ("תְּהִלִּים", "Tehillim.md"),
            ("الْكِتَابُ", "Kitab.md"),
            ("בְּרֵאשִׁית", "Bereshit.md"),
            ("תהלים", "Tehillim.md"),
        ]:
            assert path in _found(store, unicodedata.normalize("NFC", query)), query
        assert _found(store, "الْكِتَابُ") == ["Kitab.md"]  # no pointed Arabic to answer its pieces
    finally:
        store.close()
