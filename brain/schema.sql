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
-- partial: 1 when the hook ran out of time before it had read the turn: the row holds what
--   its input said (session, cwd, the final text) and byte_end = the transcript's size then;
--   a later full row of the same turn takes its place (and its stops).
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
, partial INTEGER NOT NULL DEFAULT 0);
CREATE INDEX turns_session ON turns (session_id, started_at);
CREATE INDEX turns_project ON turns (project, started_at);
CREATE INDEX turns_started ON turns (started_at);
CREATE INDEX turns_partial ON turns (session_id) WHERE partial = 1;

-- ----- ab_recall (issue 3: A/B telemetry) -----

-- One row per `brain ask --ab` (and per query of `brain eval --ab-log SOURCE`): two modes run
-- side by side (by default mode_a hybrid, mode_b hybrid+ppr, each +rerank with a reranker; rows
-- from before that default keep theirs, vector and graph) and what B changed.
-- created_at: UTC in SQLite's format ('YYYY-MM-DD HH:MM:SS'), so datetime('now', '-7 days') works.
-- source: a label (--source / BRAIN_AB_SOURCE, default 'work'); vault: the vault's absolute path.
-- gate_entity/gate_reason: the entity gate's decision on the query (recorded, not applied to B).
-- candidates_added: notes B's graph added to the pool (the hop's; in a fused mode those only the
--   lanes reading the links found: ppr, anchor_dense, anchor_lex, bridge); new_in_top_k: notes
--   in B's top k that A's top k lacks; via_graph_in_top_k and via_graph_titles (JSON list): those
--   of them that came via the graph (the hop's, or found by a lane reading the links that A does
--   not run; telemetry.via_graph). top_a, top_b: JSON lists of the top k paths.
-- mode_a, mode_b: the modes that ran (a stage that fell back is not in it: graph whose hop
--   failed is vector), so a row whose modes are equal compared nothing and is left out of the report.
-- latency_ms: JSON {"a": {stage: ms}, "b": {stage: ms}}; warnings: JSON list (fallbacks).
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
);
CREATE INDEX ab_recall_created ON ab_recall (created_at);
CREATE INDEX ab_recall_source ON ab_recall (source, created_at);

-- ----- recalls (issue 12: automatic recall on every prompt) -----

-- One row per prompt that reached the prompt hook (`brain hook prompt`, Claude Code's
-- UserPromptSubmit): the notes it added to the prompt, or the reason it added none.
-- created_at: ISO 8601 UTC with milliseconds, as in turns. session_id, prompt_id, cwd: from the
--   hook's input. vault: the vault's absolute path (with a note's path, the file the agent reads).
-- prompt: the prompt, secrets masked, then clipped (head and tail); prompt_chars: its full length.
-- reason: NULL when notes were shown; else one of slash-command, shell-command, acknowledgement,
--   too-short, no-vault, no-server, server-unavailable, timeout, server-error, no-results,
--   below-threshold, already-shown, no-room, error; detail: what the log says about it.
-- mode, model: the recall mode that ran (hybrid where the graph's stages fell back) and the
--   server's embedding model; min_cosine: the threshold used.
-- results: notes the server returned; above: of those, notes at or above min_cosine.
-- notes: JSON list of the notes shown, in order: [{"path", "title", "heading", "chunk_id",
--   "score" (fused), "dense_score" (cosine), "via" (the title it was reached from, or null),
--   "chars" (of the context it took), "hash" (SHA-256 of the file when shown: a note is shown
--   again in a session only when this changed)}]; shown: their number; chars: the whole context.
-- server_ms: the server's round trip; latency_ms: the hook's own time, start to output.
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
);
CREATE INDEX recalls_session ON recalls (session_id, created_at);
CREATE INDEX recalls_created ON recalls (created_at);

-- ----- recall_shown: what the prompt hook showed each session, kept by triggers on recalls -----

-- One row per session and note shown since the session's last /compact or /clear (those take
-- what was shown out of the conversation): the latest showing (recall_id, the recalls row), the
-- note's SHA-256 then (hash) and the chunk shown (chunk_id). The prompt hook looks up its
-- candidates here by key, whatever the session's length. path as stored in recalls.notes
-- (masked). A recalls row deleted (`brain prune --ledger`) or edited by hand no longer counts.
-- Filled by m005_recall_shown from the sessions with a prompt in the two days before it ran.
-- The space characters below are those Python's str.split() splits on.
CREATE TABLE recall_shown (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    recall_id INTEGER NOT NULL,
    hash TEXT,
    chunk_id INTEGER,
    PRIMARY KEY (session_id, path)
) WITHOUT ROWID;
CREATE INDEX recall_shown_recall ON recall_shown (recall_id);
CREATE TRIGGER recalls_forget AFTER INSERT ON recalls WHEN NEW.reason = 'slash-command' AND
  ((ltrim(NEW.prompt, char(9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198,
    8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288)) || ' ') GLOB '/compact[' || char(9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198,
    8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288) || ']*'
   OR (ltrim(NEW.prompt, char(9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198,
    8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288)) || ' ') GLOB '/clear[' || char(9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198,
    8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288) || ']*')
