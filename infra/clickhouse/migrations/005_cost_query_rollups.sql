-- The rollups the cost queries read, so that their cost grows with the range asked for, not with
-- the number of events. Each is fed by a materialized view on usage_events; a replayed insert (same
-- deduplication token) is dropped in every one (deduplicate_blocks_in_dependent_materialized_views).
-- A database made by an earlier version is backfilled once, when a rollup is still empty: upgrade with
-- the consumers stopped, or events stored between the view's creation and the backfill are missing here.

-- Per user and quarter hour, without the agent: the timeline in any zone, and the edges of the month (see 003).
CREATE TABLE IF NOT EXISTS {{database}}.usage_totals_15m
(
    user_id String,
    bucket DateTime('UTC') COMMENT 'start of the quarter hour (UTC) the usage happened in',
    provider LowCardinality(String),
    service LowCardinality(String),
    event_type LowCardinality(String),
    unit LowCardinality(String),
    currency LowCardinality(String),
    cost Decimal(38, 18),
    quantity Decimal(38, 18),
    reported_cost Decimal(38, 18),
    events UInt64,
    unpriced_events UInt64
)
ENGINE = SummingMergeTree((cost, quantity, reported_cost, events, unpriced_events))
ORDER BY (user_id, bucket, provider, service, event_type, unit, currency)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_totals_15m_mv TO {{database}}.usage_totals_15m AS
SELECT
    user_id, toStartOfFifteenMinutes(occurred_at) AS bucket, provider, service, event_type, unit, currency,
    sum(cost) AS cost, sum(quantity) AS quantity,
    sum(ifNull(reported_total_cost, toDecimal128(0, 18))) AS reported_cost,
    count() AS events, countIf(cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, bucket, provider, service, event_type, unit, currency;

INSERT INTO {{database}}.usage_totals_15m
SELECT
    user_id, toStartOfFifteenMinutes(occurred_at) AS bucket, provider, service, event_type, unit, currency,
    sum(cost), sum(quantity), sum(ifNull(reported_total_cost, toDecimal128(0, 18))), count(), countIf(cost_source = 'unpriced')
FROM {{database}}.usage_events
WHERE (SELECT count() FROM {{database}}.usage_totals_15m) = 0
GROUP BY user_id, bucket, provider, service, event_type, unit, currency;

-- Per user and UTC day, without the agent: the summary's all-time totals (and the month's whole days).
CREATE TABLE IF NOT EXISTS {{database}}.usage_totals_daily
(
    user_id String,
    day DateTime('UTC') COMMENT 'start of the UTC day the usage happened in',
    provider LowCardinality(String),
    service LowCardinality(String),
    event_type LowCardinality(String),
    unit LowCardinality(String),
    currency LowCardinality(String),
    cost Decimal(38, 18),
    quantity Decimal(38, 18),
    reported_cost Decimal(38, 18),
    events UInt64,
    unpriced_events UInt64
)
ENGINE = SummingMergeTree((cost, quantity, reported_cost, events, unpriced_events))
ORDER BY (user_id, day, provider, service, event_type, unit, currency)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_totals_daily_mv TO {{database}}.usage_totals_daily AS
SELECT
    user_id, toStartOfDay(occurred_at) AS day, provider, service, event_type, unit, currency,
    sum(cost) AS cost, sum(quantity) AS quantity,
    sum(ifNull(reported_total_cost, toDecimal128(0, 18))) AS reported_cost,
    count() AS events, countIf(cost_source = 'unpriced') AS unpriced_events
FROM {{database}}.usage_events
GROUP BY user_id, day, provider, service, event_type, unit, currency;

INSERT INTO {{database}}.usage_totals_daily
SELECT
    user_id, toStartOfDay(occurred_at) AS day, provider, service, event_type, unit, currency,
    sum(cost), sum(quantity), sum(ifNull(reported_total_cost, toDecimal128(0, 18))), count(), countIf(cost_source = 'unpriced')
FROM {{database}}.usage_events
WHERE (SELECT count() FROM {{database}}.usage_totals_daily) = 0
GROUP BY user_id, day, provider, service, event_type, unit, currency;

