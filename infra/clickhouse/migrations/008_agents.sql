-- Every version of every agent, as the record path delivered it. ReplacingMergeTree keeps the highest
-- version per id after merges; readers take argMax(..., version) or FINAL. The number an agent holds
-- is in telephony_numbers, not here. An agent's name here names it in the by-agent cost view.
CREATE TABLE IF NOT EXISTS {{database}}.agents
(
    id String COMMENT 'agent id',
    name String,
    description Nullable(String),
    type LowCardinality(String) COMMENT 'STT, LLM, TTS or PIPELINE',
    config String COMMENT 'JSON object',
    is_active Bool COMMENT 'false once deleted (DELETE is a soft delete, as in the replaced service)',
    user_id String COMMENT 'owner and tenant',
    created_at DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC'),
    version UInt64 COMMENT 'grows by one with every change; the highest wins',
    record_id UUID COMMENT 'id of the record that carried this version',
    kafka_partition Int32 DEFAULT -1,
    kafka_offset Int64 DEFAULT -1,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY id
SETTINGS non_replicated_deduplication_window = 10000;
