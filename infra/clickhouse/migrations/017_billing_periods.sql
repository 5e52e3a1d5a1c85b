-- Closed billing periods (docs/statements.md): one row per version of a tenant's closed month, as the
-- record path delivered it; the highest version of (user_id, period) wins. A month's statement holds the
-- usage rows stored by its close; a row of that month stored later is an adjustment of a later month.
CREATE TABLE IF NOT EXISTS {{database}}.billing_periods
(
    user_id String,
    period String COMMENT 'YYYY-MM, a calendar month in UTC',
    status LowCardinality(String) COMMENT 'closed',
    closed_at DateTime64(3, 'UTC'),
    version UInt32,
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (user_id, period)
SETTINGS non_replicated_deduplication_window = 10000;