-- Per user, UTC day and agent, the sessions that had usage, as exact sets: days and agents merge
-- exactly (uniqExactMerge), so a session seen on two days or by the summary counts once.
CREATE TABLE IF NOT EXISTS {{database}}.usage_sessions_daily
(
    user_id String,
    day DateTime('UTC'),
    agent_id String,
    sessions AggregateFunction(uniqExact, UUID)
)
ENGINE = AggregatingMergeTree
ORDER BY (user_id, day, agent_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_sessions_daily_mv TO {{database}}.usage_sessions_daily AS
SELECT user_id, toStartOfDay(occurred_at) AS day, agent_id, uniqExactState(session_id) AS sessions
FROM {{database}}.usage_events
GROUP BY user_id, day, agent_id;

INSERT INTO {{database}}.usage_sessions_daily
SELECT user_id, toStartOfDay(occurred_at) AS day, agent_id, uniqExactState(session_id)
FROM {{database}}.usage_events
WHERE (SELECT count() FROM {{database}}.usage_sessions_daily) = 0
GROUP BY user_id, day, agent_id;

-- Per user, UTC day and agent: by-agent over whole days.
CREATE TABLE IF NOT EXISTS {{database}}.usage_by_agent_daily
(
    user_id String,
    day DateTime('UTC') COMMENT 'start of the UTC day the usage happened in',
    agent_id String,
    service LowCardinality(String),
    event_type LowCardinality(String),
    unit LowCardinality(String),
    currency LowCardinality(String),
    cost SimpleAggregateFunction(sum, Decimal(38, 18)),
    quantity SimpleAggregateFunction(sum, Decimal(38, 18)),
    events SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (user_id, day, agent_id, service, event_type, unit, currency)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_by_agent_daily_mv TO {{database}}.usage_by_agent_daily AS
SELECT
    user_id, toStartOfDay(occurred_at) AS day, agent_id, service, event_type, unit, currency,
    sum(cost) AS cost, sum(quantity) AS quantity, count() AS events
FROM {{database}}.usage_events
GROUP BY user_id, day, agent_id, service, event_type, unit, currency;

INSERT INTO {{database}}.usage_by_agent_daily
SELECT
    user_id, toStartOfDay(occurred_at) AS day, agent_id, service, event_type, unit, currency,
    sum(cost), sum(quantity), count()
FROM {{database}}.usage_events
WHERE (SELECT count() FROM {{database}}.usage_by_agent_daily) = 0
GROUP BY user_id, day, agent_id, service, event_type, unit, currency;

-- Per session: the breakdown's totals and rows, and where in time its events lie (to read them by
-- the primary key of usage_events).
CREATE TABLE IF NOT EXISTS {{database}}.usage_by_session
(
    user_id String,
    session_id UUID,
    provider LowCardinality(String),
    service LowCardinality(String),
    event_type LowCardinality(String),
    unit LowCardinality(String),
    currency LowCardinality(String),
    cost SimpleAggregateFunction(sum, Decimal(38, 18)),
    quantity SimpleAggregateFunction(sum, Decimal(38, 18)),
    events SimpleAggregateFunction(sum, UInt64),
    first_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (user_id, session_id, provider, service, event_type, unit, currency)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_by_session_mv TO {{database}}.usage_by_session AS
SELECT
    user_id, session_id, provider, service, event_type, unit, currency,
    sum(cost) AS cost, sum(quantity) AS quantity, count() AS events, min(occurred_at) AS first_at, max(occurred_at) AS last_at
FROM {{database}}.usage_events
GROUP BY user_id, session_id, provider, service, event_type, unit, currency;

INSERT INTO {{database}}.usage_by_session
SELECT
    user_id, session_id, provider, service, event_type, unit, currency,
    sum(cost), sum(quantity), count(), min(occurred_at), max(occurred_at)
FROM {{database}}.usage_events
WHERE (SELECT count() FROM {{database}}.usage_by_session) = 0
GROUP BY user_id, session_id, provider, service, event_type, unit, currency;

-- The latest name each agent was given in a session. The aliases shadow the columns in WHERE (ClickHouse
-- resolves aliases first), so the filters test the null-free values: an empty name names nobody.
CREATE TABLE IF NOT EXISTS {{database}}.agent_names
(
    user_id String,
    agent_id String,
    agent_name String,
    updated_at DateTime64(3, 'UTC') COMMENT 'updated_at of the session version that named the agent; the latest wins'
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (user_id, agent_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.agent_names_mv TO {{database}}.agent_names AS
SELECT user_id, ifNull(agent_id, '') AS agent_id, ifNull(agent_name, '') AS agent_name, updated_at
FROM {{database}}.sessions
WHERE agent_id != '' AND agent_name != '';

INSERT INTO {{database}}.agent_names
SELECT user_id, ifNull(agent_id, '') AS agent_id, ifNull(agent_name, '') AS agent_name, updated_at
FROM {{database}}.sessions
WHERE agent_id != '' AND agent_name != '' AND (SELECT count() FROM {{database}}.agent_names) = 0;
