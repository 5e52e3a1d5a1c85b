-- Each tenant's billing settings (docs/statements.md#time-zone): the IANA time zone its months begin and
-- end in, as the record path delivered it; the latest `updated_at` wins. A tenant without a row bills
-- in UTC.
CREATE TABLE IF NOT EXISTS {{database}}.tenant_settings
(
    user_id String,
    time_zone String COMMENT 'IANA name, as the platform canonicalizes it',
    updated_at DateTime64(3, 'UTC'),
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY user_id
SETTINGS non_replicated_deduplication_window = 10000;
