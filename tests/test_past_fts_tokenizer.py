"""The past's BM25 table (``chunk_history_fts``) is made with the index's tokenizer, as the present's is.

Under ``BRAIN_FTS_TOKENIZER=trigram`` the present matches a query by its trigrams; the past's table
was always unicode61's, so there ``--as-of`` found a past chunk by a query word of exactly three
letters alone: "rocket" and "dawn" missed a past "The rocket launched at dawn".
"""

from __future__ import annotations

import sqlite3
import time

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import open_store

from brain import config
from brain.cli import cli
from brain.index.indexer import index_vault
from brain.index.schema import FTS_TOKENIZERS, INDEX_MIGRATIONS, remake_past_fts
from brain.index.store import IndexStore
from brain.recall.opening import open_recaller

BEFORE = "# Launch\n\nThe rocket launched at dawn from the pad by 長城是中國的.\n"
ROCKET = '"roc" AND "ock" AND "cke" AND "ket"'
AFTER = "# Launch\n\nThe mission was scrubbed; nothing flew.\n"


def _past_tokenizer(conn: sqlite3.Connection) -> str:
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunk_history_fts'").fetchone()[0]
    return next(name for name, spec in FTS_TOKENIZERS.items() if f"'{spec}'" in sql or f'"{spec}"' in sql)


def _edited(root) -> float:
    """The note written, indexed, then edited and indexed again: the moment before the edit."""
    write(root, "Launch.md", BEFORE)
    write(root, "Other.md", "# Other\n\nA note on gardening and compost.\n")
    index_vault(root, progress=False)
    moment = time.time()
    time.sleep(0.01)
    write(root, "Launch.md", AFTER)
    index_vault(root, progress=False)
    return moment


@pytest.mark.parametrize("tokenizer", sorted(FTS_TOKENIZERS))
def test_as_of_finds_a_past_chunk_by_a_word_of_it(tmp_path, monkeypatch, tokenizer, closing):
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", tokenizer)
    root = tmp_path / "vault"
    moment = _edited(root)
    queries = ["rocket", "dawn", "launched rocket"] + (["長城是中國"] if tokenizer == "trigram" else [])
    view = closing(open_recaller(root, update=False, rerank_model=None, as_of=moment))
    found = {}
    for query in queries:
        top = view.ask(query, "hybrid").results[0]
        found[query] = (top.path, "lexical" in top.sources)
    assert found == {query: ("Launch.md", True) for query in queries}
    # the present does not hold those words: what the lexical lane found is the past chunk
    now = closing(open_recaller(root, update=False, rerank_model=None))
    assert not any("lexical" in r.sources for r in now.ask("rocket dawn", "hybrid").results)
    assert _past_tokenizer(closing(open_store(root)).conn) == tokenizer


def _finds_by_a_word(root, moment: float, closing) -> bool:
    """Whether ``--as-of`` the moment finds the past chunk by its words alone (the lexical lane)."""
    view = closing(open_recaller(root, update=False, rerank_model=None, as_of=moment))
    top = view.ask("rocket dawn", "hybrid").results[0]
    return top.path == "Launch.md" and "lexical" in top.sources


def test_a_rebuild_to_trigram_indexes_the_carried_past_with_it(tmp_path, monkeypatch, closing):
    """A tokenizer change is a rebuild: the history it carries in is indexed again with the new tokenizer."""
    root = tmp_path / "vault"
    moment = _edited(root)
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    result = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild", "--keep-history", "-q"])
    assert result.exit_code == 0, result.output
    store = closing(open_store(root))
    assert store.fts_tokenizer() == _past_tokenizer(store.conn) == "trigram"
    assert store.conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0] >= 1
    assert _finds_by_a_word(root, moment, closing)


