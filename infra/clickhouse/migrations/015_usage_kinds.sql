-- Usage kinds the frameworks report beyond 012's: image input tokens (and their cached part), and the
-- time a realtime model was connected, which a vendor that bills connected time (xAI) is priced on.
-- The parts are NULL when not sent, as 012's; old rows keep NULL. The rollups read the priced parts
-- (cost_components), so a connected-time part shows in them like a token part: no view changes.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS image_input_tokens Nullable(UInt64) COMMENT 'part of input_tokens that is images, when sent' AFTER cached_audio_input_tokens;
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cached_image_input_tokens Nullable(UInt64) COMMENT 'part of cached and of image input, when sent' AFTER image_input_tokens;
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS session_duration_seconds Nullable(Decimal(38, 18)) COMMENT 'seconds a realtime model was connected, when sent (llm_tokens)' AFTER reasoning_tokens;
