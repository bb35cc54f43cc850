-- brain: every table, as the migrations create them.
-- Two kinds of database:
--   1. the brain database (BRAIN_DB, default $BRAIN_HOME/brain.db): turn ledger and telemetry;
--   2. one index database per vault ($BRAIN_HOME/vaults/<name>-<hash>/index.db): notes, chunks,
--      links, metadata, beside the FAISS file vectors.faiss.
-- Both record applied migrations in _migrations (db, name, applied_at).
-- tests/test_schema.py checks that this file matches what the migrations build.

-- ===== brain database ======================================================

-- ----- turns (issue 4: turn ledger) -----

-- One row per Claude Code assistant turn, written by the Stop hook (`brain hook stop`).
-- turn_key: the turn's identity, "<session_id>:<prompt_id or uuid of the prompt line>"; a
--   repeated Stop for the same turn updates the row (and counts it in `stops`).
-- Times are ISO 8601 UTC text: created_at/updated_at when the hook wrote the row,
--   started_at/ended_at the timestamps of the prompt line and of the turn's last line.
-- project: basename of the git root of cwd (or of cwd); git_branch from the transcript.
-- ask: the last real user prompt (a slash command as "/cmd args"); summary: the
--   assistant's text of the turn, clipped. Secrets in every text field are masked.
-- JSON columns: files_written, files_read, commands, decisions (lists of strings);
--   tools ({"name": count}); tool_errors ([{"tool", "error"}]); subagents ([{"type",
--   "description", "agent_id", "status", "tool_uses", "duration_ms", "tokens", "tools",
--   "files_written"}]).
-- transcript_path, byte_start, byte_end: the bytes of the transcript the turn was read from.
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
);
CREATE INDEX turns_session ON turns (session_id, started_at);
CREATE INDEX turns_project ON turns (project, started_at);
CREATE INDEX turns_started ON turns (started_at);

-- ----- ab_recall (issue 3: A/B telemetry) -----

-- ===== index database (per vault) ===========================================
