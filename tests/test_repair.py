"""A BM25 index out of step with its rows: `brain ask` answers without it and says how to mend
it; `brain index --repair` mends it without embedding; a damaged database file is sent to
--rebuild (brain/index/repair.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FakeEmbedder
from index_helpers import index_into

from brain import config
from brain.cli import cli
from brain.index.files import RECALL_CACHE_FILE


def _invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _database(vault: Path) -> Path:
    return config.index_dir(vault.resolve()) / "index.db"


def _desync(vault: Path, word: str) -> int:
    """Leave ``word`` of one chunk in the BM25 index while the rest of that chunk's entry goes:
    what a 'delete' handed other values than were indexed does. Returns the chunk id."""
    conn = sqlite3.connect(_database(vault))
    try:
        chunk_id, title, heading, text = conn.execute(
            "SELECT id, title, heading, text FROM chunks_fts_source WHERE text LIKE ? LIMIT 1", (f"%{word}%",)
        ).fetchone()
        kept = " ".join(t for t in text.split() if word not in t.lower())
        conn.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text) VALUES ('delete', ?, ?, ?, ?)",
            (chunk_id, title, heading, kept),
        )
        conn.commit()
        with pytest.raises(sqlite3.DatabaseError, match="malformed"):
            conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()
    return int(chunk_id)


def _ask(vault: Path, query: str) -> dict:
    result = _invoke("ask", "--vault", str(vault), "--json", "--no-rerank", "--mode", "hybrid+ppr", query)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_bm25_index_out_of_step_is_answered_around_and_repaired(toy_vault):
    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    before = _ask(toy_vault, "sourdough starter")
    assert before["results"] and not before["warnings"]
    _desync(toy_vault, "sourdough")
    damaged = _ask(toy_vault, "sourdough starter")  # not "database disk image is malformed" and nothing else
    assert damaged["results"], damaged
    assert any(f"brain index --repair --vault {toy_vault.resolve()}" in w for w in damaged["warnings"]), damaged
    assert len(damaged["warnings"]) == 1, damaged["warnings"]  # said once: anchor_lex does not search it again
    assert damaged["fallbacks"].get("lexical") is True

    result = _invoke("index", "--repair", "--vault", str(toy_vault))
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"repaired the index of {toy_vault.resolve()}: rebuilt and checked chunks_fts (")
    conn = sqlite3.connect(_database(toy_vault))
    conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")  # raises if not mended
    conn.close()
    after = _ask(toy_vault, "sourdough starter")
    assert not after["warnings"] and [r["path"] for r in after["results"]] == [r["path"] for r in before["results"]]


def test_repair_says_what_it_did_as_json_and_drops_the_kept_names(toy_vault, closing):
    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    _ask(toy_vault, "memory graph")  # keeps the names and link graph for the next run
    cache = _database(toy_vault).parent / RECALL_CACHE_FILE
    assert cache.exists()
    result = _invoke("index", "--repair", "--json", "--vault", str(toy_vault))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["vault"] == str(toy_vault.resolve()) and report["seconds"] >= 0
    chunks = closing(sqlite3.connect(_database(toy_vault))).execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert report["rebuilt"] == {"chunks_fts": chunks, "chunk_history_fts": report["rebuilt"]["chunk_history_fts"]}
    assert not cache.exists()


def test_repair_and_rebuild_together_is_a_usage_error(toy_vault):
    result = CliRunner().invoke(cli, ["index", "--repair", "--rebuild", "--vault", str(toy_vault)])
    assert result.exit_code == 2 and "--repair and --rebuild do not go together" in result.output


@pytest.mark.parametrize("how", ["garbage", "pages", "random"])
def test_a_damaged_database_is_sent_to_rebuild_in_one_line(toy_vault, how):
    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    path = _database(toy_vault)
    data = bytearray(path.read_bytes())
    if how == "garbage":
        data[:] = b"x" * len(data)
    elif how == "random":  # random bytes mid-file: SQLite's check reports pages on lines of their own
        import random

        noise = random.Random(7).randbytes(20_000)
        at = len(data) * 7 // 10  # past the first tables' pages: the check runs, and finds them broken
        data[at : at + len(noise)] = noise
    else:  # the header sound, pages in the middle overwritten
        page = 4096
        for start in range(page * 3, min(len(data), page * 12), page):
            data[start : start + page] = b"\xff" * page
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(cli, ["index", "--repair", "--vault", str(toy_vault)])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert f"brain index --rebuild --vault {toy_vault.resolve()}" in result.output and "--repair" not in result.output


def test_a_bm25_index_missing_its_pages_is_answered_around_in_every_lexical_mode(toy_vault):
    """Its shadow rows deleted, the index fails already where the query's words are looked up
    (their counts, a misspelling's respelling): the lane falls back there too, not the answer."""
    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    query = "what did I write about the sourdough starter"  # a question: the names lane stays out
    vector = _invoke("ask", "--vault", str(toy_vault), "--json", "--no-rerank", "--mode", "vector", query)
    conn = sqlite3.connect(_database(toy_vault))
    conn.execute("DELETE FROM chunks_fts_data WHERE id > 10")  # the structure and averages records stay
    conn.commit()
    conn.close()
    for mode in ("hybrid", "hybrid+ppr"):
        result = _invoke("ask", "--vault", str(toy_vault), "--json", "--no-rerank", "--mode", mode, query)
        assert result.exit_code == 0, result.output
        damaged = json.loads(result.stdout)
        assert damaged["fallbacks"].get("lexical") is True, damaged
        assert any(f"brain index --repair --vault {toy_vault.resolve()}" in w for w in damaged["warnings"]), damaged
        if mode == "hybrid":  # without BM25, what is left of hybrid for a question is the dense lane
            assert [r["path"] for r in damaged["results"]] == [r["path"] for r in json.loads(vector.stdout)["results"]]


def test_repair_makes_the_indexes_a_stopped_first_build_left(toy_vault, monkeypatch):
    """A first build drops its random-key indexes until its writes are done (defer_indexes);
    stopped in between, `--repair` makes them, as the next `brain index` would."""
    from brain.index import indexer
    from brain.index.store import _DEFERRED_INDEXES

    def stopped(store, **kwargs):
        raise RuntimeError("stopped before the links")

    with monkeypatch.context() as patched:
        patched.setattr(indexer, "BULK_FROM", 0)
        patched.setattr(indexer, "resolve_links", stopped)
        with pytest.raises(RuntimeError):
            index_into(config.brain_home(), toy_vault, FakeEmbedder())

    def indexes() -> set[str]:
        conn = sqlite3.connect(_database(toy_vault))
        try:
            return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        finally:
            conn.close()

    assert not indexes() & set(_DEFERRED_INDEXES)
    result = _invoke("index", "--repair", "--vault", str(toy_vault))
    assert result.exit_code == 0, result.output
    assert f"made the {len(_DEFERRED_INDEXES)} indexes a first build left" in result.output
    assert indexes() >= set(_DEFERRED_INDEXES)
    again = _invoke("index", "--repair", "--json", "--vault", str(toy_vault))
    assert json.loads(again.stdout)["indexes_made"] == 0


def test_a_repair_that_waited_for_another_writer_says_the_wait_apart(toy_vault):
    """`brain index --repair` while another `brain index` ran: "in 3.4 s" for a repair of a
    fraction of that, its wait counted in, where a plain `brain index` said the wait apart."""
    import threading
    import time

    from serve_helpers import holding

    from brain.index.writer_lock import lock_path

    index_into(config.brain_home(), toy_vault, FakeEmbedder())
    held_for = 3.0
    with holding(
        "import fcntl, sys\nf = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True); sys.stdin.read()",
        str(lock_path(config.index_dir(toy_vault.resolve()))),
        stdin=True,
    ) as holder:
        assert holder.stdin is not None
        release = threading.Timer(held_for, holder.stdin.close)  # the other run ends
        started = time.perf_counter()
        release.start()
        try:
            result = _invoke("index", "--repair", "--json", "--wait", "60", "--vault", str(toy_vault))
        finally:
            release.cancel()
        total = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # held at least held_for after the repair began: its own time is at most what is left of the total
    assert report["seconds"] <= total - (held_for - 0.5), (report, total)
    assert report["waited"] >= held_for - 0.5, report
    text = _invoke("index", "--repair", "--vault", str(toy_vault)).output
    assert "waiting" not in text and " s\n" in text  # no wait, nothing said of one
