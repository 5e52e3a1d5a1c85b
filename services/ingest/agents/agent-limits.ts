import { AppError } from '../../shared/errors.ts';
import type { JsonObject } from '../sessions/session.ts';

/**
 * The most an agent's config (its system prompt, first message, webhooks, functions) may hold, as
 * JSON text in UTF-8: every change publishes the whole agent as one record, which must keep fitting
 * a Kafka request, as a session's session_data (the same 64 KiB). With the strings' maxLength in
 * schemas/http/agent-bodies.ts, the largest agent record stays far below one send.
 */
export const MAX_AGENT_CONFIG_BYTES = 64 * 1024;

/** A 422 `value_error` at ["body","config"] when the config passes its bound, else null. */
export function oversizedConfig(config: JsonObject): AppError | null {
  const bytes = Buffer.byteLength(JSON.stringify(config));
  if (bytes <= MAX_AGENT_CONFIG_BYTES) return null;
  const msg = `Value error, config would be ${bytes} bytes as JSON, over the limit of ${MAX_AGENT_CONFIG_BYTES} bytes`;
  return AppError.validation([
    { type: 'value_error', loc: ['body', 'config'], msg, input: config, ctx: { error: {} } },
  ]);
}
