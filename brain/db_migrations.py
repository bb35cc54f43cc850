"""Migrations of the brain database, in order. Never edit a released one; append."""

from __future__ import annotations

import sqlite3

from .migrations import Migrations

MIGRATIONS = Migrations("brain")


@MIGRATIONS
def m001_turns(conn: sqlite3.Connection) -> None:
    """The turn ledger: one row per assistant turn, written by the Stop hook."""
    conn.execute(
        """
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    turn_key TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    prompt_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    stops INTEGER NOT NULL DEFAULT 1,
    started_at TEXT,
    ended_at TEXT,
    cwd TEXT,
    project TEXT,
    git_branch TEXT,
    ask TEXT,
    summary TEXT,
    files_written TEXT NOT NULL DEFAULT '[]',
    files_read TEXT NOT NULL DEFAULT '[]',
    tools TEXT NOT NULL DEFAULT '{}',
    commands TEXT NOT NULL DEFAULT '[]',
    decisions TEXT NOT NULL DEFAULT '[]',
    tool_errors TEXT NOT NULL DEFAULT '[]',
    subagents TEXT NOT NULL DEFAULT '[]',
    transcript_path TEXT,
    byte_start INTEGER,
    byte_end INTEGER,
    claude_version TEXT
)"""
    )
    conn.execute("CREATE INDEX turns_session ON turns (session_id, started_at)")
    conn.execute("CREATE INDEX turns_project ON turns (project, started_at)")
    conn.execute("CREATE INDEX turns_started ON turns (started_at)")


@MIGRATIONS
def m002_ab_recall(conn: sqlite3.Connection) -> None:
    """A/B telemetry of `brain ask --ab`: dense vs dense+graph, one row per query."""
    conn.execute(
        """
CREATE TABLE ab_recall (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    source TEXT NOT NULL,
    vault TEXT NOT NULL,
    query TEXT NOT NULL,
    mode_a TEXT NOT NULL,
    mode_b TEXT NOT NULL,
    k INTEGER NOT NULL,
    gate_entity INTEGER NOT NULL,
    gate_reason TEXT NOT NULL,
    candidates_added INTEGER NOT NULL,
    new_in_top_k INTEGER NOT NULL,
    via_graph_in_top_k INTEGER NOT NULL,
    via_graph_titles TEXT NOT NULL DEFAULT '[]',
    top_a TEXT NOT NULL DEFAULT '[]',
    top_b TEXT NOT NULL DEFAULT '[]',
    reranked INTEGER NOT NULL DEFAULT 0,
    latency_ms TEXT NOT NULL DEFAULT '{}',
    warnings TEXT NOT NULL DEFAULT '[]'
)"""
    )
    conn.execute("CREATE INDEX ab_recall_created ON ab_recall (created_at)")
    conn.execute("CREATE INDEX ab_recall_source ON ab_recall (source, created_at)")


@MIGRATIONS
def m003_recalls(conn: sqlite3.Connection) -> None:
    """The prompt hook's ledger: one row per prompt, what it was shown or why nothing."""
    conn.execute(
        """
CREATE TABLE recalls (
    id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    session_id TEXT,
    prompt_id TEXT,
    cwd TEXT,
    vault TEXT,
    prompt TEXT NOT NULL,
    prompt_chars INTEGER NOT NULL,
    reason TEXT,
    detail TEXT,
    mode TEXT,
    model TEXT,
    min_cosine REAL,
    results INTEGER,
    above INTEGER,
    notes TEXT NOT NULL DEFAULT '[]',
    shown INTEGER NOT NULL DEFAULT 0,
    chars INTEGER NOT NULL DEFAULT 0,
    server_ms REAL,
    latency_ms REAL NOT NULL
)"""
    )
    conn.execute("CREATE INDEX recalls_session ON recalls (session_id, created_at)")
    conn.execute("CREATE INDEX recalls_created ON recalls (created_at)")


@MIGRATIONS
def m004_turns_partial(conn: sqlite3.Connection) -> None:
    """turns.partial: 1 for a row the Stop hook wrote from its input alone, out of time to read
    the transcript; a later full row of the same turn replaces it."""
    conn.execute("ALTER TABLE turns ADD COLUMN partial INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE INDEX turns_partial ON turns (session_id) WHERE partial = 1")


# The characters Python's str.split() splits on: a prompt's first word ends at any of them.
_SPACE = "char(9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, \
8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288)"


def _forgets(row: str) -> str:
    """SQL: the recalls ``row`` (NEW, or a table alias) is a /compact or /clear, which takes what
    was shown out of the conversation (autorecall.store.FORGETTING)."""
    first = f"(ltrim({row}.prompt, {_SPACE}) || ' ')"
    return (
        f"{row}.reason = 'slash-command' AND "
        f"({first} GLOB '/compact[' || {_SPACE} || ']*' OR {first} GLOB '/clear[' || {_SPACE} || ']*')"
    )


