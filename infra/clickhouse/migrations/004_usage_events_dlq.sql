-- The usage records the consumer could not store (undecodable, or failing the usage schema), as
-- finance and operators look for them; dead_letters holds every kind.
CREATE VIEW IF NOT EXISTS {{database}}.usage_events_dlq AS
SELECT reason, topic, kafka_partition, kafka_offset, record, stored_at
FROM {{database}}.dead_letters
WHERE kind = 'usage' OR topic LIKE 'callmeter.usage.%';
