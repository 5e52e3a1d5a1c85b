-- API keys (AUTH_MODE=on): one row per version of a key, the secret only as a salted SHA-256. Every
-- process reads the latest version of each (FINAL) every AUTH_KEY_REFRESH_MS, so a revocation holds
-- everywhere within seconds. Replays of a record write the same version again: ReplacingMergeTree
-- keeps one.
CREATE TABLE IF NOT EXISTS {{database}}.api_keys
(
    id UUID,
    prefix String,
    name Nullable(String),
    scope LowCardinality(String),
    user_id Nullable(String),
    salt String,
    secret_hash String,
    created_at DateTime64(3, 'UTC'),
    expires_at Nullable(DateTime64(3, 'UTC')),
    revoked_at Nullable(DateTime64(3, 'UTC')),
    created_by String,
    version UInt64,
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id
SETTINGS non_replicated_deduplication_window = 10000;

-- The audit log: key creation and revocation, rate entries created and ended, with the acting key.
-- One row per change, its id the record's: a replay of the record replaces the row with itself.
CREATE TABLE IF NOT EXISTS {{database}}.audit_log
(
    id UUID,
    action LowCardinality(String),
    subject_id String,
    actor_key_id String,
    user_id Nullable(String),
    at DateTime64(3, 'UTC'),
    detail String,
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree
ORDER BY (at, id)
SETTINGS non_replicated_deduplication_window = 10000;