BEGIN DELETE FROM recall_shown WHERE session_id = NEW.session_id; END;
CREATE TRIGGER recalls_shown AFTER INSERT ON recalls WHEN NEW.shown > 0 BEGIN
  INSERT INTO recall_shown (session_id, path, recall_id, hash, chunk_id)
  SELECT NEW.session_id, json_extract(n.value, '$.path'), NEW.id, json_extract(n.value, '$.hash'),
         json_extract(n.value, '$.chunk_id')
  FROM json_each(CASE WHEN NEW.shown > 0 AND json_valid(NEW.notes) THEN NEW.notes END) AS n
  WHERE NEW.session_id IS NOT NULL AND n.type = 'object' AND json_type(n.value, '$.path') = 'text'
  ON CONFLICT (session_id, path) DO UPDATE SET recall_id = excluded.recall_id, hash = excluded.hash,
    chunk_id = excluded.chunk_id;
END;
CREATE TRIGGER recalls_shown_changed AFTER UPDATE OF session_id, notes, shown ON recalls
BEGIN DELETE FROM recall_shown WHERE recall_id = OLD.id; END;
CREATE TRIGGER recalls_shown_deleted AFTER DELETE ON recalls WHEN OLD.shown > 0
BEGIN DELETE FROM recall_shown WHERE recall_id = OLD.id; END;

-- ----- kept_aside_recorded: rows kept aside by a hook that a catch-up has recorded -----

-- A hook whose upgrade of this database did not fit its budget keeps its row in a file beside it
-- (brain.db.kept-aside/); the catch-up records the row and its id here in one transaction, then
-- removes the file, then the id. A catch-up killed before removing the files skips the rows whose
-- id is here next time instead of recording them again. Empty but for such a kill.
CREATE TABLE kept_aside_recorded (id TEXT PRIMARY KEY, recorded_at TEXT NOT NULL) WITHOUT ROWID;

-- ----- ledger_prunes: the moment each `brain prune --ledger --before` cut at -----------------

-- cut: WHEN, or the moment the prune read what to drop when WHEN is ahead of it (ISO 8601 UTC).
-- A catch-up drops the rows kept aside (above) recorded before the latest cut instead of
-- recording them: a hook that took its row's time before the prune and wrote its file after
-- the prune's own catch-up brought a turn the prune had cut back. One row a prune.
CREATE TABLE ledger_prunes (id INTEGER PRIMARY KEY, cut TEXT NOT NULL, pruned_at TEXT NOT NULL);

-- ===== index database (per vault) ===========================================

