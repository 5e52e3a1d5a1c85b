-- The sessions again, ordered by tenant: the reads that name a user (the session list, the
-- summary's cost of the calls still ACTIVE) search that user's key range instead of reading every
-- tenant's sessions through sessions_current's FINAL. Fed by a materialized view on sessions, so
-- a replayed insert (same deduplication token) is dropped here too; the highest version of a
-- session wins, as in sessions. The backfill copies every stored version with no "still empty"
-- guard: a session the view already copied is the same row twice, which the engine collapses and
-- every reader (FINAL, argMax) sees once, where a guard would skip the whole backfill as soon as one
-- session was stored between the view and the copy.
CREATE TABLE IF NOT EXISTS {{database}}.sessions_by_user AS {{database}}.sessions
ENGINE = ReplacingMergeTree(version)
ORDER BY (user_id, id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.sessions_by_user_mv TO {{database}}.sessions_by_user AS
SELECT * FROM {{database}}.sessions;

INSERT INTO {{database}}.sessions_by_user
SELECT * FROM {{database}}.sessions;
