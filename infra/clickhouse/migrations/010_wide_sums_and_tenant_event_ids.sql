-- Sums wide enough for any volume, and event ids that deduplicate within their tenant only.
--
-- 1. Every rollup's money and quantity columns become Decimal(76, 18) (Decimal256): one event costs at
-- most 10^15 and measures at most 10^12 (USAGE_LIMITS, schemas/records/usage.ts), while Decimal(38, 18)
-- holds sums below 1.7 × 10^20 only, which 200 events of 10^18 each once wrapped to a negative total.
-- Decimal(76, 18) holds sums up to 5.7 × 10^57, over 10^42 events at the largest cost. The views sum
-- in the wide type too, so that one insert of many events cannot wrap before it reaches the table.
-- MODIFY COLUMN converts the stored parts in the background (reads see the new type at once); MODIFY
-- QUERY swaps a view's query without a moment in which an insert is not pushed to it.
ALTER TABLE {{database}}.usage_rollup_15m MODIFY COLUMN IF EXISTS cost Decimal(76, 18);
ALTER TABLE {{database}}.usage_rollup_15m MODIFY COLUMN IF EXISTS quantity Decimal(76, 18);
ALTER TABLE {{database}}.usage_rollup_15m MODIFY COLUMN IF EXISTS reported_cost Decimal(76, 18);
ALTER TABLE {{database}}.usage_rollup_15m_mv MODIFY QUERY
SELECT
    user_id,
    toStartOfFifteenMinutes(occurred_at) AS bucket,
    agent_id, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost,
    sum(toDecimal256(quantity, 18)) AS quantity,
    sum(toDecimal256(ifNull(reported_total_cost, 0), 18)) AS reported_cost,
    count() AS events,
    countIf(cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, bucket, agent_id, provider, service, event_type, unit, currency;

ALTER TABLE {{database}}.usage_totals_15m MODIFY COLUMN IF EXISTS cost Decimal(76, 18);
ALTER TABLE {{database}}.usage_totals_15m MODIFY COLUMN IF EXISTS quantity Decimal(76, 18);
ALTER TABLE {{database}}.usage_totals_15m MODIFY COLUMN IF EXISTS reported_cost Decimal(76, 18);
ALTER TABLE {{database}}.usage_totals_15m_mv MODIFY QUERY
SELECT
    user_id, toStartOfFifteenMinutes(occurred_at) AS bucket, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity,
    sum(toDecimal256(ifNull(reported_total_cost, 0), 18)) AS reported_cost,
    count() AS events, countIf(cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, bucket, provider, service, event_type, unit, currency;

ALTER TABLE {{database}}.usage_totals_daily MODIFY COLUMN IF EXISTS cost Decimal(76, 18);
ALTER TABLE {{database}}.usage_totals_daily MODIFY COLUMN IF EXISTS quantity Decimal(76, 18);
ALTER TABLE {{database}}.usage_totals_daily MODIFY COLUMN IF EXISTS reported_cost Decimal(76, 18);
ALTER TABLE {{database}}.usage_totals_daily_mv MODIFY QUERY
SELECT
    user_id, toStartOfDay(occurred_at) AS day, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity,
    sum(toDecimal256(ifNull(reported_total_cost, 0), 18)) AS reported_cost,
    count() AS events, countIf(cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, day, provider, service, event_type, unit, currency;

ALTER TABLE {{database}}.usage_by_agent_daily MODIFY COLUMN IF EXISTS cost SimpleAggregateFunction(sum, Decimal(76, 18));
ALTER TABLE {{database}}.usage_by_agent_daily MODIFY COLUMN IF EXISTS quantity SimpleAggregateFunction(sum, Decimal(76, 18));
ALTER TABLE {{database}}.usage_by_agent_daily_mv MODIFY QUERY
SELECT
    user_id, toStartOfDay(occurred_at) AS day, agent_id, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity, count() AS events
FROM {{database}}.usage_events
GROUP BY user_id, day, agent_id, service, event_type, unit, currency;

ALTER TABLE {{database}}.usage_by_session MODIFY COLUMN IF EXISTS cost SimpleAggregateFunction(sum, Decimal(76, 18));
ALTER TABLE {{database}}.usage_by_session MODIFY COLUMN IF EXISTS quantity SimpleAggregateFunction(sum, Decimal(76, 18));
ALTER TABLE {{database}}.usage_by_session_mv MODIFY QUERY
SELECT
    user_id, session_id, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity, count() AS events,
    min(occurred_at) AS first_at, max(occurred_at) AS last_at
FROM {{database}}.usage_events
GROUP BY user_id, session_id, provider, service, event_type, unit, currency;

-- 2. Every stored event id under its tenant, ordered by (user_id, id): the consumer asks it which
-- events of a batch are stored already, the breakdown which live entries are; one tenant's event_id
-- never hides another's. It replaces usage_event_ids (006), ordered by id alone. The view comes
-- before the copy, so no event stored meanwhile is missed; the copy has no "still empty" guard: an
-- id copied twice is the same row, which the engine collapses and every lookup (DISTINCT) sees once.
CREATE TABLE IF NOT EXISTS {{database}}.usage_event_ids_by_user
(
    user_id String COMMENT 'usage_events.user_id: an event id deduplicates within its tenant',
    id UUID COMMENT 'usage_events.id'
)
ENGINE = ReplacingMergeTree
ORDER BY (user_id, id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_event_ids_by_user_mv TO {{database}}.usage_event_ids_by_user AS
SELECT user_id, id FROM {{database}}.usage_events;

INSERT INTO {{database}}.usage_event_ids_by_user
SELECT user_id, id FROM {{database}}.usage_events;

DROP VIEW IF EXISTS {{database}}.usage_event_ids_mv;
DROP TABLE IF EXISTS {{database}}.usage_event_ids;