-- meta: key/value facts about the index: model, dim, query_prefix, passage_prefix, backend,
--   backend_version (what the vectors were made with; another model is refused, another
--   engine version warned about), fts_tokenizer (chunks_fts's tokenizer, absent = unicode61;
--   another is refused until --rebuild), names_version (bumped by the names_note_* triggers
--   whenever a note is added, deleted, renamed or its aliases change), resolver_key (the
--   names_version links were last resolved against: while equal, only pending links need
--   resolving), name_changes_from (the names_version the name_changes log starts from: while
--   it is resolver_key, the log holds every change of names since; absent, it holds nothing
--   and the next resolution after a change of names is a full one), vectors_version (moved by a random
--   step by every transaction that changes chunks; vectors.json beside the FAISS file records the version
--   it matches, and a mismatch makes readers rebuild it from chunks.vector), links_dirty
--   ('1' while links await re-resolution), index_id (random, one per database: the sidecar
--   records it too, so a rebuilt index never takes another's FAISS file), indexed_at (when
--   the last `brain index` run completed, Unix time), history_since (when this index began
--   keeping history), history_pruned_before (`brain prune --before`: the past before it is
--   incomplete), history_clock (the latest moment history recorded at), names_clock (the
--   latest moment a note came, went, or took another path or other aliases: a save within
--   BRAIN_VERSION_INTERVAL is kept, not folded, when names moved since the one it replaced
--   began and a link it dropped could have resolved otherwise meanwhile), postings_stamp (the random stamp of the postings.bin this database's state
--   was built into, written after the file is in place: another file is not read).
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- notes: one row per indexed markdown file. path: vault-relative, posix. title: frontmatter
--   title, else the file stem. aliases, tags: JSON lists (tags from frontmatter and inline
--   #tags). date: ISO date from a frontmatter date field (date, created, updated, ...), else
--   the file's mtime. frontmatter: JSON. size, mtime_ns: the stat shortcut; hash: SHA-256 of
--   the bytes (decides changed vs touched, and detects renames). warnings: JSON list of what
--   was done about bad input (invalid UTF-8, broken YAML, NUL bytes, ...). path_key,
--   name_key: the casefolded path and file name without .md that link resolution files the
--   note under (links.note_keys; m010_name_keys), to find a link's candidate notes.
--   search_title: the title as the index searches it (text.for_search: no soft hyphen, no
--   invisible character splitting a word, no tag characters) where that differs, else NULL
--   (m021_search_text; chunks.search_heading, search_text and chunk_history's alike).
CREATE TABLE notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT '[]',
    tags TEXT NOT NULL DEFAULT '[]',
    date TEXT,
    frontmatter TEXT NOT NULL DEFAULT '{}',
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    warnings TEXT NOT NULL DEFAULT '[]',
    indexed_at REAL NOT NULL
, path_key TEXT, name_key TEXT, search_title TEXT);
CREATE INDEX notes_hash ON notes (hash);
CREATE INDEX notes_path_key ON notes (path_key);
CREATE INDEX notes_name_key ON notes (name_key);

-- aliases, tags: the same lists as rows, for lookups (link resolution, the entity gate).
--   aliases.key: the alias as link resolution files it (links.alias_key).
CREATE TABLE aliases (
    note_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    alias TEXT NOT NULL
, key TEXT);
CREATE INDEX aliases_note ON aliases (note_id);
CREATE INDEX aliases_alias ON aliases (alias COLLATE NOCASE);
CREATE INDEX aliases_key ON aliases (key);
CREATE TABLE tags (
    note_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    tag TEXT NOT NULL
);
CREATE INDEX tags_note ON tags (note_id);
CREATE INDEX tags_tag ON tags (tag);

-- chunks: heading-aware pieces of a note. id is the FAISS id. heading: the heading path
--   joined by " > ". text: the chunk as shown (the embedded text adds title and heading).
--   vector: float16 little-endian (m009_compact_chunks; float32 before), L2-normalised: the
--   truth the FAISS file is built from (read back as float32).
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    vector BLOB NOT NULL
, search_heading TEXT, search_text TEXT);
CREATE INDEX chunks_note ON chunks (note_id, ordinal);

