-- Transcript turns of calls, one row per turn. The consumer inserts under the batch token, so a
-- replayed batch stores nothing twice; a record delivered again in another batch has the same id
-- and timestamp, and the table keeps one row of it (readers take FINAL).
CREATE TABLE IF NOT EXISTS {{database}}.transcripts
(
    session_id String,
    timestamp DateTime64(3, 'UTC') COMMENT 'when ingest accepted the turn; the order of a transcript',
    id UUID COMMENT 'the turn, made at ingest',
    speaker LowCardinality(String) COMMENT 'USER or AGENT',
    content String,
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY (session_id, timestamp, id)
SETTINGS non_replicated_deduplication_window = 10000;
