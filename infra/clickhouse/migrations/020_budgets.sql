-- Budgets (docs/budgets.md): every version of every budget, as the record path delivered it (kind
-- budget); the highest version wins. Spend is never stored here: it is summed from the usage.
CREATE TABLE IF NOT EXISTS {{database}}.budgets
(
    id UUID,
    name String,
    user_id String,
    agent_id Nullable(String) COMMENT 'one agent''s spend; NULL: the tenant''s',
    per_call Bool COMMENT 'a cap on every single call',
    amount Decimal(38, 18),
    period LowCardinality(String) COMMENT 'day, week, month, or none (a per-call cap)',
    time_zone String,
    thresholds Array(String) COMMENT 'percentages of the amount (90%) or amounts (20.00)',
    action LowCardinality(String) COMMENT 'notify or block',
    filter_service Nullable(String),
    filter_provider Nullable(String),
    filter_model Nullable(String),
    created_at DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC'),
    deleted_at Nullable(DateTime64(3, 'UTC')),
    version UInt64,
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (user_id, id)
SETTINGS non_replicated_deduplication_window = 10000;
