import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import type { ResponseSchema } from './response-parts.ts';
import { closedObject, dateTime, oneOf, text, uuid } from './response-parts.ts';
import { usageEventBody } from './usage-event.ts';

/** Why the past changes: kept on every row of the correction and shown in the breakdown. */
const reason = {
  'x-py': 'str',
  minLength: 1,
  maxLength: 1000,
  description: 'why; shown beside the correction',
} as const;

/** POST /api/usage/events/{event_id}/void — the event stops counting; nothing is deleted. */
export const usageVoidBody = {
  type: 'object',
  title: 'UsageVoid',
  properties: { reason },
  required: ['reason'],
} as const satisfies ModelSchema;

export type UsageVoidBody = FromPySchema<typeof usageVoidBody>;

const sent = usageEventBody.properties;

/**
 * POST /api/usage/events/{event_id}/amend — what changes, as a usage event says it; what is left out
 * stays as it was. Priced at the event's own instant, with the rates in force then.
 */
export const usageAmendBody = {
  type: 'object',
  title: 'UsageAmend',
  properties: {
    reason,
    quantity: {
      ...sent.quantity,
      description: 'in the unit of event_type; without it, an LLM event’s quantity follows changed token counts',
    },
    provider: sent.provider,
    model: sent.model,
    input_tokens: sent.input_tokens,
    output_tokens: sent.output_tokens,
    cached_input_tokens: sent.cached_input_tokens,
    cache_write_tokens: sent.cache_write_tokens,
    audio_input_tokens: sent.audio_input_tokens,
    cached_audio_input_tokens: sent.cached_audio_input_tokens,
    image_input_tokens: sent.image_input_tokens,
    cached_image_input_tokens: sent.cached_image_input_tokens,
    audio_output_tokens: sent.audio_output_tokens,
    reasoning_tokens: sent.reasoning_tokens,
    session_duration_seconds: sent.session_duration_seconds,
  },
  required: ['reason'],
} as const satisfies ModelSchema;

export type UsageAmendBody = FromPySchema<typeof usageAmendBody>;

export const CORRECTION_KINDS = ['void', 'amend', 'reprice'] as const;
export type CorrectionKind = (typeof CORRECTION_KINDS)[number];

/** The 201 of a void or an amend. */
export const usageCorrectionResponse = {
  schema: closedObject(
    {
      id: { ...uuid, description: 'the correction' },
      event_id: { ...uuid, description: 'the event corrected, as it was sent' },
      kind: oneOf(CORRECTION_KINDS),
      reason: text,
      created_at: dateTime,
      user_id: text,
      session_id: uuid,
    },
    { title: 'UsageCorrection' },
  ),
} as const satisfies ResponseSchema;
