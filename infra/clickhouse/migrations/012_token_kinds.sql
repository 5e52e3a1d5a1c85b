-- Token kinds: the parts of an LLM event's input and output tokens, each priced at its own
-- rate, and the priced parts of every computed cost, so that finance sees cached against fresh tokens
-- and each part's rate. Old rows keep NULL counts and no parts; their cost is unchanged.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cached_input_tokens Nullable(UInt64) COMMENT 'part of input_tokens read from the prompt cache, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cache_write_tokens Nullable(UInt64) COMMENT 'part of input_tokens written to the prompt cache, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS audio_input_tokens Nullable(UInt64) COMMENT 'part of input_tokens that is audio, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cached_audio_input_tokens Nullable(UInt64) COMMENT 'part of cached and of audio input, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS audio_output_tokens Nullable(UInt64) COMMENT 'part of output_tokens that is audio, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS reasoning_tokens Nullable(UInt64) COMMENT 'part of output_tokens spent reasoning, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS price_scope LowCardinality(String) DEFAULT '' COMMENT 'card, tenant or catalog when computed; empty otherwise';
-- One element per priced part: cost is quantity × price ÷ per rounded to 18 decimals, and the event's
-- cost is the sum of its parts' costs.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cost_components Array(Tuple(dimension LowCardinality(String), quantity Decimal(38, 18), unit LowCardinality(String), price Decimal(38, 18), per Decimal(38, 18), cost Decimal(38, 18), rate_id String)) COMMENT 'the priced parts of a computed cost';

-- Nothing silently zero: every unpriced event of a tenant, by provider, model and event type, so that
-- GET /api/costs/unpriced answers from a few rows however many events a tenant has. Fed by a view like
-- the other rollups (a replayed insert is dropped by its deduplication token) and backfilled once, while
-- still empty, as 005's rollups: upgrade with the consumers stopped, or unpriced events stored between
-- the view's creation and the backfill are missing here (they are still in usage_events).
CREATE TABLE IF NOT EXISTS {{database}}.unpriced_usage
(
    user_id String,
    provider LowCardinality(String),
    model String,
    event_type LowCardinality(String),
    unit LowCardinality(String),
    events SimpleAggregateFunction(sum, UInt64),
    quantity SimpleAggregateFunction(sum, Decimal(76, 18)),
    first_seen SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_seen SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (user_id, provider, model, event_type, unit)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.unpriced_usage_mv TO {{database}}.unpriced_usage AS
SELECT
    user_id, provider, model, event_type, unit,
    count() AS events, sum(toDecimal256(quantity, 18)) AS quantity, min(occurred_at) AS first_seen, max(occurred_at) AS last_seen
FROM {{database}}.usage_events
WHERE cost_source = 'unpriced'
GROUP BY user_id, provider, model, event_type, unit;

INSERT INTO {{database}}.unpriced_usage
SELECT
    user_id, provider, model, event_type, unit,
    count() AS events, sum(toDecimal256(quantity, 18)) AS quantity, min(occurred_at) AS first_seen, max(occurred_at) AS last_seen
FROM {{database}}.usage_events
WHERE cost_source = 'unpriced' AND (SELECT count() FROM {{database}}.unpriced_usage) = 0
GROUP BY user_id, provider, model, event_type, unit;

-- Tenants' own prices (POST /api/rates), every version as the record path delivered it; the highest
-- version of an id wins (DELETE is a new version with effective_to set). Every process that prices
-- reads the whole table (FINAL) every few seconds: it holds negotiated prices, a few per tenant.
CREATE TABLE IF NOT EXISTS {{database}}.rate_entries
(
    id String,
    user_id String,
    provider String,
    model Nullable(String),
    event_type Nullable(String),
    service Nullable(String),
    pricing LowCardinality(String) COMMENT 'quantity or a token kind',
    unit String,
    price Decimal(38, 18),
    price_per Decimal(38, 18),
    currency LowCardinality(String),
    effective_from DateTime64(3, 'UTC'),
    effective_to Nullable(DateTime64(3, 'UTC')),
    created_at DateTime64(3, 'UTC'),
    version UInt64,
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id
SETTINGS non_replicated_deduplication_window = 10000;

-- The priced parts, summed: per tenant, event type, service and part (all time) for the summary's
-- by_service, and per session and provider for the breakdown's items. Only computed costs have parts;
-- rows stored before 012 have none, so there is nothing to backfill.
CREATE TABLE IF NOT EXISTS {{database}}.usage_parts_totals
(
    user_id String,
    event_type LowCardinality(String),
    service LowCardinality(String),
    dimension LowCardinality(String),
    unit LowCardinality(String),
    quantity SimpleAggregateFunction(sum, Decimal(76, 18)),
    cost SimpleAggregateFunction(sum, Decimal(76, 18))
)
ENGINE = AggregatingMergeTree
ORDER BY (user_id, event_type, service, dimension, unit)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_parts_totals_mv TO {{database}}.usage_parts_totals AS
SELECT user_id, event_type, service, part.1 AS dimension, part.3 AS unit, sum(toDecimal256(part.2, 18)) AS quantity, sum(toDecimal256(part.6, 18)) AS cost
FROM {{database}}.usage_events ARRAY JOIN cost_components AS part
GROUP BY user_id, event_type, service, dimension, unit;

CREATE TABLE IF NOT EXISTS {{database}}.usage_parts_by_session
(
    user_id String,
    session_id UUID,
    provider LowCardinality(String),
    event_type LowCardinality(String),
    service LowCardinality(String),
    dimension LowCardinality(String),
    unit LowCardinality(String),
    quantity SimpleAggregateFunction(sum, Decimal(76, 18)),
    cost SimpleAggregateFunction(sum, Decimal(76, 18))
)
ENGINE = AggregatingMergeTree
ORDER BY (user_id, session_id, provider, event_type, service, dimension, unit)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_parts_by_session_mv TO {{database}}.usage_parts_by_session AS
SELECT user_id, session_id, provider, event_type, service, part.1 AS dimension, part.3 AS unit, sum(toDecimal256(part.2, 18)) AS quantity, sum(toDecimal256(part.6, 18)) AS cost
FROM {{database}}.usage_events ARRAY JOIN cost_components AS part
GROUP BY user_id, session_id, provider, event_type, service, dimension, unit;
