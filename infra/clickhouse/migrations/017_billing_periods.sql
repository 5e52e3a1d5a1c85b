-- Closed billing periods (docs/statements.md): one row per version of a tenant's month, each a close
-- (`closed_at`) and, once the month is reopened, its end (`reopened_at`), as the record path delivered
-- it; every version is kept, the highest revision of each wins. A month's statement holds its usage rows
-- stored outside its closed intervals; a row stored inside one is an adjustment of a later month.
CREATE TABLE IF NOT EXISTS {{database}}.billing_periods
(
    user_id String,
    period String COMMENT 'YYYY-MM, a calendar month in UTC',
    version UInt32 COMMENT 'the month''s closes, counted from 1',
    closed_at DateTime64(3, 'UTC'),
    reopened_at Nullable(DateTime64(3, 'UTC')) COMMENT 'when this close was undone; NULL while it holds',
    revision UInt32 COMMENT '1 for the close, 2 once reopened: the highest wins',
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(revision)
ORDER BY (user_id, period, version)
SETTINGS non_replicated_deduplication_window = 10000;
