import type { ListSchema, ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import { USAGE_LIMITS } from '../records/usage.ts';

// Upper bounds keep every stored value and every sum exact (USAGE_LIMITS, docs/usage-events.md), and refuse
// absurd inputs ("1e1000000000") before anything expands them. quantity × unit_cost is bounded by
// ingest (usage/reported-cost.ts), since a schema bounds each field alone.
const quantity = {
  'x-py': 'decimal',
  minimum: 0,
  maximum: USAGE_LIMITS.MAX_QUANTITY,
  description: 'in the unit of event_type; also the bound of a quantity derived from usage_data',
} as const;
const money = {
  'x-py': 'decimal',
  minimum: 0,
  maximum: USAGE_LIMITS.MAX_REPORTED_COST,
  description:
    'reported; without total_cost, quantity × unit_cost is at most 1000000 too (and without unit_cost, total_cost ÷ quantity)',
} as const;
const tokens = {
  'x-py': 'int',
  minimum: 0,
  maximum: USAGE_LIMITS.MAX_QUANTITY,
  description: 'exact count; so is one in usage_data, and their sum without a quantity',
} as const;
/** The kinds of usage an event may record, each priced in its own unit (minutes, tokens, characters). */
export const USAGE_EVENT_TYPES = ['stt_minutes', 'llm_tokens', 'tts_characters'] as const;
export type UsageEventType = (typeof USAGE_EVENT_TYPES)[number];

// The bound of the session's own ids (schemas/http/session-create.ts): every string an event stores is
// an id or a name, and none needs more; a longer one is a 422, not a megabyte copied into every row.
const MAX_NAME = 512;

/**
 * POST /api/usage/events — the interface's fields first, in its order. `quantity` and the costs
 * are optional because the workers send `usage_data` (`audio_duration_seconds`, `input_tokens`
 * and `output_tokens`, or `character_count`) and let the service price it; negative values are
 * refused (the old service summed them). `event_id` (idempotency), `timestamp`, `model`, exact
 * token counts and a realtime model's connected time are callmeter's extensions. A speech event may
 * carry token counts too, where its vendor bills tokens (OpenAI's gpt-4o-mini-tts and transcribe models).
 */
export const usageEventBody = {
  type: 'object',
  title: 'UsageEventCreate',
  properties: {
    session_id: { 'x-py': 'str', maxLength: MAX_NAME },
    user_id: { 'x-py': 'str', maxLength: MAX_NAME },
    agent_id: { 'x-py': 'str', 'x-py-nullable': true, maxLength: MAX_NAME },
    // An empty provider could be neither priced nor shown: a 422, not a record the consumer refuses.
    provider: { 'x-py': 'str', minLength: 1, maxLength: MAX_NAME },
    event_type: { 'x-py': 'enum', enum: USAGE_EVENT_TYPES },
    quantity,
    unit_cost: money,
    total_cost: money,
    usage_data: { 'x-py': 'dict' },
    event_id: { 'x-py': 'uuid' },
    timestamp: {
      'x-py': 'datetime',
      description:
        'when the usage happened (default: receipt); at most 5 minutes ahead and USAGE_MAX_AGE_DAYS (default 35) back, else 422: the past is changed by corrections',
    },
    model: { 'x-py': 'str', maxLength: MAX_NAME },
    input_tokens: {
      ...tokens,
      description:
        'every prompt token, cached and audio ones included; exact count; so is one in usage_data, and their sum without a quantity',
    },
    output_tokens: { ...tokens, description: 'every completion token, audio and reasoning ones included' },
    cached_input_tokens: { ...tokens, description: 'part of input_tokens: read from the prompt cache' },
    cache_write_tokens: { ...tokens, description: 'part of input_tokens: written to the prompt cache' },
    audio_input_tokens: { ...tokens, description: 'part of input_tokens: audio (cached audio included)' },
    cached_audio_input_tokens: { ...tokens, description: 'part of cached_input_tokens and of audio_input_tokens' },
    image_input_tokens: { ...tokens, description: 'part of input_tokens: images (cached images included)' },
    cached_image_input_tokens: { ...tokens, description: 'part of cached_input_tokens and of image_input_tokens' },
    audio_output_tokens: { ...tokens, description: 'part of output_tokens: audio' },
    reasoning_tokens: {
      ...tokens,
      description: 'part of output_tokens: reasoning (priced as output unless the model prices it apart)',
    },
    session_duration_seconds: {
      'x-py': 'decimal',
      minimum: 0,
      maximum: USAGE_LIMITS.MAX_QUANTITY,
      description:
        'llm_tokens only: how long a realtime model was connected, priced per hour of it where the vendor bills connected time (xAI); an event may carry only it',
    },
  },
  required: ['session_id', 'user_id', 'provider', 'event_type'],
} as const satisfies ModelSchema;

export type UsageEventBody = FromPySchema<typeof usageEventBody>;

/** POST /api/usage/events/batch — each event is validated alone, errors at ["body", index, field]. */
export const usageEventBatchBody = {
  type: 'array',
  items: usageEventBody,
  maxItems: 1000,
} as const satisfies ListSchema;

export type UsageEventBatchBody = FromPySchema<typeof usageEventBatchBody>;