-- links: every link as written (target, kind: wikilink | embed | markdown | property, anchor: heading
--   or ^block, display: alias or link text, line: 0 for a property's) and its resolution: status resolved
--   (target_id set), dangling, attachment (a non-note file), or pending (awaiting the
--   resolution pass at the end of an index run). Outgoing: WHERE source_id = ?;
--   backlinks: WHERE target_id = ?. stem_hash: CRC-32 (signed, 4 bytes) of the stem every
--   key the link is looked up by ends in (links.link_stem: its file name, casefolded, without
--   .md); after a change of names, the links under the changed keys' stems are the ones
--   resolved again (m012_name_changes). NULL until set (written by a brain from before m012).
CREATE TABLE links (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    target_id INTEGER REFERENCES notes (id) ON DELETE SET NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    anchor TEXT,
    display TEXT,
    line INTEGER,
    status TEXT NOT NULL DEFAULT 'pending'
, stem_hash INTEGER);
CREATE INDEX links_source ON links (source_id);
CREATE INDEX links_target ON links (target_id);
CREATE INDEX links_stem ON links (stem_hash);
-- links_unresolved: the links not resolved (pending, dangling, attachment), few beside the
--   resolved ones: pending links are found and the links counted by status without reading every
--   link (m014_links_unresolved).
CREATE INDEX links_unresolved ON links (status) WHERE status <> 'resolved';

-- skipped: files the last walk left out, with the reason (dot-folder, dot-file,
--   sync-conflict, not-downloaded, brainignore, too-large, binary, unreadable, symlink-loop,
--   broken-symlink, bad-file-name) and a detail. size, mtime_ns: the file's stat when it was skipped for its
--   content (too-large, binary, unreadable); while they hold, it is not read again nor
--   counted as pending (NULL for the other reasons). Added by m004_skipped_stat, hence the
--   layout ALTER TABLE leaves.
CREATE TABLE skipped (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
, size INTEGER, mtime_ns INTEGER);

-- chunks_fts: the lexical lane (BM25), FTS5 over each chunk's note title, heading and text;
--   rowid = chunks.id. An external-content index (m009_compact_chunks): it keeps only the
--   index, and reads its content, when it needs it, from the view chunks_fts_source.
--   IndexStore.replace_chunks, the one writer of chunks, adds a note's new chunks (from the
--   view: folding ё into е on the way in, and reading each searched form (search_title,
--   search_heading, search_text) where there is one; queries are folded alike), or the indexer adds a
--   whole batch's in one statement (add_to_lexical, before it commits); triggers keep it in step
--   with deletes and note renames, handing FTS5 the old values; a note's chunks are deleted
--   before the note (notes_delete_chunks), so that the delete can still read its title. BRAIN_FTS_TOKENIZER=trigram recreates it, when the index is empty or rebuilt, with
--   tokenize = 'trigram' (meta fts_tokenizer). A note's title is in its first 64 chunks' rows only
--   ('' in the others, whose heading paths leave out a first heading repeating it): FTS5 counts
--   a term's documents by row, and a note of hundreds of chunks made its title's words common
--   (m022_title_in_first_chunks; schema.TITLED_CHUNKS, lexical_title, lexical_heading).
CREATE VIEW chunks_fts_source AS
    SELECT c.id AS id, CASE WHEN c.ordinal < 64 THEN replace(replace(coalesce(n.search_title, n.title), 'ё', 'е'), 'Ё', 'Е') ELSE '' END AS title,
           CASE WHEN c.ordinal < 64 OR replace(replace(coalesce(n.search_title, n.title), 'ё', 'е'), 'Ё', 'Е') = '' THEN replace(replace(coalesce(c.search_heading, c.heading), 'ё', 'е'), 'Ё', 'Е') WHEN replace(replace(coalesce(c.search_heading, c.heading), 'ё', 'е'), 'Ё', 'Е') = replace(replace(coalesce(n.search_title, n.title), 'ё', 'е'), 'Ё', 'Е') THEN '' WHEN substr(replace(replace(coalesce(c.search_heading, c.heading), 'ё', 'е'), 'Ё', 'Е'), 1, length(replace(replace(coalesce(n.search_title, n.title), 'ё', 'е'), 'Ё', 'Е')) + 3) = replace(replace(coalesce(n.search_title, n.title), 'ё', 'е'), 'Ё', 'Е') || ' > ' THEN substr(replace(replace(coalesce(c.search_heading, c.heading), 'ё', 'е'), 'Ё', 'Е'), length(replace(replace(coalesce(n.search_title, n.title), 'ё', 'е'), 'Ё', 'Е')) + 4) ELSE replace(replace(coalesce(c.search_heading, c.heading), 'ё', 'е'), 'Ё', 'Е') END AS heading, replace(replace(coalesce(c.search_text, c.text), 'ё', 'е'), 'Ё', 'Е') AS text
    FROM chunks c JOIN notes n ON n.id = c.note_id;
CREATE VIRTUAL TABLE chunks_fts USING fts5 (title, heading, text, content = 'chunks_fts_source', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
    VALUES (
        'delete',
        old.id,
        CASE WHEN old.ordinal < 64 THEN replace(replace((SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id), 'ё', 'е'), 'Ё', 'Е') ELSE '' END,
        CASE WHEN old.ordinal < 64 OR replace(replace((SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id), 'ё', 'е'), 'Ё', 'Е') = '' THEN replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е') WHEN replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е') = replace(replace((SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id), 'ё', 'е'), 'Ё', 'Е') THEN '' WHEN substr(replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е'), 1, length(replace(replace((SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id), 'ё', 'е'), 'Ё', 'Е')) + 3) = replace(replace((SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id), 'ё', 'е'), 'Ё', 'Е') || ' > ' THEN substr(replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е'), length(replace(replace((SELECT coalesce(search_title, title) FROM notes WHERE id = old.note_id), 'ё', 'е'), 'Ё', 'Е')) + 4) ELSE replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е') END,
        replace(replace(coalesce(old.search_text, old.text), 'ё', 'е'), 'Ё', 'Е')
    );
