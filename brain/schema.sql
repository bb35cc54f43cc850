-- brain: every table, as the migrations create them.
-- Two kinds of database:
--   1. the brain database (BRAIN_DB, default $BRAIN_HOME/brain.db): turn ledger and telemetry;
--   2. one index database per vault ($BRAIN_HOME/vaults/<name>-<hash>/index.db): notes, chunks,
--      links, metadata, beside the FAISS file vectors.faiss.
-- Both record applied migrations in _migrations (db, name, applied_at).
-- tests/test_schema.py checks that this file matches what the migrations build.

-- ===== brain database ======================================================

-- ----- turns (issue 4: turn ledger) -----

-- ----- ab_recall (issue 3: A/B telemetry) -----

-- ===== index database (per vault) ===========================================
