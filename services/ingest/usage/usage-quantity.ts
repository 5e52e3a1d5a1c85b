import type { ValidationItem } from '../../shared/errors.ts';
import { Exact, MONEY_SCALE } from '../../shared/exact-decimal.ts';

/** The largest quantity the schema lets through as `quantity`; one derived from usage_data obeys it too. */
const MAX_QUANTITY = new Exact('1e12');
const MAX_TOKENS = new Exact(Number.MAX_SAFE_INTEGER);

export interface Quantities {
  readonly quantity: string;
  readonly input_tokens: string | null;
  readonly output_tokens: string | null;
}

type UsageData = Readonly<Record<string, unknown>>;

const problem = (field: string, msg: string, input: unknown): ValidationItem => ({ type: 'value_error', loc: ['body', field], msg: `Value error, ${msg}`, input, ctx: { error: {} } });

/**
 * The quantity of an event in its type's unit, from `quantity` when sent, else from the workers'
 * `usage_data` (compat.md) or the exact token counts. Seconds become minutes by an exact division
 * rounded to 18 decimals, the only rounding on the way in.
 */
export function usageQuantities(eventType: string, sent: { quantity?: string; input_tokens?: number; output_tokens?: number; usage_data?: UsageData }): Quantities | ValidationItem {
  const data = sent.usage_data ?? {};
  const inputTokens = count(sent.input_tokens ?? data.input_tokens);
  const outputTokens = count(sent.output_tokens ?? data.output_tokens);
  if (inputTokens instanceof Error) return problem('input_tokens', inputTokens.message, sent.input_tokens ?? data.input_tokens);
  if (outputTokens instanceof Error) return problem('output_tokens', outputTokens.message, sent.output_tokens ?? data.output_tokens);
  const tokens = { input_tokens: inputTokens, output_tokens: outputTokens };
  if (sent.quantity !== undefined) return { quantity: plain(new Exact(sent.quantity)), ...tokens };
  const derived = fromUsageData(eventType, data, tokens);
  if (derived === null) return { type: 'missing', loc: ['body', 'quantity'], msg: 'Field required', input: sent };
  if (derived instanceof Error) return problem('usage_data', derived.message, sent.usage_data);
  return { quantity: derived, ...tokens };
}

function fromUsageData(eventType: string, data: UsageData, tokens: { input_tokens: string | null; output_tokens: string | null }): string | Error | null {
  if (eventType === 'llm_tokens' && (tokens.input_tokens !== null || tokens.output_tokens !== null)) {
    return plain(new Exact(tokens.input_tokens ?? 0).plus(tokens.output_tokens ?? 0));
  }
  const [field, divisor] = eventType === 'stt_minutes' ? ['audio_duration_seconds', 60] : eventType === 'tts_characters' ? ['character_count', 1] : [null, 1];
  if (field === null || data[field] === undefined) return null;
  const value = decimalOf(data[field]);
  if (value === null || value.isNegative()) return new Error(`usage_data.${field} must be a number >= 0`);
  const quantity = value.dividedBy(divisor);
  if (quantity.greaterThan(MAX_QUANTITY)) return new Error(`usage_data.${field} is too large: at most ${MAX_QUANTITY.times(divisor).toFixed()}`);
  return plain(quantity);
}

function count(value: unknown): string | null | Error {
  if (value === undefined || value === null) return null;
  const parsed = decimalOf(value);
  if (parsed === null || parsed.isNegative() || !parsed.isInteger() || parsed.greaterThan(MAX_TOKENS)) return new Error(`token counts are whole numbers from 0 to ${MAX_TOKENS.toFixed()}`);
  return parsed.toFixed(0);
}

function decimalOf(value: unknown): Exact | null {
  if (typeof value !== 'number' && typeof value !== 'string') return null;
  try {
    const parsed = new Exact(value);
    return parsed.isFinite() ? parsed : null;
  } catch {
    return null;
  }
}

/** Plain notation, no exponent, at most 18 decimals, no trailing zeros. */
export function plain(value: Exact): string {
  return value.toDecimalPlaces(MONEY_SCALE, Exact.ROUND_HALF_EVEN).toFixed();
}
