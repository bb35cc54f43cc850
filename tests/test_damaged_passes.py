"""An index pass over an index short of a table fails before it changes anything, with the one
line that names the fix, whether it has notes to index or none: `brain index`, `brain ask`'s
update, `brain serve`'s pass (brain/index/indexer.py); and `brain ask --as-of` does not answer
the past from an index that lost a table (brain/recall/opening.py)."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import index_then_moment
from serve_helpers import served, wait_until

from brain import config
from brain.cli import cli

PLAN = "# Rollout plan\n\nWe roll out in {month}, region by region, with canary deployments. See [[Canary]].\n"
# what each dropped table is sent to: made again (--repair), else a new index (--rebuild)
FIX = {
    "aliases": "--rebuild",
    "tags": "--rebuild",
    "chunk_history": "--rebuild",
    "chunk_history_fts": "--repair",
    "text_packs": "--rebuild",
    "text_segments": "--rebuild",
}


def _brain(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def edited(tmp_path) -> tuple[Path, float]:
    """A vault whose plan said March, then June, indexed after each; a moment while it said March."""
    root = tmp_path / "vault"
    write(root, "Canary.md", "# Canary\n\nCanary releases send a little traffic to the new build first.\n")
    write(root, "Plan.md", PLAN.format(month="March"))
    index_then_moment(root)
    time.sleep(1.05)  # --as-of takes whole seconds: one after the run
    march = time.time()
    write(root, "Plan.md", PLAN.format(month="June"))
    index_then_moment(root)
    return root, march


def _drop(root: Path, table: str) -> None:
    conn = sqlite3.connect(config.index_dir(root) / "index.db")
    try:
        conn.execute(f"DROP TABLE {table}")
        conn.commit()
    finally:
        conn.close()


def _rows(root: Path) -> list[tuple]:
    """Every version and link edge the index holds, as stored."""
    conn = sqlite3.connect(config.index_dir(root) / "index.db")
    try:
        return [
            *conn.execute("SELECT * FROM note_versions ORDER BY id"),
            *conn.execute("SELECT * FROM link_history ORDER BY id"),
        ]
    finally:
        conn.close()


def _names_fix(err: str, table: str, root: Path) -> bool:
    return (
        err.count("\n") == 1
        and f"no such table: {table}" in err
        and f"`brain index {FIX[table]} --vault {root}`" in err
    )


@pytest.mark.parametrize("table", sorted(FIX))
def test_an_index_pass_with_nothing_to_index_says_the_table_is_gone(edited, table):
    root, _ = edited
    _drop(root, table)
    code, _, err = _brain("index", "--vault", str(root))
    assert code == 1 and _names_fix(err, table, root), err  # it exited 0 without a word


@pytest.mark.parametrize("table", ["text_packs", "text_segments"])
@pytest.mark.parametrize("how", ["index", "ask"])
def test_a_changed_note_over_history_without_its_texts_is_refused_before_anything_changes(edited, table, how):
    root, march = edited
    _drop(root, table)
    before = _rows(root)
    write(root, "Plan.md", PLAN.format(month="September"))  # June's text becomes a past version's
    if how == "index":
        code, _, err = _brain("index", "--vault", str(root))
    else:  # the update brain ask runs first
        code, _, err = _brain("ask", "--vault", str(root), "--no-server", "roll out")
    assert code == 1 and _names_fix(err, table, root), err
    assert _rows(root) == before  # no version recorded whose text could not be kept
    assert len(_history(root, "Plan.md")) == 2  # March and June, both still read
    # the rebuild it names carries them (short: kept whole with their versions), then records September
    code, _, err = _brain("index", "--rebuild", "--keep-history", "--quiet", "--vault", str(root))
    assert code == 0, err
    versions = _history(root, "Plan.md")
    assert len(versions) == 3 and all(v["text_kept"] for v in versions)
    code, out, err = _brain(
        "ask", "--vault", str(root), "--no-server", "--json", "--as-of", _when(march), "roll out march"
    )
    assert code == 0, err
    assert any(r["path"] == "Plan.md" and "March" in r["snippet"] for r in json.loads(out)["results"])


@pytest.mark.parametrize("table", ["tags", "text_packs", "text_segments", "chunk_history"])
def test_ask_as_of_over_an_index_short_of_a_table_names_the_fix(edited, table):
    root, march = edited
    _drop(root, table)
    code, _, err = _brain("ask", "--vault", str(root), "--no-server", "--as-of", _when(march), "roll out march")
    assert code == 1 and _names_fix(err, table, root), err  # it answered the past, exit 0, no mention


def test_a_server_pass_over_an_index_short_of_a_table_logs_the_fix_and_still_answers(toy_vault, caplog):
    from index_helpers import index_into

    index_into(Path(config.brain_home()), toy_vault)
    _drop(toy_vault, "tags")
    caplog.set_level(logging.INFO, logger="brain")
    with served(toy_vault, ready_within=20) as daemon:
        wait_until(lambda: daemon.service.unindexed is not None, 20, "the first pass to fail")
        code, out, err = _brain("ask", "--vault", str(toy_vault), "--json", "agent memory")
        assert code == 0 and json.loads(out)["results"], err  # the snapshot still answers, as before
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures and all(r.exc_info is None for r in failures)
    assert all("no such table: tags" in r.getMessage() and "brain index --rebuild" in r.getMessage() for r in failures)


def test_a_server_asked_about_the_past_over_an_index_short_of_a_table_names_the_fix(toy_vault, monkeypatch):
    from index_helpers import index_into

    from brain.recall import opening

    index_into(Path(config.brain_home()), toy_vault)
    _drop(toy_vault, "text_packs")
    views = []
    opened = opening.open_past_view
    monkeypatch.setattr(opening, "open_past_view", lambda *a, **k: views.append(1) or opened(*a, **k))
    time.sleep(1.05)  # --as-of takes whole seconds: one after history began
    when = datetime.fromtimestamp(time.time()).strftime("%Y-%m-%d %H:%M:%S")
    with served(toy_vault, ready_within=20):
        code, _, err = _brain("ask", "--vault", str(toy_vault), "--as-of", when, "agent memory")
    assert views, err  # the server was asked, not brain ask in its place
    assert code == 1 and err.count("\n") == 1, err
    assert "no such table: text_packs" in err and f"`brain index --rebuild --vault {toy_vault.resolve()}`" in err


@pytest.mark.parametrize("table", ["text_packs", "text_segments"])
def test_a_rebuild_carries_a_history_short_of_its_texts_marking_those_lost(tmp_path, table):
    # it refused (the history "cannot be carried") though `brain history` still read all of it
    root = tmp_path / "vault"
    long_plan = PLAN + "".join(f"\n## Region {n}\n\nCanary first, then the rest of region {n}.\n" for n in range(120))
    assert len(long_plan.encode()) > 4096  # kept in segments once past (version_text.SEGMENTS_FROM)
    write(root, "Canary.md", "# Canary\n\nCanary releases send a little traffic to the new build first.\n")
    for month in ("March", "June", "September"):
        write(root, "Plan.md", long_plan.format(month=month))
        write(root, "Canary.md", f"# Canary\n\nCanary releases first, since {month}.\n")
        index_then_moment(root)
    before = {note: _history(root, note) for note in ("Plan.md", "Canary.md")}
    assert all(v["text_kept"] for versions in before.values() for v in versions)
    _drop(root, table)
    code, _, err = _brain("index", "--vault", str(root))
    assert code == 1 and _names_fix(err, table, root) and "history carried into it" in err, err
    code, _, err = _brain("index", "--rebuild", "--keep-history", "--quiet", "--vault", str(root))
    assert code == 0 and "its history was carried into the new index" in err, err
    after = {note: _history(root, note) for note in ("Plan.md", "Canary.md")}
    for note in before:
        assert [v["hash"] for v in after[note]] == [v["hash"] for v in before[note]]
    assert [v["text_kept"] for v in after["Plan.md"]] == [False, False, True]  # the past ones' were in segments
    assert all(v["text_kept"] for v in after["Canary.md"])  # short: kept whole, with the version
    assert _brain("status", "--vault", str(root))[0] == 0


def _history(root: Path, note: str) -> list[dict]:
    code, out, err = _brain("history", "--vault", str(root), note, "--json")
    assert code == 0, err
    return json.loads(out)["versions"]


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment).strftime("%Y-%m-%d %H:%M:%S")


@pytest.mark.parametrize("table", ["tags", "chunk_history", "text_packs"])
def test_ask_over_an_index_short_of_a_table_its_answer_reads_not_says_so_and_its_fix(edited, table):
    root, _ = edited
    _drop(root, table)
    code, out, err = _brain("ask", "--vault", str(root), "--no-server", "--json", "roll out")
    assert code == 0, err  # the present answered as it was, exit 0, without a word
    answer = json.loads(out)
    assert answer["results"]
    (said,) = [w for w in answer["warnings"] if f"no such table: {table}" in w]
    assert f"`brain index {FIX[table]} --vault {root}`" in said