END;
-- A changed title (as searched) re-indexes the note's chunks under it; an edit of the words alone does not
-- touch them here (m013_fts_title_when_changed): its old chunks leave through chunks_fts_delete.
CREATE TRIGGER chunks_fts_title AFTER UPDATE OF title, search_title ON notes
WHEN coalesce(old.search_title, old.title) IS NOT coalesce(new.search_title, new.title) BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, title, heading, text)
        SELECT 'delete', id, CASE WHEN ordinal < 64 THEN replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е') ELSE '' END,
               CASE WHEN ordinal < 64 OR replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е') = '' THEN replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') WHEN replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') = replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е') THEN '' WHEN substr(replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е'), 1, length(replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е')) + 3) = replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е') || ' > ' THEN substr(replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е'), length(replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е')) + 4) ELSE replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') END,
               replace(replace(coalesce(search_text, text), 'ё', 'е'), 'Ё', 'Е')
        FROM chunks WHERE note_id = old.id;
    INSERT INTO chunks_fts (rowid, title, heading, text)
        SELECT id, CASE WHEN ordinal < 64 THEN replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е') ELSE '' END,
               CASE WHEN ordinal < 64 OR replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е') = '' THEN replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') WHEN replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') = replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е') THEN '' WHEN substr(replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е'), 1, length(replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е')) + 3) = replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е') || ' > ' THEN substr(replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е'), length(replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е')) + 4) ELSE replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') END,
               replace(replace(coalesce(search_text, text), 'ё', 'е'), 'Ё', 'Е')
        FROM chunks WHERE note_id = new.id;
END;
CREATE TRIGGER notes_delete_chunks BEFORE DELETE ON notes BEGIN
    DELETE FROM chunks WHERE note_id = old.id;
END;

-- ----- history (issue 15: memory over time) -----
-- The present above is what recall reads; history sits beside it and never slows it down.
-- Times recorded_from / recorded_to are Unix seconds (the index's own clock: when brain saw
-- a state, not when the file was written); recorded_to NULL means "still current".
-- Identity: note_id is the note's id for good. notes.id is AUTOINCREMENT (never reused); a
--   rename keeps it; a deleted note's versions keep it, and a file that later holds bytes one
--   of its versions had (unless empty), or appears where it last was, continues it (restore).
-- A crash between two transactions leaves history in step: each change and its history rows
--   are written in one transaction, so every open edge has a current version of its note.

-- note_versions: every content of a note the index saw. At most one current version per note
--   (recorded_to NULL, the partial unique index), and it is the notes row: same hash, path.
--   event: how it began (created, changed, renamed, restored; recorded: already indexed when
--   history began, m007_history); ended: how it stopped (changed, renamed, deleted).
--   date: the note's date as recall shows it; world_date, valid_from, valid_to, status: world
--   time as the frontmatter states it (date/created; valid_from; valid_to; status), NULL where
--   it says nothing. content: the file's bytes, zlib-compressed (NULL for versions recorded
--   before history began); the current version's against the note's chunk texts as zlib's
--   preset dictionary (FDICT set: brain/index/version_text.py), a past version's plain or, from
--   version_text.SEGMENTS_FROM bytes on, a 0x00 byte and its text_segments ids in order
--   (version_text.segment_list).
CREATE TABLE note_versions (
    id INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    title TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT '[]',
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    date TEXT,
    frontmatter TEXT NOT NULL DEFAULT '{}',
    world_date TEXT,
    valid_from TEXT,
    valid_to TEXT,
    status TEXT,
    content BLOB,
    event TEXT NOT NULL,
    recorded_from REAL NOT NULL,
    recorded_to REAL,
    ended TEXT
);
CREATE UNIQUE INDEX note_versions_current ON note_versions (note_id) WHERE recorded_to IS NULL;
CREATE INDEX note_versions_note ON note_versions (note_id, recorded_from);
CREATE INDEX note_versions_span ON note_versions (recorded_from, recorded_to);
CREATE INDEX note_versions_path ON note_versions (path);
CREATE INDEX note_versions_hash ON note_versions (hash);