def test_a_repair_makes_the_past_s_index_with_the_index_s_tokenizer(tmp_path, monkeypatch, closing):
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    root = tmp_path / "vault"
    moment = _edited(root)
    conn = sqlite3.connect(config.index_dir(root) / "index.db")
    conn.execute("DROP TABLE chunk_history_fts")
    conn.close()
    result = CliRunner().invoke(cli, ["index", "--repair", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    assert _past_tokenizer(closing(open_store(root)).conn) == "trigram"
    assert _finds_by_a_word(root, moment, closing)


def _as_before_m039(db) -> None:
    """The past's index as every brain before m039 made it (unicode61's, whatever the index's tokenizer), m039 not applied."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN")
    if "trigram" in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunk_history_fts'").fetchone()[0]:
        remake_past_fts(conn, "unicode61")
    conn.execute("DELETE FROM _migrations WHERE name = 'm039_past_search_in_the_index_s_tokenizer'")
    conn.execute("COMMIT")
    conn.close()


def test_m039_indexes_the_past_of_a_trigram_index_again(tmp_path, monkeypatch, closing):
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    root = tmp_path / "vault"
    moment = _edited(root)
    db = config.index_dir(root) / "index.db"
    _as_before_m039(db)
    before = sqlite3.connect(db)
    # what the lexical lane asked of it, the trigrams of "rocket", found nothing there
    assert (
        before.execute(f"SELECT count(*) FROM chunk_history_fts WHERE chunk_history_fts MATCH '{ROCKET}'").fetchone()[0]
        == 0
    )
    before.close()
    store = closing(open_store(root))  # opening it upgrades it
    assert (
        store.conn.execute(
            f"SELECT count(*) FROM chunk_history_fts WHERE chunk_history_fts MATCH '{ROCKET}'"
        ).fetchone()[0]
        == 1
    )
    assert "m039_past_search_in_the_index_s_tokenizer" in INDEX_MIGRATIONS.applied(store.conn)
    assert _past_tokenizer(store.conn) == "trigram"
    assert _finds_by_a_word(root, moment, closing)
    store.conn.execute("INSERT INTO chunk_history_fts (chunk_history_fts, rank) VALUES ('integrity-check', 1)")


def test_m039_leaves_a_unicode61_index_as_it_was(tmp_path, closing):
    """Its past's index is left as the runs wrote it (two segments, one a run: indexing it again would merge them)."""
    root = tmp_path / "vault"
    moment = _edited(root)
    write(root, "Launch.md", "# Launch\n\nRescheduled for Friday.\n")
    index_vault(root, progress=False)
    db = config.index_dir(root) / "index.db"
    _as_before_m039(db)
    before = sqlite3.connect(db)
    held = before.execute("SELECT id, block FROM chunk_history_fts_data ORDER BY id").fetchall()
    before.close()
    store = closing(open_store(root))
    assert "m039_past_search_in_the_index_s_tokenizer" in INDEX_MIGRATIONS.applied(store.conn)
    assert [tuple(r) for r in store.conn.execute("SELECT id, block FROM chunk_history_fts_data ORDER BY id")] == held
    assert _finds_by_a_word(root, moment, closing)


def test_as_of_expands_a_two_character_cjk_query_by_the_past_s_words(tmp_path, monkeypatch, closing):
    """Under trigram a two-character CJK query ("長城") is too short for a trigram: it stands for
    the indexed trigrams it begins ("長城是", …). A note deleted since holds them only in the past:
    `--as-of` took them from the present's words alone and its lexical lane found nothing."""
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    root = tmp_path / "vault"
    write(root, "Wall.md", "# 城牆\n\n長城是中國古代的軍事防禦工程。\n")
    write(root, "Other.md", "# 花園\n\n花園裡的玫瑰開了。\n")
    index_vault(root, progress=False)
    moment = time.time()
    time.sleep(0.01)
    (root / "Wall.md").unlink()
    index_vault(root, progress=False)
    view = closing(open_recaller(root, update=False, rerank_model=None, as_of=moment))
    top = view.ask("長城", "hybrid").results[0]
    assert (top.path, "lexical" in top.sources) == ("Wall.md", True)
    # the present holds no word beginning 長城: the past's are what the query stood for
    assert closing(open_store(root)).vocabulary_with_prefix("長城", 8) == []


def test_a_rebuild_to_trigram_indexes_each_carried_past_chunk_once(tmp_path, monkeypatch, closing):
    """The carried past chunks were indexed as they came in (unicode61's table, the new index's
    own until it took the setting) and then again in trigram's: each FTS5 document written twice;
    one whose searched form differs (full-width "ＳＱＬｉｔｅ" is "SQLite" to the index) a third time."""
    root = tmp_path / "vault"
    _edited(root)
    for text in ("Moved to the ＳＱＬｉｔｅ pad.", "Rescheduled for Friday."):
        write(root, "Launch.md", f"# Launch\n\n{text}\n")
        index_vault(root, progress=False)
    monkeypatch.setenv("BRAIN_FTS_TOKENIZER", "trigram")
    written: list[str] = []
    carry = IndexStore.carry_history_from

    def traced(self: IndexStore, old) -> None:
        self.conn.set_trace_callback(written.append)  # the rebuild's store: carry, then the run
        carry(self, old)

    monkeypatch.setattr(IndexStore, "carry_history_from", traced)
    result = CliRunner().invoke(cli, ["index", "--vault", str(root), "--rebuild", "--keep-history", "-q"])
    assert result.exit_code == 0, result.output
    store = closing(open_store(root))
    past = store.conn.execute("SELECT count(*) FROM chunk_history").fetchone()[0]
    assert past >= 3
    assert store.conn.execute("SELECT count(*) FROM chunk_history WHERE search_text LIKE '%SQLite%'").fetchone()[0] == 1
    documents = [s for s in written if "'chunk_history_fts_docsize'" in s and s.startswith("-- REPLACE")]
    assert len(documents) == past
    assert store.conn.execute("SELECT count(*) FROM chunk_history_fts_docsize").fetchone()[0] == past
    assert _past_tokenizer(store.conn) == "trigram"
