-- Webhooks (docs/webhooks.md). webhook_endpoints: every version of every endpoint, as the record path
-- delivered it (kind webhook_endpoint); the highest version wins. The secrets are kept as they are (an
-- HMAC is made with the secret itself), as JSON: the current one first, a rotated-out one with its end.
CREATE TABLE IF NOT EXISTS {{database}}.webhook_endpoints
(
    id UUID,
    user_id Nullable(String) COMMENT 'the one tenant whose events it receives; NULL: every tenant''s',
    url String,
    events Array(LowCardinality(String)),
    description Nullable(String),
    secrets String COMMENT 'JSON [{secret, expires_at}]: never read by an answer',
    created_at DateTime64(3, 'UTC'),
    disabled_at Nullable(DateTime64(3, 'UTC')),
    disabled_reason Nullable(String),
    deleted_at Nullable(DateTime64(3, 'UTC')),
    version UInt64 COMMENT 'grows by one with every change; the highest wins',
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id
SETTINGS non_replicated_deduplication_window = 10000;

-- The outbox: one row per message and endpoint, written by the emitting process directly (an insert
-- acknowledged is on disk: it survives a kill -9), then one more version per attempt or redelivery.
-- `body` is the exact payload signed and sent on every attempt; the highest version wins.
CREATE TABLE IF NOT EXISTS {{database}}.webhook_deliveries
(
    endpoint_id UUID,
    message_id String COMMENT 'the webhook-id header, derived from the emitter''s idempotency key',
    user_id String,
    type LowCardinality(String),
    body String,
    created_at DateTime64(3, 'UTC'),
    status LowCardinality(String) COMMENT 'pending, delivered or failed (given up)',
    attempts UInt32,
    next_attempt_at Nullable(DateTime64(3, 'UTC')) COMMENT 'NULL once delivered or given up',
    deadline DateTime64(3, 'UTC') COMMENT 'no retry is scheduled past it',
    version UInt64,
    updated_at DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (endpoint_id, message_id);

-- Every attempt of every message to every endpoint: the delivery log (GET /api/webhooks/{id}/deliveries).
CREATE TABLE IF NOT EXISTS {{database}}.webhook_attempts
(
    endpoint_id UUID,
    message_id String,
    attempt UInt32,
    at DateTime64(3, 'UTC'),
    status_code Nullable(UInt16) COMMENT 'NULL: no answer (refused, timed out, unreachable, unsafe address)',
    latency_ms UInt32,
    error Nullable(String),
    ok Bool
)
ENGINE = MergeTree
ORDER BY (endpoint_id, message_id, at);
