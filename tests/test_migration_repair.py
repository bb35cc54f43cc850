"""m035: what m024-m033 as released (637aeaf) left of an index that ran them, which runs them no
more though they were edited since: notes their markers missed, edges out of step with their
versions. After it (and the run it marks notes for) the index is as a fresh build makes it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder, write
from index_helpers import history_problems, index_into

from brain.index.schema import INDEX_MIGRATIONS

M035 = "m035_what_edited_migrations_missed"

# One case of each: m027 widened (a no-break space after the "#"), m029 widened (a backslash),
# m033 widened (a heading with a comment merged into the section before), and a note of two
# versions whose world time m032 read again for its versions and not its edges.
NOTES = {
    "Plain.md": "# Plain\n\nother words.\n",
    "Sub/Back.md": "# Back\n\nsee [[..\\Plain]] and [[/../Plain]].\n",
    "Sharp.md": "#\u00a0Learn C#\n\nsome words.\n",
    "Comment.md": "# P\n\nfirst.\n\n## Q\n\nsecond.\n\n# P <!-- c -->\n\nthird.\n",
}
CAP_BEFORE = "---\nStatus: draft\n---\n# Cap\n\nfirst words [[Plain]].\n"
CAP_AFTER = "---\nStatus: done\n---\n# Cap\n\nnew words [[Plain]].\n"

# An edge and a version of its note over the same time whose world times differ.
OUT_OF_STEP = (
    "SELECT e.id FROM link_history e JOIN note_versions v ON v.note_id = e.source_id"
    " AND v.recorded_from < coalesce(e.recorded_to, 9e99) AND coalesce(v.recorded_to, 9e99) > e.recorded_from"
    " WHERE NOT (v.world_date IS e.world_date AND v.valid_from IS e.valid_from AND v.valid_to IS e.valid_to"
    " AND v.status IS e.note_status)"
)


def _build(tmp_path: Path, name: str) -> tuple[Path, Path]:
    vault, home = tmp_path / name / "vault", tmp_path / name / "home"
    for path, text in NOTES.items():
        write(vault, path, text)
    write(vault, "Cap.md", CAP_BEFORE)
    index_into(home, vault)
    write(vault, "Cap.md", CAP_AFTER)
    _, directory = index_into(home, vault)
    return vault, directory / "index.db"


def _as_637aeaf_left_it(db: Path, reopened: bool = False) -> list[tuple]:
    """The rows as brain at 637aeaf left them once its m024-m034 ran: the notes its markers missed
    read as before, and Cap's edges under the world time of before m032, one edge over both its
    versions (``reopened``: closed at the upgrade and opened anew, under its status then, by the run
    after it). Returns Cap's edges as a fresh run stamped them (recorded_from, recorded_to, status)."""
    conn = sqlite3.connect(db, isolation_level=None)
    ids = dict(conn.execute("SELECT path, id FROM notes").fetchall())
    conn.execute("UPDATE chunks SET heading = 'Learn C' WHERE note_id = ?", (ids["Sharp.md"],))
    conn.execute("UPDATE chunks SET heading = 'P > Q' WHERE note_id = ? AND text LIKE '%third%'", (ids["Comment.md"],))
    conn.execute("UPDATE links SET target_id = NULL WHERE source_id = ?", (ids["Sub/Back.md"],))
    edges = conn.execute(
        "SELECT recorded_from, recorded_to, note_status FROM link_history WHERE source_id = ? ORDER BY recorded_from",
        (ids["Cap.md"],),
    ).fetchall()
    assert [row[2] for row in edges] == ["draft", "done"]
    cap, (_, change, _) = ids["Cap.md"], edges[0]
    if reopened:  # and the run after it found the open edge out of step, closed it and opened it anew
        upgrade = change + 5
        conn.execute(
            "UPDATE link_history SET recorded_from = ? WHERE source_id = ? AND recorded_from = ?",
            (upgrade, cap, change),
        )
        conn.execute(
            "UPDATE link_history SET note_status = NULL, recorded_to = ? WHERE source_id = ? AND recorded_to = ?",
            (upgrade, cap, change),
        )
    else:
        conn.execute("DELETE FROM link_history WHERE source_id = ? AND recorded_from = ?", (cap, change))
        conn.execute("UPDATE link_history SET note_status = NULL, recorded_to = NULL WHERE source_id = ?", (cap,))
    conn.execute("DELETE FROM _migrations WHERE name = ?", (M035,))
    conn.close()
    return edges


