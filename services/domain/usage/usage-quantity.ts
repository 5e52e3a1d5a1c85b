import { USAGE_LIMITS } from '../../../schemas/records/usage.ts';
import type { ValidationItem } from '../../shared/errors.ts';
import { Exact, MONEY_SCALE } from '../../shared/exact-decimal.ts';
import { TOKEN_KINDS, tokenCountProblems, type TokenKind } from '../pricing/index.ts';

/** The largest quantity the schema lets through as `quantity`; one derived from usage_data, and every token count, obey it too. */
const MAX_QUANTITY = new Exact(USAGE_LIMITS.MAX_QUANTITY);

/**
 * The quantity, each token count the event carries (null when it carries none of that kind), and a
 * realtime model's connected seconds (null when not carried).
 */
export type Quantities = { readonly quantity: string; readonly session_duration_seconds: string | null } & {
  readonly [K in TokenKind]: string | null;
};
type Sent = { quantity?: string; usage_data?: UsageData; session_duration_seconds?: string } & {
  [K in TokenKind]?: number;
};

const SESSION_FIELD = 'session_duration_seconds';

type UsageData = Readonly<Record<string, unknown>>;

const problem = (field: string, msg: string, input: unknown): ValidationItem => ({
  type: 'value_error',
  loc: ['body', field],
  msg: `Value error, ${msg}`,
  input,
  ctx: { error: {} },
});

/**
 * The quantity of an event in its type's unit, from `quantity` when sent, else from the workers'
 * `usage_data` (compat.md) or the exact token counts. Seconds become minutes by an exact division
 * rounded to 18 decimals, the only rounding on the way in.
 */
export function usageQuantities(eventType: string, sent: Sent): Quantities | ValidationItem {
  const data = sent.usage_data ?? {};
  const tokens = {} as { [K in TokenKind]: string | null };
  for (const kind of TOKEN_KINDS) {
    const count = tokenCount(kind, sent, data);
    if (typeof count === 'object' && count !== null) return count;
    tokens[kind] = count;
  }
  const nesting = tokenCountProblems(
    Object.fromEntries(TOKEN_KINDS.flatMap((kind) => (tokens[kind] === null ? [] : [[kind, tokens[kind]]]))),
  );
  const [first] = nesting;
  if (first !== undefined) {
    const atTop = sent[first.kind] !== undefined;
    return {
      ...problem(first.kind, first.message, atTop ? sent[first.kind] : data[first.kind]),
      loc: atTop ? ['body', first.kind] : ['body', 'usage_data', first.kind],
    };
  }
  const session = sessionSeconds(eventType, sent, data);
  if (typeof session === 'object' && session !== null) return session;
  const measured = { session_duration_seconds: session, ...tokens };
  if (sent.quantity !== undefined) return { quantity: plain(new Exact(sent.quantity)), ...measured };
  const derived = fromUsageData(eventType, data, tokens);
  // Connected time alone (a realtime session's last report) is an LLM event of no tokens.
  if (derived === null && session !== null) return { quantity: '0', ...measured };
  if (derived === null) return { type: 'missing', loc: ['body', 'quantity'], msg: 'Field required', input: sent };
  if (derived instanceof Error) return problem('usage_data', derived.message, sent.usage_data);
  return { quantity: derived, ...measured };
}

/**
 * A realtime model's connected seconds, sent at the top (a decimal the schema bounded) or in usage_data
 * (checked here the same way): only an LLM event has them.
 */
function sessionSeconds(eventType: string, sent: Sent, data: UsageData): string | null | ValidationItem {
  const value = sent[SESSION_FIELD] ?? data[SESSION_FIELD];
  if (value === undefined || value === null) return null;
  const loc = sent[SESSION_FIELD] === undefined ? ['body', 'usage_data', SESSION_FIELD] : ['body', SESSION_FIELD];
  if (eventType !== 'llm_tokens')
    return {
      ...problem(
        SESSION_FIELD,
        `${SESSION_FIELD} is a realtime model's connected time: only llm_tokens events carry it`,
        value,
      ),
      loc,
    };
  const parsed = decimalOf(value);
  if (parsed === null || parsed.isNegative() || parsed.greaterThan(MAX_QUANTITY))
    return {
      ...problem(SESSION_FIELD, `${SESSION_FIELD} must be a number from 0 to ${MAX_QUANTITY.toFixed()}`, value),
      loc,
    };
  return plain(parsed);
}

function fromUsageData(
  eventType: string,
  data: UsageData,
  tokens: { input_tokens: string | null; output_tokens: string | null },
): string | Error | null {
  if (eventType === 'llm_tokens' && (tokens.input_tokens !== null || tokens.output_tokens !== null)) {
    const sum = new Exact(tokens.input_tokens ?? 0).plus(tokens.output_tokens ?? 0);
    if (sum.greaterThan(MAX_QUANTITY))
      return new Error(
        `input_tokens + output_tokens is ${sum.toFixed()}, over the limit of ${MAX_QUANTITY.toFixed()} tokens for one event`,
      );
    return plain(sum);
  }
  const [field, divisor] =
    eventType === 'stt_minutes'
      ? ['audio_duration_seconds', 60]
      : eventType === 'tts_characters'
        ? ['character_count', 1]
        : [null, 1];
  if (field === null || data[field] === undefined) return null;
  const value = decimalOf(data[field]);
  if (value === null || value.isNegative()) return new Error(`usage_data.${field} must be a number >= 0`);
  const quantity = value.dividedBy(divisor);
  if (quantity.greaterThan(MAX_QUANTITY))
    return new Error(`usage_data.${field} is too large: at most ${MAX_QUANTITY.times(divisor).toFixed()}`);
  return plain(quantity);
}

/**
 * A token count, sent at the top (bounded by the schema) or in usage_data: over MAX_QUANTITY is
 * pydantic's less_than_equal at the field, anything else but a whole number a value_error.
 */
function tokenCount(field: TokenKind, sent: Sent, data: UsageData): string | null | ValidationItem {
  const value = sent[field] ?? data[field];
  if (value === undefined || value === null) return null;
  const parsed = decimalOf(value);
  const loc = sent[field] === undefined ? ['body', 'usage_data', field] : ['body', field];
  if (parsed === null || parsed.isNegative() || !parsed.isInteger())
    return { ...problem(field, `token counts are whole numbers from 0 to ${MAX_QUANTITY.toFixed()}`, value), loc };
  if (parsed.greaterThan(MAX_QUANTITY)) {
    return {
      type: 'less_than_equal',
      loc,
      msg: `Input should be less than or equal to ${MAX_QUANTITY.toFixed()}`,
      input: value,
      ctx: { le: USAGE_LIMITS.MAX_QUANTITY },
    };
  }
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