-- text_segments: the pieces of a note's long past texts, each stored once per note however many
--   of its versions list it (a note that grows keeps each piece once, not once per version).
--   A text is cut at line ends chosen by its own bytes (version_text.split_segments), ~2 KB a
--   piece. key: blake2b-128 of the bytes, unique per note. The bytes are in text_packs: pack_id,
--   and where they start there and how many (in the pack's bytes once inflated). Dropped when no
--   version of the note lists it any more (pruning, a fold, BRAIN_KEEP_VERSIONS, a revert).
CREATE TABLE text_segments (
    id INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL,
    key BLOB NOT NULL,
    pack_id INTEGER NOT NULL,
    start INTEGER NOT NULL,
    size INTEGER NOT NULL
);
CREATE UNIQUE INDEX text_segments_key ON text_segments (note_id, key);

-- text_packs: the segments a past text brought that its note had not, one after another,
--   zlib-compressed as one (so a text's first past version takes what it took whole). A pack
--   holds only segments some version lists: one that loses some is packed again, one that loses
--   all goes.
CREATE TABLE text_packs (
    id INTEGER PRIMARY KEY,
    note_id INTEGER NOT NULL,
    data BLOB NOT NULL
);

-- chunk_history: the chunks, with their vectors, of the note's contents that some version holds
--   and that are not its current content (the current one's chunks are in chunks), each stored
--   once per note however many of those contents hold it (a note that only grows keeps each
--   chunk once, not once per version). key: past_chunk_key(title, heading, text) (and
--   past_chunk_variant_key for one embedded otherwise, as with BRAIN_CHUNKING=…+path), unique per
--   note. Kept when a note changes or is deleted; dropped when no past content holds it any
--   more (the content became current again, or pruning). title: the version's title (for
--   BM25). vector: float16, as chunks.vector. Ids are never reused.
CREATE TABLE chunk_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    note_id INTEGER NOT NULL,
    key BLOB NOT NULL,
    title TEXT NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    vector BLOB NOT NULL
, search_title TEXT, search_heading TEXT, search_text TEXT);
CREATE UNIQUE INDEX chunk_history_key ON chunk_history (note_id, key);

-- version_chunks: each past (note_id, hash) content's chunks: chunk_ids, their chunk_history
--   ids in order, one row per content rather than one per chunk (schema.pack_ids: each id's
--   difference from the one before, 8-byte little-endian integers, zlib-compressed).
CREATE TABLE version_chunks (
    note_id INTEGER NOT NULL,
    hash TEXT NOT NULL,
    chunk_ids BLOB NOT NULL,
    PRIMARY KEY (note_id, hash)
) WITHOUT ROWID;

-- chunk_history_fts: BM25 over past chunks for `brain ask --as-of`; an external-content FTS5
--   table over the view chunk_history_fts_source (each past chunk's searched form where it has
--   one, ё folded into е as chunks_fts folds it: m021_search_text; the text is stored once, in
--   chunk_history), kept in step by triggers.
CREATE VIEW chunk_history_fts_source AS
    SELECT id, replace(replace(coalesce(search_title, title), 'ё', 'е'), 'Ё', 'Е') AS title, replace(replace(coalesce(search_heading, heading), 'ё', 'е'), 'Ё', 'Е') AS heading, replace(replace(coalesce(search_text, text), 'ё', 'е'), 'Ё', 'Е') AS text
    FROM chunk_history;
CREATE VIRTUAL TABLE chunk_history_fts USING fts5 (
    title, heading, text,
    content = 'chunk_history_fts_source', content_rowid = 'id',
    tokenize = "unicode61 remove_diacritics 2"
);
CREATE TRIGGER chunk_history_fts_insert AFTER INSERT ON chunk_history BEGIN
    INSERT INTO chunk_history_fts (rowid, title, heading, text)
    VALUES (new.id, replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(new.search_heading, new.heading), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(new.search_text, new.text), 'ё', 'е'), 'Ё', 'Е'));
END;
CREATE TRIGGER chunk_history_fts_delete AFTER DELETE ON chunk_history BEGIN
    INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
    VALUES ('delete', old.id, replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(old.search_text, old.text), 'ё', 'е'), 'Ё', 'Е'));