def _state(db: Path) -> dict[str, list]:
    """What a fresh build and an upgraded index must agree on."""
    conn = sqlite3.connect(db)
    try:
        return {
            "chunks": conn.execute(
                "SELECT n.path, c.ordinal, c.heading, c.text FROM chunks c JOIN notes n ON n.id = c.note_id ORDER BY 1, 2"
            ).fetchall(),
            "links": conn.execute(
                "SELECT s.path, l.target, l.kind, t.path FROM links l JOIN notes s ON s.id = l.source_id"
                " LEFT JOIN notes t ON t.id = l.target_id ORDER BY 1, 2, 3"
            ).fetchall(),
            "current versions' world time": conn.execute(
                "SELECT path, world_date, valid_from, valid_to, status FROM note_versions WHERE recorded_to IS NULL"
                " ORDER BY path"
            ).fetchall(),
            "open edges' world time": conn.execute(
                "SELECT n.path, e.target, e.kind, e.world_date, e.valid_from, e.valid_to, e.note_status"
                " FROM link_history e JOIN notes n ON n.id = e.source_id WHERE e.recorded_to IS NULL ORDER BY 1, 2, 3"
            ).fetchall(),
        }
    finally:
        conn.close()


@pytest.mark.parametrize("reopened", [False, True])
def test_an_index_that_ran_the_released_migrations_is_repaired_to_a_fresh_builds(tmp_path, reopened):
    vault, db = _build(tmp_path, "old")
    stamped = _as_637aeaf_left_it(db, reopened)
    home = db.parent.parent.parent
    assert history_problems(db) == []  # out of step, but nothing the history check sees

    embedder = FakeEmbedder()
    index_into(home, vault, embedder)  # migrates, then reads again the notes m035 marked
    conn = sqlite3.connect(db)
    try:
        assert M035 in INDEX_MIGRATIONS.applied(conn)
        assert conn.execute(OUT_OF_STEP).fetchall() == []
        cap = conn.execute("SELECT id FROM notes WHERE path = 'Cap.md'").fetchone()[0]
        edges = conn.execute(
            "SELECT recorded_from, recorded_to, note_status FROM link_history WHERE source_id = ? ORDER BY recorded_from",
            (cap,),
        ).fetchall()
    finally:
        conn.close()
    assert edges == stamped  # cut where the versions meet, each under its version's status
    assert history_problems(db) == []

    _, fresh = _build(tmp_path, "fresh")
    assert _state(db) == _state(fresh)
    assert index_into(home, vault)[0].changed == 0  # once


def _dump(conn: sqlite3.Connection) -> list:
    return [
        conn.execute("SELECT * FROM link_history ORDER BY id").fetchall(),
        conn.execute("SELECT id, hash, mtime_ns FROM notes ORDER BY id").fetchall(),
    ]


@pytest.mark.parametrize("reopened", [False, True])
def test_m035_run_again_changes_nothing(tmp_path, reopened):
    from brain.index.schema import m035_what_edited_migrations_missed

    _, db = _build(tmp_path, "old")
    stamped = _as_637aeaf_left_it(db, reopened)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        m035_what_edited_migrations_missed(conn)
        once = _dump(conn)
        assert conn.execute(OUT_OF_STEP).fetchall() == []
        marked = {row[0] for row in conn.execute("SELECT path FROM notes WHERE hash = ''")}
        assert marked == {"Sharp.md", "Sub/Back.md", "Comment.md"}  # Plain and Cap: nothing missed
        edges = "SELECT recorded_from, recorded_to, note_status FROM link_history WHERE target = 'Plain' ORDER BY 1"
        assert conn.execute(edges).fetchall() == stamped  # at once, before the next run
        m035_what_edited_migrations_missed(conn)
        assert _dump(conn) == once
    finally:
        conn.close()
    assert M035 in INDEX_MIGRATIONS.safe_to_run_again


_MIGRATE_AND_DIE = """
import os, signal, sys
from brain.index import schema
from brain.index.store import IndexStore
real = schema._write_edges
def write_then_die(*args, **kwargs):
    real(*args, **kwargs)
    print("written", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
schema._write_edges = write_then_die
IndexStore.open(__import__("pathlib").Path(sys.argv[1]), create=False).close()
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="kill -9")
def test_kill_9_mid_m035_leaves_the_index_as_it_was(tmp_path):
    _, db = _build(tmp_path, "old")
    _as_637aeaf_left_it(db)
    conn = sqlite3.connect(db)
    before = _dump(conn)
    conn.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run(
        [sys.executable, "-c", _MIGRATE_AND_DIE, str(db.parent)], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == -signal.SIGKILL and run.stdout.strip() == "written", run.stderr  # killed inside m035
    conn = sqlite3.connect(db)
    try:
        assert M035 not in INDEX_MIGRATIONS.applied(conn)
        assert _dump(conn) == before
    finally:
        conn.close()
