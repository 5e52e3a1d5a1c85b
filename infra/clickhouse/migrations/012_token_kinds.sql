-- Token kinds (issue 18): the parts of an LLM event's input and output tokens, each priced at its own
-- rate, and the priced parts of every computed cost, so that finance sees cached against fresh tokens
-- and each part's rate. Old rows keep NULL counts and no parts; their cost is unchanged.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cached_input_tokens Nullable(UInt64) COMMENT 'part of input_tokens read from the prompt cache, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cache_write_tokens Nullable(UInt64) COMMENT 'part of input_tokens written to the prompt cache, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS audio_input_tokens Nullable(UInt64) COMMENT 'part of input_tokens that is audio, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cached_audio_input_tokens Nullable(UInt64) COMMENT 'part of cached and of audio input, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS audio_output_tokens Nullable(UInt64) COMMENT 'part of output_tokens that is audio, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS reasoning_tokens Nullable(UInt64) COMMENT 'part of output_tokens spent reasoning, when sent';
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS price_scope LowCardinality(String) DEFAULT '' COMMENT 'card, tenant or catalog when computed; empty otherwise';
-- One element per priced part: cost is quantity × price ÷ per rounded to 18 decimals, and the event's
-- cost is the sum of its parts' costs.
ALTER TABLE {{database}}.usage_events ADD COLUMN IF NOT EXISTS cost_components Array(Tuple(dimension LowCardinality(String), quantity Decimal(38, 18), unit LowCardinality(String), price Decimal(38, 18), per Decimal(38, 18), cost Decimal(38, 18), rate_id String)) COMMENT 'the priced parts of a computed cost';
