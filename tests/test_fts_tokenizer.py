"""The lexical lane's tokenizers: unicode61 on Russian (case, ё/е), trigram for CJK.

unicode61 (the default) folds case for Cyrillic but keeps ё and е apart, so brain folds ё into
е on both sides (migration m006_fts_fold_yo). Chinese and Japanese have no spaces: unicode61
makes a whole sentence one token, and only BRAIN_FTS_TOKENIZER=trigram finds anything there.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import index_db_before, open_store

from brain import config
from brain.cli import cli
from brain.errors import ConfigError, IndexMismatchError
from brain.index.indexer import index_vault
from brain.index.schema import INDEX_MIGRATIONS
from brain.index.store import IndexStore
from brain.recall.lexical import fts_terms
from brain.recall.opening import open_recaller


def _paths(store, query: str) -> list[str]:
    from brain.recall.lexical import lexical_search

    return [c.path for c in lexical_search(store, query, depth=5)]


@pytest.fixture
def russian_vault(tmp_path):
    root = tmp_path / "ru"
    write(
        root, "Пётр Ёлкин.md", "# Пётр Ёлкин\n\nЁлкин ещё не вернулся из Листвянки: лёд на Байкале тронулся поздно.\n"
    )
    write(root, "Москва.md", "# Москва\n\nМОСКВА — столица; поезд до Иркутска идёт четверо суток.\n")
    write(root, "Sourdough.md", "# Sourdough\n\nFeed the starter, bulk ferment five hours.\n")
    write(root, "Йошкар-Ола.md", "# Йошкар-Ола\n\nГород на Волге? Нет, на Малой Кокшаге.\n")
    return root


def test_unicode61_on_russian_folds_case_and_yo(russian_vault, closing):
    index_vault(russian_vault, progress=False)
    store = closing(open_store(russian_vault))
    for query in ("Ёлкин", "елкин", "ЕЛКИН", "еще", "ещё", "Петр", "лед"):
        assert _paths(store, query)[:1] == ["Пётр Ёлкин.md"], query
    for query in ("москва", "Москва", "МОСКВА"):
        assert _paths(store, query)[:1] == ["Москва.md"], query
    assert _paths(store, "Йошкар")[:1] == ["Йошкар-Ола.md"]
    # No stemming (SQLite has no Russian stemmer): another case of a word is another word.
    # The dense lane is what matches "в Москве" to a note about "Москва".
    assert _paths(store, "москве") == []
    assert _paths(store, "иошкар") == []  # й is a letter of its own, not и with a mark


def test_titles_renamed_later_are_folded_too(russian_vault, closing):
    index_vault(russian_vault, progress=False)
    (russian_vault / "Москва.md").rename(russian_vault / "Столица Ёжиков.md")
    index_vault(russian_vault, progress=False)
    assert _paths(closing(open_store(russian_vault)), "ежиков")[:1] == ["Столица Ёжиков.md"]


def test_the_yo_migration_refills_an_older_index(tmp_path, closing):
    """An index made before m003 holds ё unfolded; opening it folds what is there."""
    directory = tmp_path / "old-index"
    conn = index_db_before(directory, "m003_index_id")
    conn.execute(
        "INSERT INTO notes (id, path, title, size, mtime_ns, hash, indexed_at) "
        "VALUES (1, 'Ёлкин.md', 'Ёлкин', 1, 1, 'h', 0)"
    )
    conn.execute("INSERT INTO chunks (note_id, ordinal, text, vector) VALUES (1, 0, 'Ёлкин ещё в Листвянке', x'00')")
    assert conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'елкин'").fetchone()[0] == 0
    conn.close()
    store = closing(IndexStore.open(directory))
    assert "m006_fts_fold_yo" in INDEX_MIGRATIONS.applied(store.conn)
    assert _paths(store, "Елкин еще") == ["Ёлкин.md"]


JAPANESE = "東京タワーは東京都港区芝公園にある総合電波塔で、高さは三百三十三メートルです。"
CHINESE = "长城是中国古代的军事防御工程，总长度超过两万一千公里。"


@pytest.fixture
def cjk_vault(tmp_path):
    root = tmp_path / "cjk"
    write(root, "東京タワー.md", f"# 東京タワー\n\n{JAPANESE}\n")
    write(root, "长城.md", f"# 长城\n\n{CHINESE}\n")
    write(
        root,
        "Harbour.md",
        "# Harbour\n\nThe Tokyo tower and the Great Wall are far from this harbour crane schedule.\n",
    )
    write(root, "Crème brûlée.md", "# Crème brûlée\n\nCrème brûlée: custard, burnt sugar, a hot oven.\n")
    return root


CJK_QUERIES = [
    ("東京タワーの高さ", "東京タワー.md"),  # "the height of Tokyo Tower": one run, no spaces
    ("総合電波塔", "東京タワー.md"),
    ("长城有多长", "长城.md"),  # "how long is the Great Wall"
    ("军事防御", "长城.md"),
]


def test_cjk_query_finds_nothing_with_the_default_tokenizer(cjk_vault, closing):
    index_vault(cjk_vault, progress=False)
    store = closing(open_store(cjk_vault))
    assert store.fts_tokenizer() == "unicode61"
    for query, _ in CJK_QUERIES:
        assert _paths(store, query) == [], query


def test_cjk_query_finds_its_note_with_trigram(cjk_vault, monkeypatch, closing):
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    index_vault(cjk_vault, progress=False)
    store = closing(open_store(cjk_vault))
    assert store.fts_tokenizer() == "trigram"
    for query, expected in CJK_QUERIES:
        assert _paths(store, query)[:1] == [expected], query
    # Space-separated words still match, case folded.
    assert _paths(store, "HARBOUR crane")[:1] == ["Harbour.md"]
    # The whole pipeline's lexical lane uses it too.
    result = closing(open_recaller(cjk_vault, rerank_model=None)).ask("東京タワーの高さ", "hybrid")
    top = result.results[0]
    assert top.path == "東京タワー.md" and "lexical" in top.sources


def test_fts_terms():
    assert fts_terms("Ёлкин и ЕЩЁ") == ["елкин", "еще"]  # ё as е; "и" is a stop word, as "and" is
    # Russian's small and question words are left out as English ones are ("что" was searched)
    assert fts_terms("что такое апвеллинг и где он бывает?") == ["такое", "апвеллинг", "бывает"]
    assert fts_terms("о чём мой отчёт") == ["отчет"]
    assert fts_terms("и что") == ["и", "что"]  # nothing else: searched as written
    assert fts_terms("東京タワー", "trigram") == ["東京タ", "京タワ", "タワー"]
    assert fts_terms("the Kafka", "trigram") == ["kaf", "afk", "fka"]  # stop words first, then trigrams
    assert fts_terms("ab", "trigram") == []  # too short for a trigram index to match


def test_changing_the_tokenizer_needs_a_rebuild(cjk_vault, monkeypatch, closing):
    runner = CliRunner()
    assert runner.invoke(cli, ["index", "--vault", str(cjk_vault), "-q"]).exit_code == 0
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    for args in (["index", "--vault", str(cjk_vault)], ["ask", "--vault", str(cjk_vault), "東京タワー"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 1, args
        assert result.stderr.startswith("Error: this vault's index was built with the lexical tokenizer 'unicode61'")
        assert "brain index --rebuild" in result.stderr and result.stderr.count("\n") == 1
    with pytest.raises(IndexMismatchError):
        open_recaller(cjk_vault)
    rebuilt = runner.invoke(cli, ["index", "--vault", str(cjk_vault), "--rebuild", "--json"])
    assert rebuilt.exit_code == 0, rebuilt.output
    store = closing(open_store(cjk_vault))
    assert store.fts_tokenizer() == "trigram"
    assert _paths(store, "东京タワーの高さ".replace("东", "東"))[:1] == ["東京タワー.md"]
    count = lambda sql: store.conn.execute(sql).fetchone()[0]
    assert count("SELECT count(*) FROM chunks_fts") == count("SELECT count(*) FROM chunks") == 4
    ask = runner.invoke(cli, ["ask", "--vault", str(cjk_vault), "--json", "-k", "1", "军事防御"])
    assert ask.exit_code == 0, ask.output
    # And back: unicode61 again after a rebuild.
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "unicode61")
    assert runner.invoke(cli, ["index", "--vault", str(cjk_vault), "--rebuild", "-q"]).exit_code == 0
    assert closing(open_store(cjk_vault)).fts_tokenizer() == "unicode61"
    assert config.index_dir(cjk_vault).is_dir()


def test_unknown_tokenizer_is_one_clear_line(cjk_vault, monkeypatch, closing):
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "icu")
    with pytest.raises(ConfigError, match=r"BRAIN_FTS_TOKENIZER must be one of unicode61, trigram, not 'icu'"):
        index_vault(cjk_vault, progress=False)
    result = CliRunner().invoke(cli, ["index", "--vault", str(cjk_vault), "--rebuild"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert not (config.index_dir(cjk_vault) / "index.db").exists() or not closing(open_store(cjk_vault)).has_chunks()
