"""A damaged index is mended without losing the vault's history: `brain index --repair` makes
again a dropped table the index derives from its own rows (or keeps only to spare work);
`brain index --rebuild` carries the history of an index that lost another table into the new
one, and where the history itself is damaged says so and keeps the folder that holds the rest
(brain/index/repair.py, brain/index/rebuild.py)."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from index_helpers import history_problems, index_then_moment

from brain import config
from brain.cli import cli

PLAN = "# Rollout plan\n\nWe roll out in {month}, region by region, with canary deployments. See [[Canary]].\n"


def _brain(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def edited(tmp_path) -> tuple[Path, float]:
    """A vault whose plan was written in March, then June, then September, indexed after each;
    a moment while it said March."""
    root = tmp_path / "vault"
    write(root, "Canary.md", "# Canary\n\nCanary releases send a little traffic to the new build first.\n")
    write(root, "Bread.md", "# Bread\n\nFlour, water, salt and a starter. Bake at 240 degrees.\n")
    write(root, "Plan.md", PLAN.format(month="March"))
    index_then_moment(root)
    time.sleep(1.05)  # --as-of takes whole seconds: one after the run
    march = time.time()
    for month in ("June", "September"):
        write(root, "Plan.md", PLAN.format(month=month))
        index_then_moment(root)
    assert len(_versions(root)) == 3
    return root, march


def _database(root: Path) -> Path:
    return config.index_dir(root) / "index.db"


def _damage(root: Path, sql: str) -> None:
    conn = sqlite3.connect(_database(root))
    try:
        conn.executescript(sql)
    finally:
        conn.close()


def _versions(root: Path) -> list[dict]:
    code, out, err = _brain("history", "--vault", str(root), "Plan.md", "--json")
    assert code == 0, err
    return json.loads(out)["versions"]


def _said_in_march(root: Path, march: float) -> bool:
    """Whether `brain ask --as-of` that moment answers with the plan as it was: March, by its
    words alone (the past chunks' BM25 index)."""
    when = datetime.fromtimestamp(march).strftime("%Y-%m-%d %H:%M:%S")
    code, out, err = _brain("ask", "--vault", str(root), "--no-server", "--json", "--as-of", when, "roll out march")
    assert code == 0, err
    return any(r["path"] == "Plan.md" and "March" in r["snippet"] for r in json.loads(out)["results"])


def _aside(root: Path) -> list[Path]:
    return [p for p in config.index_dir(root).parent.iterdir() if ".damaged-" in p.name]


@pytest.mark.parametrize(
    "table",
    [
        "chunk_history_fts",
        "chunk_history_fts_data",
        "chunks_fts_data",
        "scan_snapshot_log",
        "postings_log",
        "name_changes",
        "skipped",
    ],
)
def test_a_dropped_table_the_index_makes_from_its_rows_is_made_again_by_repair(edited, table):
    root, march = edited
    before = _versions(root)
    _damage(root, f"DROP TABLE {table}")
    write(root, "Plan.md", PLAN.format(month="December"))
    write(root, "Canary.md", "# Canary\n\nA canary sends a little traffic first. See [[Bread]].\n")
    code, _, err = _brain("index", "--vault", str(root))
    # it sent these to --rebuild, which started history over
    assert code == 1 and err.count("\n") == 1, err
    assert f"no such table: {table}" in err and f"`brain index --repair --vault {root}`" in err
    code, out, err = _brain("index", "--repair", "--vault", str(root))
    assert code == 0, err
    assert "was gone: made again" in out
    code, _, err = _brain("index", "--vault", str(root))
    assert code == 0, err
    after = _versions(root)
    assert [v["hash"] for v in after[: len(before)]] == [v["hash"] for v in before] and len(after) == len(before) + 1
    assert _said_in_march(root, march)
    assert history_problems(_database(root)) == []


@pytest.mark.parametrize("table", ["links", "notes", "chunks", "meta"])
def test_a_rebuild_carries_the_history_of_an_index_that_lost_a_table_of_its_present(edited, table):
    root, march = edited
    before = _versions(root)
    _damage(root, f"DROP TABLE {table}")
    code, _, err = _brain("index", "--repair", "--vault", str(root))
    assert code == 1 and err.count("\n") == 1
    assert f"`brain index --rebuild --vault {root}`" in err and "history carried into it" in err
    code, _, err = _brain("index", "--rebuild", "--keep-history", "--quiet", "--vault", str(root))
    assert code == 0, err
    (aside,) = _aside(root)
    assert err == (
        f"brain: the damaged index (no such table: {table}) was moved to {aside}; its history was carried into the"
        " new index: delete it when you no longer need it\n"
    )
    # it started history over: one version of the plan, first seen at the rebuild
    assert [(v["hash"], v["recorded_from"]) for v in _versions(root)] == [
        (v["hash"], v["recorded_from"]) for v in before
    ]
    assert _said_in_march(root, march)
    assert history_problems(_database(root)) == []


@pytest.mark.parametrize("table", ["note_versions", "chunk_history", "version_chunks", "link_history"])
def test_a_rebuild_over_a_damaged_history_says_it_is_only_in_the_folder_moved_aside(edited, table):
    root, _ = edited
    _damage(root, f"DROP TABLE {table}")
    code, _, err = _brain("index", "--repair", "--vault", str(root))
    assert code == 1 and err.count("\n") == 1
    assert f"its history lost {table} and cannot be carried into it" in err
    code, _, err = _brain("index", "--rebuild", "--quiet", "--vault", str(root))  # nothing to ask: it cannot carry it
    assert code == 0, err
    (aside,) = _aside(root)
    assert err.count("\n") == 1 and err.startswith(f"brain: the damaged index (no such table: {table}) was moved to")
    # said even with --quiet, where it said to delete the folder, the one copy of the past
    assert f"could not be carried into the new index (no such table: {table})" in err
    assert f"{aside}" in err and "keep that folder" in err and "delete" not in err
    # no count of what it could not read: note_versions gone was "(0 past versions of 0 notes, …)",
    # as an index from before history
    assert "past version" not in err and "closed link" not in err, err
    assert (aside / "index.db").exists()
    assert len(_versions(root)) == 1  # history starts again from the rebuild


def test_a_rebuild_over_a_damaged_file_offers_no_choice_and_counts_the_history_it_could_read(edited):
    """The history's tables read, the rebuild asked to discard it or "Add --keep-history to carry it
    over", which would not carry it from a damaged file (not on a terminal: refused)."""
    root, _ = edited
    database = _database(root)
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        [root_page] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'notes'").fetchone()
        [size] = conn.execute("PRAGMA page_size").fetchone()
    finally:
        conn.close()
    with open(database, "r+b") as handle:  # the notes table's first page overwritten: the history's intact
        handle.seek((root_page - 1) * size)
        handle.write(b"\xff" * size)
    code, _, err = _brain("index", "--rebuild", "--quiet", "--vault", str(root))
    assert code == 0, err
    [aside] = _aside(root)
    assert "its history (2 past versions of 1 note, " in err and f"{aside}" in err and "keep that folder" in err, err


def test_a_rebuild_over_a_damaged_file_says_its_history_stays_in_the_folder_moved_aside(edited):
    root, _ = edited
    database = _database(root)
    database.write_bytes(database.read_bytes()[:8192])  # truncated
    code, out, err = _brain("index", "--rebuild", "--json", "--vault", str(root))
    assert code == 0, err
    (aside,) = _aside(root)
    report = json.loads(out)
    assert report["moved_aside"] == str(aside) and report["history_left"]
    assert "keep that folder" in err and "delete" not in err


def test_status_over_an_index_whose_model_row_is_lost_says_it_is_damaged(edited):
    root, _ = edited
    _damage(root, "DELETE FROM meta WHERE key = 'model'")
    code, out, err = _brain("status", "--vault", str(root))
    # it said `model:  (nothing indexed yet)` over 3 notes
    assert code == 1 and not out and err.count("\n") == 1, out
    assert "holds chunks but not the model" in err and f"`brain index --rebuild --vault {root}`" in err
    code, out, err = _brain("index", "--repair", "--vault", str(root))
    assert code == 1 and not out and "holds chunks but not the model" in err  # it said "repaired"
    code, _, err = _brain("index", "--rebuild", "--keep-history", "--vault", str(root))
    assert code == 0, err
    assert len(_versions(root)) == 3


def _recorded(root: Path) -> list[str]:
    conn = sqlite3.connect(_database(root))
    try:
        return [r[0] for r in conn.execute("SELECT name FROM _migrations WHERE db = 'index' ORDER BY rowid")]
    finally:
        conn.close()


def test_a_lost_record_of_the_migrations_is_made_again_by_repair_from_the_tables(edited):
    root, march = edited
    before, recorded = _versions(root), _recorded(root)
    _damage(root, "DROP TABLE _migrations")
    for command in (["status"], ["index"], ["history", "Plan.md"]):
        code, _, err = _brain(*command, "--vault", str(root))
        # it said "could not be used (table meta already exists)": the first migration run again
        assert code == 1 and err.count("\n") == 1, err
        assert "no such table: _migrations" in err and f"`brain index --repair --vault {root}`" in err
    code, out, err = _brain("index", "--repair", "--vault", str(root))
    assert code == 0, err
    assert "_migrations was gone: made again" in out
    assert _recorded(root) == recorded  # every one, none run again over the rows
    write(root, "Plan.md", PLAN.format(month="December"))
    code, _, err = _brain("index", "--vault", str(root))
    assert code == 0, err
    assert [v["hash"] for v in _versions(root)][: len(before)] == [v["hash"] for v in before]
    assert _said_in_march(root, march)
    assert history_problems(_database(root)) == []


def test_a_lost_record_of_the_migrations_over_other_damage_is_rebuilt_its_history_kept_aside(edited):
    root, _ = edited
    _damage(root, "DROP TABLE _migrations; DROP TABLE links")
    code, _, err = _brain("index", "--repair", "--vault", str(root))
    assert code == 1 and err.count("\n") == 1, err
    assert "not those of any version brain made" in err and f"`brain index --rebuild --vault {root}`" in err
    code, _, err = _brain("index", "--rebuild", "--keep-history", "--quiet", "--vault", str(root))
    # it failed as every other command did: "could not be used (table meta already exists)"
    assert code == 0, err
    (aside,) = _aside(root)
    assert "no such table: _migrations" in err and "keep that folder" in err and str(aside) in err
    assert (aside / "index.db").exists()


def test_postings_not_rebuilt_over_a_dropped_postings_log_name_repair(edited, monkeypatch):
    from brain.index import background

    root, _ = edited
    monkeypatch.setenv("BRAIN_LEXICAL_POSTINGS", "1")  # from one chunk: this vault has a base
    write(root, "Bread.md", "# Bread\n\nFlour, water, salt and a starter. Bake at 250 degrees.\n")
    code, _, err = _brain("index", "--vault", str(root))
    assert code == 0, err
    background.wait_for_all(60)
    assert (config.index_dir(root) / "postings.bin").exists()
    _damage(root, "DROP TABLE postings_log")
    code, _, err = _brain("index", "--vault", str(root))  # nothing changed
    # it said "BM25 searches FTS5 until a later index pass", which fails the same way; then a
    # warning, exit 0; now the pass fails before it starts, as one with notes to index does
    assert code == 1 and err.count("\n") == 1, err
    assert "later index pass" not in err
    assert "no such table: postings_log" in err and f"`brain index --repair --vault {root}`" in err


@pytest.mark.parametrize("rename", ["renameat2", "mkdir first"])
def test_a_damaged_index_is_never_moved_over_a_folder_made_after_its_name_was_chosen(edited, monkeypatch, rename):
    from brain.index import rebuild

    root, _ = edited
    _damage(root, "DROP TABLE links")
    if rename == "mkdir first":  # a system or file system without a rename that never replaces
        monkeypatch.setattr(rebuild, "_rename_with", lambda a, b, **flags: None, raising=False)
    chosen, name = [], rebuild._damaged_name

    def then_taken(directory: Path, label: str = "damaged") -> Path:
        aside = name(directory, label)
        if not chosen:  # another's folder, made between the look and the rename
            aside.mkdir()
            chosen.append(aside)
        return aside

    monkeypatch.setattr(rebuild, "_damaged_name", then_taken)
    code, out, err = _brain("index", "--rebuild", "--keep-history", "--json", "--vault", str(root))
    assert code == 0, err
    moved = Path(json.loads(out)["moved_aside"])
    # the damaged index took that empty folder's place
    assert chosen[0].is_dir() and not any(chosen[0].iterdir())
    assert moved != chosen[0] and (moved / "index.db").exists()
    assert len(_versions(root)) == 3


@pytest.mark.parametrize("table", ["chunk_history_fts", "chunks_fts_data", "postings_log", "name_changes"])
def test_status_says_a_dropped_table_none_of_its_reads_touch_and_its_fix(edited, table):
    root, _ = edited
    _damage(root, f"DROP TABLE {table}")
    code, out, err = _brain("status", "--vault", str(root))
    # it printed the status, as of a sound index
    assert code == 1 and not out and err.count("\n") == 1, out
    assert f"no such table: {table}" in err and f"`brain index --repair --vault {root}`" in err
