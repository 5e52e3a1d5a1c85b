-- How many sessions of a tenant had usage, in all and under each agent, kept as the usage is stored
-- instead of counted at each read (docs/cost-queries.md#how-many-sessions): the writer marks the row of
-- usage_events that first stored each session (session_first = 1) and each session under each agent
-- (agent_session_first = 1), and two views keep the marked rows.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS session_first UInt8 DEFAULT 0 COMMENT '1 on the row that first stored its session (one per user and session), else 0';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS agent_session_first UInt8 DEFAULT 0 COMMENT '1 on the row that first stored its session under its agent_id (one per user, session and agent), else 0';

-- The marked rows of every session by (user_id, session_id): the writer asks it whether a round's
-- session is counted already, and by which row (a replayed round marks the same row again).
CREATE TABLE IF NOT EXISTS {{database}}.usage_session_firsts
(
    user_id String,
    session_id UUID,
    event_id UUID COMMENT 'the marked usage_events row',
    agent_id String,
    occurred_at DateTime64(3, 'UTC'),
    session_first UInt8,
    agent_session_first UInt8
)
ENGINE = MergeTree
ORDER BY (user_id, session_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- Per user and agent, the number of sessions with usage: sessions sums the sessions first stored with
-- that agent_id (their sum over the agents is the tenant's count), agent_sessions the sessions that
-- had usage under it (by-agent over all time).
CREATE TABLE IF NOT EXISTS {{database}}.usage_session_starts
(
    user_id String,
    agent_id String,
    sessions UInt64,
    agent_sessions UInt64
)
ENGINE = SummingMergeTree
ORDER BY (user_id, agent_id)
SETTINGS non_replicated_deduplication_window = 10000;

-- The usage stored before this migration: each session's first stored row is marked, and each
-- session's under each agent (the earliest by when it was stored, then when it happened, then its id),
-- unless a row of it is marked already.
DROP TABLE IF EXISTS {{database}}.usage_session_firsts_backfill;

CREATE TABLE IF NOT EXISTS {{database}}.usage_session_firsts_backfill ENGINE = Set AS
SELECT user_id, argMin(id, (stored_at, occurred_at, id))
FROM {{database}}.usage_events
GROUP BY user_id, session_id
HAVING max(session_first) = 0;

ALTER TABLE {{database}}.usage_events UPDATE session_first = 1
WHERE (user_id, id) IN {{database}}.usage_session_firsts_backfill
SETTINGS mutations_sync = 2;

DROP TABLE IF EXISTS {{database}}.usage_session_firsts_backfill;

DROP TABLE IF EXISTS {{database}}.usage_agent_session_firsts_backfill;

CREATE TABLE IF NOT EXISTS {{database}}.usage_agent_session_firsts_backfill ENGINE = Set AS
SELECT user_id, argMin(id, (stored_at, occurred_at, id))
FROM {{database}}.usage_events
GROUP BY user_id, session_id, agent_id
HAVING max(agent_session_first) = 0;

ALTER TABLE {{database}}.usage_events UPDATE agent_session_first = 1
WHERE (user_id, id) IN {{database}}.usage_agent_session_firsts_backfill
SETTINGS mutations_sync = 2;

DROP TABLE IF EXISTS {{database}}.usage_agent_session_firsts_backfill;

INSERT INTO {{database}}.usage_session_firsts
SELECT user_id, session_id, id, agent_id, occurred_at, session_first, agent_session_first
FROM {{database}}.usage_events
WHERE (session_first = 1 OR agent_session_first = 1) AND (SELECT count() FROM {{database}}.usage_session_firsts) = 0;

INSERT INTO {{database}}.usage_session_starts
SELECT user_id, agent_id, sum(session_first), sum(agent_session_first)
FROM {{database}}.usage_events
WHERE (session_first = 1 OR agent_session_first = 1) AND (SELECT count() FROM {{database}}.usage_session_starts) = 0
GROUP BY user_id, agent_id;

-- The views come after the copies: the writer of this version starts once the migrations are applied.
CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_session_firsts_mv TO {{database}}.usage_session_firsts AS
SELECT user_id, session_id, id AS event_id, agent_id, occurred_at, session_first, agent_session_first
FROM {{database}}.usage_events
WHERE session_first = 1 OR agent_session_first = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{database}}.usage_session_starts_mv TO {{database}}.usage_session_starts AS
SELECT user_id, agent_id, sum(session_first) AS sessions, sum(agent_session_first) AS agent_sessions
FROM {{database}}.usage_events
WHERE session_first = 1 OR agent_session_first = 1
GROUP BY user_id, agent_id;