def _shown_notes(row: str, table: str = "") -> str:
    """SQL: (session_id, path, recall_id, hash, chunk_id) of each note the recalls ``row`` showed
    (``table``: ``recalls AS r, `` to read rows of the table, nothing for a trigger's NEW)."""
    return (
        f"SELECT {row}.session_id, json_extract(n.value, '$.path'), {row}.id, json_extract(n.value, '$.hash'), "
        f"json_extract(n.value, '$.chunk_id') "
        f"FROM {table}json_each(CASE WHEN {row}.shown > 0 AND json_valid({row}.notes) THEN {row}.notes END) AS n "
        f"WHERE {row}.session_id IS NOT NULL AND n.type = 'object' AND json_type(n.value, '$.path') = 'text'"
    )


_UPSERT_SHOWN = (
    "ON CONFLICT (session_id, path) DO UPDATE SET recall_id = excluded.recall_id, hash = excluded.hash, "
    "chunk_id = excluded.chunk_id"
)


@MIGRATIONS
def m005_recall_shown(conn: sqlite3.Connection) -> None:
    """recall_shown: per session, each note the prompt hook showed since the session's last /compact
    or /clear, its latest showing; kept by triggers on recalls, so the hook looks up a prompt's
    candidates by key instead of reading every row of the session (5,000 prompts: 80 ms a prompt).

    Filled from the sessions with a prompt in the last two days, not from every row ever (a
    hook may be what applies this, within its budget): an older session resumed may see a note
    it was shown before the upgrade once more."""
    conn.execute(
        """
CREATE TABLE recall_shown (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    recall_id INTEGER NOT NULL,
    hash TEXT,
    chunk_id INTEGER,
    PRIMARY KEY (session_id, path)
) WITHOUT ROWID"""
    )
    conn.execute("CREATE INDEX recall_shown_recall ON recall_shown (recall_id)")
    conn.execute(
        "CREATE TRIGGER recalls_forget AFTER INSERT ON recalls "
        f"WHEN {_forgets('NEW')} BEGIN DELETE FROM recall_shown WHERE session_id = NEW.session_id; END"
    )
    conn.execute(
        "CREATE TRIGGER recalls_shown AFTER INSERT ON recalls WHEN NEW.shown > 0 BEGIN "
        f"INSERT INTO recall_shown (session_id, path, recall_id, hash, chunk_id) {_shown_notes('NEW')} "
        f"{_UPSERT_SHOWN}; END"
    )
    # Rows are changed or deleted by hand or by `brain prune --ledger` only: what they showed no
    # longer counts (a note may be shown once more).
    conn.execute(
        "CREATE TRIGGER recalls_shown_changed AFTER UPDATE OF session_id, notes, shown ON recalls "
        "BEGIN DELETE FROM recall_shown WHERE recall_id = OLD.id; END"
    )
    conn.execute(
        "CREATE TRIGGER recalls_shown_deleted AFTER DELETE ON recalls WHEN OLD.shown > 0 "
        "BEGIN DELETE FROM recall_shown WHERE recall_id = OLD.id; END"
    )
    # Each through its index, named: the planner's own choice read every row of recalls (1.3 s at
    # 1,000,000 prompts, past the prompt hook's budget).
    live = (
        "SELECT DISTINCT session_id FROM recalls INDEXED BY recalls_created "
        "WHERE created_at >= strftime('%Y-%m-%dT%H:%M:%S', 'now', '-2 days') AND session_id IS NOT NULL"
    )
    conn.execute(
        f"WITH live AS ({live}), "
        f"forgot AS (SELECT r.session_id, max(r.id) AS id FROM recalls AS r WHERE r.session_id IN live "
        f"AND {_forgets('r')} GROUP BY r.session_id) "
        f"INSERT INTO recall_shown (session_id, path, recall_id, hash, chunk_id) "
        f"SELECT * FROM ("
        f"{_shown_notes('r', 'recalls AS r INDEXED BY recalls_session LEFT JOIN forgot AS f USING (session_id), ')} "
        "AND r.session_id IN live AND r.id > COALESCE(f.id, 0) "
        "ORDER BY r.created_at, r.id) WHERE true "  # the latest showing last, as the hook read them
        f"{_UPSERT_SHOWN}"
    )


@MIGRATIONS
def m006_kept_aside_recorded(conn: sqlite3.Connection) -> None:
    """kept_aside_recorded: the id of each row kept aside by a hook (``ledger.deferred``) that a
    catch-up recorded, written in the same transaction as the row, so a catch-up killed between
    its commit and removing the files skips those rows next time instead of recording them again."""
    conn.execute("CREATE TABLE kept_aside_recorded (id TEXT PRIMARY KEY, recorded_at TEXT NOT NULL) WITHOUT ROWID")


@MIGRATIONS
def m007_ledger_prunes(conn: sqlite3.Connection) -> None:
    """ledger_prunes: the moment each `brain prune --ledger --before` cut at (``ledger.prune``).
    A row a hook kept aside (``ledger.deferred``) from before it that a catch-up records after the
    prune read what to drop is dropped by that catch-up instead: recorded, it was back in the
    ledger the prune had cut."""
    conn.execute("CREATE TABLE ledger_prunes (id INTEGER PRIMARY KEY, cut TEXT NOT NULL, pruned_at TEXT NOT NULL)")
