-- Corrections, append-only (docs/corrections.md): a void or an amend of a stored event is new rows of
-- usage_events, never a change of the old one. A reversal row negates the row it reverses (its cost,
-- quantity, reported total and priced parts) and weighs -1; an amend adds the replacement, priced at the
-- original's instant, weighing 1. Every row of a correction carries the original's tenant, session,
-- agent and instant, so each rollup's group nets to exactly what the corrected usage is.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS weight Int8 DEFAULT 1 COMMENT '1 for usage as sent or as amended, -1 for a reversal: every event count sums it';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS correction_id Nullable(UUID) COMMENT 'the correction (void or amend) this row belongs to; NULL for usage as sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS correction_kind LowCardinality(String) DEFAULT '' COMMENT 'void or amend; empty for usage as sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS correction_of Nullable(UUID) COMMENT 'the event as sent that the correction corrects';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS reverses Nullable(UUID) COMMENT 'on a reversal: the row it negates (the event as sent, or an earlier amend''s replacement)';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS correction_reason String DEFAULT '' COMMENT 'why, as the correction gave it';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS correction_created_at Nullable(DateTime64(3, 'UTC')) COMMENT 'when the correction was accepted';

-- Event counts become signed sums of the weight: a void takes its event out of every count, an amend
-- leaves it counted once. A group's count is never below 0 once every row is stored; a part holding
-- only a reversal holds -1 until merged with its original's.
ALTER TABLE {{database}}.usage_rollup_15m MODIFY COLUMN IF EXISTS events Int64;
ALTER TABLE {{database}}.usage_rollup_15m MODIFY COLUMN IF EXISTS unpriced_events Int64;
ALTER TABLE {{database}}.usage_rollup_15m_mv MODIFY QUERY
SELECT
    user_id,
    toStartOfFifteenMinutes(occurred_at) AS bucket,
    agent_id, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost,
    sum(toDecimal256(quantity, 18)) AS quantity,
    sum(toDecimal256(ifNull(reported_total_cost, 0), 18)) AS reported_cost,
    sum(toInt64(weight)) AS events,
    sumIf(toInt64(weight), cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, bucket, agent_id, provider, service, event_type, unit, currency;
ALTER TABLE {{database}}.usage_totals_15m MODIFY COLUMN IF EXISTS events Int64;
ALTER TABLE {{database}}.usage_totals_15m MODIFY COLUMN IF EXISTS unpriced_events Int64;
ALTER TABLE {{database}}.usage_totals_15m_mv MODIFY QUERY
SELECT
    user_id, toStartOfFifteenMinutes(occurred_at) AS bucket, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity,
    sum(toDecimal256(ifNull(reported_total_cost, 0), 18)) AS reported_cost,
    sum(toInt64(weight)) AS events, sumIf(toInt64(weight), cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, bucket, provider, service, event_type, unit, currency;
ALTER TABLE {{database}}.usage_totals_daily MODIFY COLUMN IF EXISTS events Int64;
ALTER TABLE {{database}}.usage_totals_daily MODIFY COLUMN IF EXISTS unpriced_events Int64;
ALTER TABLE {{database}}.usage_totals_daily_mv MODIFY QUERY
SELECT
    user_id, toStartOfDay(occurred_at) AS day, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity,
    sum(toDecimal256(ifNull(reported_total_cost, 0), 18)) AS reported_cost,
    sum(toInt64(weight)) AS events, sumIf(toInt64(weight), cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, day, provider, service, event_type, unit, currency;
ALTER TABLE {{database}}.usage_by_agent_daily MODIFY COLUMN IF EXISTS events SimpleAggregateFunction(sum, Int64);
ALTER TABLE {{database}}.usage_by_agent_daily_mv MODIFY QUERY
SELECT
    user_id, toStartOfDay(occurred_at) AS day, agent_id, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity, sum(toInt64(weight)) AS events
FROM {{database}}.usage_events
GROUP BY user_id, day, agent_id, service, event_type, unit, currency;
ALTER TABLE {{database}}.usage_by_session MODIFY COLUMN IF EXISTS events SimpleAggregateFunction(sum, Int64);
ALTER TABLE {{database}}.usage_by_session_mv MODIFY QUERY
SELECT
    user_id, session_id, provider, service, event_type, unit, currency,
    sum(toDecimal256(cost, 18)) AS cost, sum(toDecimal256(quantity, 18)) AS quantity, sum(toInt64(weight)) AS events,
    min(occurred_at) AS first_at, max(occurred_at) AS last_at
FROM {{database}}.usage_events
GROUP BY user_id, session_id, provider, service, event_type, unit, currency;
ALTER TABLE {{database}}.unpriced_usage MODIFY COLUMN IF EXISTS events SimpleAggregateFunction(sum, Int64);
ALTER TABLE {{database}}.unpriced_usage_mv MODIFY QUERY
SELECT
    user_id, provider, model, event_type, unit,
    sum(toInt64(weight)) AS events, sum(toDecimal256(quantity, 18)) AS quantity, min(occurred_at) AS first_seen, max(occurred_at) AS last_seen
FROM {{database}}.usage_events
WHERE cost_source = 'unpriced'
GROUP BY user_id, provider, model, event_type, unit;
