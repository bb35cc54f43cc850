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