END;
CREATE TRIGGER chunk_history_fts_update
AFTER UPDATE OF id, title, heading, text, search_title, search_heading, search_text ON chunk_history BEGIN
    INSERT INTO chunk_history_fts (chunk_history_fts, rowid, title, heading, text)
    VALUES ('delete', old.id, replace(replace(coalesce(old.search_title, old.title), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(old.search_heading, old.heading), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(old.search_text, old.text), 'ё', 'е'), 'Ё', 'Е'));
    INSERT INTO chunk_history_fts (rowid, title, heading, text)
    VALUES (new.id, replace(replace(coalesce(new.search_title, new.title), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(new.search_heading, new.heading), 'ё', 'е'), 'Ё', 'Е'), replace(replace(coalesce(new.search_text, new.text), 'ё', 'е'), 'Ё', 'Е'));
END;

-- link_history: every link a note writes, as an edge (source note, target as written, kind,
--   count: how many times the note writes it) with a recorded span. An edge opens when a
--   version starts writing the link and closes when a version stops (or the note is deleted);
--   it is never deleted, except by pruning. target_id/status: its resolution (pending until the
--   end of the run resolves it); a link that comes to resolve elsewhere (its target renamed,
--   deleted or created) closes and reopens with the new target. world_date, valid_from,
--   valid_to, note_status: the source note's world time when the edge was recorded (a change of
--   them reopens the edge). Edges between notes at time T:
--   WHERE status = 'resolved' AND recorded_from <= T AND (recorded_to IS NULL OR recorded_to > T).
CREATE TABLE link_history (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 1,
    target_id INTEGER,
    status TEXT NOT NULL DEFAULT 'pending',
    world_date TEXT,
    valid_from TEXT,
    valid_to TEXT,
    note_status TEXT,
    recorded_from REAL NOT NULL,
    recorded_to REAL
);
CREATE INDEX link_history_source ON link_history (source_id, recorded_from);
CREATE INDEX link_history_target ON link_history (target_id, recorded_from);
CREATE INDEX link_history_span ON link_history (recorded_from, recorded_to);
CREATE INDEX link_history_open ON link_history (source_id, target, kind) WHERE recorded_to IS NULL;
CREATE INDEX link_history_pending ON link_history (source_id) WHERE status = 'pending';

-- scan_snapshot: one row, a compact copy of every note's path, id, size and mtime_ns (what
--   the walk comparing the vault with the index needs: one blob instead of 100,000 rows).
--   scan_snapshot_log: the notes changed since it was stored, (old id, old path) of a row
--   updated or deleted, (new id, NULL) of a row inserted or updated, written by the triggers
--   in the same transaction (m011_scan_snapshot_log). The snapshot without the logged ids,
--   plus their rows, is the notes as they are. Past 2,000 log rows both are dropped; the
--   next reader that needs the snapshot stores a new one and empties the log.
CREATE TABLE scan_snapshot (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    data BLOB NOT NULL
);
CREATE TABLE scan_snapshot_log (
    note_id INTEGER NOT NULL,
    path TEXT
);
CREATE TRIGGER scan_snapshot_note_insert AFTER INSERT ON notes
WHEN EXISTS (SELECT 1 FROM scan_snapshot) BEGIN
    INSERT INTO scan_snapshot_log (note_id, path) VALUES (new.id, NULL);
END;
CREATE TRIGGER scan_snapshot_note_update AFTER UPDATE OF id, path, size, mtime_ns ON notes
WHEN EXISTS (SELECT 1 FROM scan_snapshot) BEGIN
    INSERT INTO scan_snapshot_log (note_id, path) VALUES (old.id, old.path), (new.id, NULL);
END;
CREATE TRIGGER scan_snapshot_note_delete AFTER DELETE ON notes
WHEN EXISTS (SELECT 1 FROM scan_snapshot) BEGIN
    INSERT INTO scan_snapshot_log (note_id, path) VALUES (old.id, old.path);
END;
CREATE TRIGGER scan_snapshot_log_full AFTER INSERT ON scan_snapshot_log
WHEN new.rowid > 2000 BEGIN
    DELETE FROM scan_snapshot;
    DELETE FROM scan_snapshot_log;
END;

