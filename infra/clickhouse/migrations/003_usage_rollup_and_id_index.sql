-- Finds stored event ids quickly: the consumer asks before inserting an event id it has not claimed.
ALTER TABLE {{database}}.usage_events ADD INDEX IF NOT EXISTS idx_usage_events_id id TYPE bloom_filter(0.001) GRANULARITY 4;

-- Costs per user in 15-minute buckets: every time zone's offset is a whole number of quarter hours
-- (+05:30, +05:45), so days, weeks and months of any zone are exact unions of these buckets.
-- Fed by usage_rollup_15m_mv on every insert into usage_events; a replayed
-- insert (same deduplication token) is dropped here too (deduplicate_blocks_in_dependent_materialized_views).
CREATE TABLE IF NOT EXISTS {{database}}.usage_rollup_15m
(
    user_id String,
    bucket DateTime('UTC') COMMENT 'start of the quarter hour (UTC) the usage happened in',
    agent_id String,
    provider LowCardinality(String),
    service LowCardinality(String),
    event_type LowCardinality(String),
    unit LowCardinality(String),
    currency LowCardinality(String),
    cost Decimal(38, 18),
    quantity Decimal(38, 18),
    reported_cost Decimal(38, 18) COMMENT 'sum of the totals the workers reported, for reconciliation',
    events UInt64,
    unpriced_events UInt64
)
ENGINE = SummingMergeTree((cost, quantity, reported_cost, events, unpriced_events))
ORDER BY (user_id, bucket, agent_id, provider, service, event_type, unit, currency)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_rollup_15m_mv TO {{database}}.usage_rollup_15m AS
SELECT
    user_id,
    toStartOfFifteenMinutes(occurred_at) AS bucket,
    agent_id, provider, service, event_type, unit, currency,
    sum(cost) AS cost,
    sum(quantity) AS quantity,
    sum(ifNull(reported_total_cost, toDecimal128(0, 18))) AS reported_cost,
    count() AS events,
    countIf(cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, bucket, agent_id, provider, service, event_type, unit, currency;

ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS input_tokens Nullable(UInt64) COMMENT 'exact input tokens, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS output_tokens Nullable(UInt64) COMMENT 'exact output tokens, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS needs_reconciliation Bool DEFAULT false COMMENT 'the reported total differs from the computed cost by more than 1%';
