-- Every version of every session, as the record path delivered it. ReplacingMergeTree keeps the
-- highest version per id after merges; sessions_current reads the latest version at query time.
CREATE TABLE IF NOT EXISTS {{database}}.sessions
(
    id UUID COMMENT 'session id',
    room_name String,
    status LowCardinality(String) COMMENT 'CREATED, ACTIVE, COMPLETED or FAILED',
    started_at Nullable(DateTime64(3, 'UTC')),
    ended_at Nullable(DateTime64(3, 'UTC')),
    duration Nullable(UInt32) COMMENT 'whole seconds',
    user_id String COMMENT 'tenant',
    agent_id Nullable(String),
    session_data String COMMENT 'JSON object',
    agent_name Nullable(String),
    call_direction Nullable(String),
    outbound_phone_number Nullable(String),
    call_status Nullable(String),
    analysis Nullable(String) COMMENT 'JSON object',
    transferred_to Nullable(String),
    transfer_type Nullable(String),
    transfer_timestamp Nullable(DateTime64(3, 'UTC')),
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

CREATE VIEW IF NOT EXISTS {{database}}.sessions_current AS
SELECT * FROM {{database}}.sessions FINAL;

CREATE TABLE IF NOT EXISTS {{database}}.telephony_numbers
(
    agent_id String,
    phone_number Nullable(String) COMMENT 'E.164; null after a release',
    provider Nullable(String),
    status LowCardinality(String) COMMENT 'assigned or released',
    changed_at DateTime64(3, 'UTC'),
    version UInt64 COMMENT 'grows by one with every change of this agent; the highest wins',
    record_id UUID,
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(version)
ORDER BY agent_id
SETTINGS non_replicated_deduplication_window = 10000;

-- Records the consumer could not store: kept whole, with why and where from.
CREATE TABLE IF NOT EXISTS {{database}}.dead_letters
(
    kind LowCardinality(String) COMMENT 'record kind when readable, else unknown',
    reason String,
    topic String,
    kafka_partition Int32,
    kafka_offset Int64,
    record String COMMENT 'the record value as received',
    stored_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (kind, stored_at)
SETTINGS non_replicated_deduplication_window = 10000;