-- names_note_*: bump meta.names_version in the transaction that changes what link
--   resolution depends on (m010_name_keys). notes.aliases stands for the aliases rows,
--   which IndexStore.write_note rewrites with every note from the same list. The step is
--   random (m016_names_version_random_step): a restored backup renamed otherwise never
--   reaches the version a recall-cache.npz of the index it replaced was built at.
CREATE TRIGGER names_note_insert AFTER INSERT ON notes BEGIN
    INSERT INTO meta (key, value) VALUES ('names_version', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 + abs(random() % 1073741824);
END;
CREATE TRIGGER names_note_delete AFTER DELETE ON notes BEGIN
    INSERT INTO meta (key, value) VALUES ('names_version', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 + abs(random() % 1073741824);
END;
CREATE TRIGGER names_note_update AFTER UPDATE OF id, path, aliases ON notes
WHEN old.id IS NOT new.id OR old.path IS NOT new.path OR old.aliases IS NOT new.aliases BEGIN
    INSERT INTO meta (key, value) VALUES ('names_version', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1 + abs(random() % 1073741824);
END;

-- name_changes: the keys notes came, went or moved under since the links were last resolved
--   (m012_name_changes), written by the name_changes_* triggers while meta.name_changes_from
--   is there: the old and new name_key of a note added, deleted, renamed or whose aliases
--   changed, the keys of its old aliases, and those of its new ones as their rows are written
--   after it. key NULL: not known (a note written without keys, by a brain from before m010).
--   Emptied by each resolution; past 2,000 rows it is emptied and the marker dropped, so the
--   next resolution is a full one.
CREATE TABLE name_changes (
    note_id INTEGER NOT NULL,
    key TEXT
);
CREATE INDEX name_changes_note ON name_changes (note_id);
CREATE TRIGGER name_changes_note_insert AFTER INSERT ON notes
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'name_changes_from') BEGIN
    INSERT INTO name_changes (note_id, key) VALUES (new.id, new.name_key);
END;
CREATE TRIGGER name_changes_note_update AFTER UPDATE OF id, path, aliases ON notes
WHEN (old.id IS NOT new.id OR old.path IS NOT new.path OR old.aliases IS NOT new.aliases)
AND EXISTS (SELECT 1 FROM meta WHERE key = 'name_changes_from') BEGIN
    INSERT INTO name_changes (note_id, key) VALUES (old.id, old.name_key), (new.id, new.name_key);
    INSERT INTO name_changes (note_id, key) SELECT note_id, key FROM aliases WHERE note_id = old.id;
END;
CREATE TRIGGER name_changes_note_delete BEFORE DELETE ON notes
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'name_changes_from') BEGIN
    INSERT INTO name_changes (note_id, key) VALUES (old.id, old.name_key);
    INSERT INTO name_changes (note_id, key) SELECT note_id, key FROM aliases WHERE note_id = old.id;
END;
CREATE TRIGGER name_changes_alias_insert AFTER INSERT ON aliases
WHEN EXISTS (SELECT 1 FROM meta WHERE key = 'name_changes_from')
AND EXISTS (SELECT 1 FROM name_changes WHERE note_id = new.note_id) BEGIN
    INSERT INTO name_changes (note_id, key) VALUES (new.note_id, new.key);
END;
CREATE TRIGGER name_changes_full AFTER INSERT ON name_changes
WHEN new.rowid > 2000 BEGIN
    DELETE FROM name_changes;
    DELETE FROM meta WHERE key = 'name_changes_from';
END;

-- postings_log: the chunks whose BM25 entries changed since the lexical postings were built
--   (m017_postings_log; index/postings.py): a chunk deleted, one whose words changed in place,
--   every chunk of a re-titled note. Chunks added since have ids past the base's last (never
--   reused). A query drops the base's entries of these chunks and scores them as they are; a
--   new base records the seq it was read at, and the rows up to it are deleted.
CREATE TABLE postings_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id INTEGER NOT NULL
);
CREATE TRIGGER postings_log_chunk_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO postings_log (chunk_id) VALUES (old.id);
END;
CREATE TRIGGER postings_log_chunk_update
AFTER UPDATE OF id, note_id, heading, text, search_heading, search_text ON chunks BEGIN
    INSERT INTO postings_log (chunk_id) VALUES (old.id);
    INSERT INTO postings_log (chunk_id) VALUES (new.id);
END;
CREATE TRIGGER postings_log_title AFTER UPDATE OF title, search_title ON notes
WHEN coalesce(old.search_title, old.title) IS NOT coalesce(new.search_title, new.title) BEGIN
    INSERT INTO postings_log (chunk_id) SELECT id FROM chunks WHERE note_id = new.id;
END;
