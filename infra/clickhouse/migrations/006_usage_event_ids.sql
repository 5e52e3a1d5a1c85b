-- Every stored event id, ordered by id: the consumer asks it which event ids of a batch are stored
-- already (a client retry whose Redis claim expired or was lost). Ordered by id, the lookup is a
-- primary-key search, where the bloom-filter index of 003 on usage_events (ordered by user and time)
-- scanned granules, slower still while a backlog was consumed. Fed by a materialized view on
-- usage_events, so a replayed insert (same deduplication token) is dropped here too. Backfilled once while still empty (see 005 on upgrades).
CREATE TABLE IF NOT EXISTS {{database}}.usage_event_ids
(
    id UUID COMMENT 'usage_events.id'
)
ENGINE = MergeTree
ORDER BY id
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_event_ids_mv TO {{database}}.usage_event_ids AS
SELECT id FROM {{database}}.usage_events;

INSERT INTO {{database}}.usage_event_ids
SELECT id FROM {{database}}.usage_events
WHERE (SELECT count() FROM {{database}}.usage_event_ids) = 0;
