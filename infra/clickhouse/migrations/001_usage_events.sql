-- Every priced usage event, one row per event id. Inserts carry a deterministic
-- insert_deduplication_token, and non_replicated_deduplication_window makes a replayed batch a no-op.
CREATE TABLE IF NOT EXISTS {{database}}.usage_events
(
    id UUID COMMENT 'event id: the client event_id when sent, else made by the server; the idempotency key',
    user_id String COMMENT 'tenant: the x-user-id of the cost queries',
    agent_id String DEFAULT '' COMMENT 'agent that served the call; empty when unknown',
    session_id UUID COMMENT 'voice session the usage belongs to',
    provider LowCardinality(String) COMMENT 'provider id as sent, lower-cased (deepgram, google, resemble, ...)',
    service LowCardinality(String) COMMENT 'stt, llm or tts',
    event_type LowCardinality(String) COMMENT 'stt_minutes, llm_tokens or tts_characters',
    model LowCardinality(String) DEFAULT '' COMMENT 'model name when sent',
    quantity Decimal(38, 18) COMMENT 'units consumed, in unit',
    unit LowCardinality(String) COMMENT 'minute, token or character',
    unit_cost Decimal(38, 18) COMMENT 'rate applied per unit',
    cost Decimal(38, 18) COMMENT 'the cost callmeter computed (or accepted, see cost_source)',
    reported_unit_cost Nullable(Decimal(38, 18)) COMMENT 'unit_cost the worker sent, if any',
    reported_total_cost Nullable(Decimal(38, 18)) COMMENT 'total_cost the worker sent, if any',
    cost_source Enum8('computed' = 1, 'reported' = 2, 'unpriced' = 3) COMMENT 'where cost came from',
    rate_id String DEFAULT '' COMMENT 'rate-card entry that priced the event',
    currency LowCardinality(String) DEFAULT 'USD',
    occurred_at DateTime64(3, 'UTC') COMMENT 'when the usage happened (event timestamp, else receipt time)',
    received_at DateTime64(3, 'UTC') COMMENT 'when ingest accepted the event',
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'when the row was inserted',
    kafka_partition Int32 DEFAULT -1 COMMENT 'source partition; -1 in the embedded mode',
    kafka_offset Int64 DEFAULT -1 COMMENT 'source offset; -1 in the embedded mode'
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (user_id, occurred_at, id)
SETTINGS non_replicated_deduplication_window = 10000;
