-- The lookups of the request path, each a search of its own key range instead of a scan of a table
-- ordered by something else: a session by room (every create asks it, to keep one
-- session per live room, and so do by-room reads and ends when live state lacks the room), the agents
-- holding a phone number (the phone lookup and assign when live state lacks the number), and a user's
-- agents (the agent list). Each is fed by a materialized view, so a replayed insert (same
-- deduplication token) is dropped here too, and backfilled with no "still empty" guard, as 007 was:
-- a row the view already copied is the same row twice, which the engine collapses and every reader
-- (the highest version, or FINAL over the key range) sees once.

-- room_name, created_at and id never change between a session's versions.
CREATE TABLE IF NOT EXISTS {{database}}.sessions_by_room AS {{database}}.sessions
ENGINE = ReplacingMergeTree(version)
ORDER BY (room_name, created_at, id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.sessions_by_room_mv TO {{database}}.sessions_by_room AS
SELECT * FROM {{database}}.sessions;

INSERT INTO {{database}}.sessions_by_room
SELECT * FROM {{database}}.sessions;

-- Which agents ever held a number: the candidates whose latest state (telephony_numbers, by agent)
-- decides who holds it now.
CREATE TABLE IF NOT EXISTS {{database}}.telephony_number_holders
(
    phone_number String COMMENT 'E.164',
    agent_id String
)
ENGINE = ReplacingMergeTree
ORDER BY (phone_number, agent_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.telephony_number_holders_mv TO {{database}}.telephony_number_holders AS
SELECT assumeNotNull(phone_number) AS phone_number, agent_id FROM {{database}}.telephony_numbers WHERE phone_number IS NOT NULL;

INSERT INTO {{database}}.telephony_number_holders
SELECT assumeNotNull(phone_number) AS phone_number, agent_id FROM {{database}}.telephony_numbers WHERE phone_number IS NOT NULL;

-- An agent's owner never changes between its versions.
CREATE TABLE IF NOT EXISTS {{database}}.agents_by_user AS {{database}}.agents
ENGINE = ReplacingMergeTree(version)
ORDER BY (user_id, id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.agents_by_user_mv TO {{database}}.agents_by_user AS
SELECT * FROM {{database}}.agents;

INSERT INTO {{database}}.agents_by_user
SELECT * FROM {{database}}.agents;
