import { createHash, randomUUID } from 'node:crypto';

/** One usage event as POST /api/usage/events/batch takes it, fixed at record time. */
export type UsageBody = Record<string, unknown> & { readonly event_id: string };

export type Quantity = number | bigint | string;

/** The fields a usage event may carry besides its identity (docs/usage-events.md; docs/pricing.md, Token kinds). */
export const QUANTITY_FIELDS = new Set([
  'quantity',
  'unit_cost',
  'total_cost',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'audio_input_tokens',
  'cached_audio_input_tokens',
  'audio_output_tokens',
  'reasoning_tokens',
  'image_input_tokens',
  'cached_image_input_tokens',
  'session_duration_seconds',
]);

const NAMESPACE_URL = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

/**
 * RFC 4122 version 5 (SHA-1, name-based). By hand because the package has no runtime dependency
 * beyond Node (the `uuid` package would be one), and Node's crypto has no v5.
 */
export function uuid5(namespace: string, name: string): string {
  const bytes = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The same namespace as the Python client's, so a key recorded by either is the same event. */
export const EVENT_NAMESPACE = uuid5(NAMESPACE_URL, 'https://callmeter.dev/usage-event');

export function eventIdFor(userId: string, key: string | undefined): string {
  return key === undefined ? randomUUID() : uuid5(EVENT_NAMESPACE, `${userId}:${key}`);
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** A quantity as the wire carries it exactly: an integer, or a plain decimal string. Never float arithmetic. */
export function exact(value: Quantity, field: string): number | string {
  if (typeof value === 'bigint') return value >= 0n ? value.toString() : fail(field, value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return fail(field, value);
    if (Number.isSafeInteger(value)) return value;
    // String() is the shortest text that reads back as this double ("0.1"), in plain notation here.
    value = plain(String(value));
  }
  if (typeof value !== 'string') return fail(field, value);
  const match = DECIMAL.exec(value.trim());
  if (match === null) return fail(field, value);
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction !== '') return `${whole}.${fraction}`;
  const integer = Number(whole);
  return Number.isSafeInteger(integer) ? integer : whole;
}

function fail(field: string, value: unknown): never {
  throw new TypeError(`${field}: ${String(value)} is not a non-negative decimal quantity`);
}

/** "1e-7" -> "0.0000001", "1.5e+21" -> "1500000000000000000000": exponent notation moved into the digits. */
export function plain(text: string): string {
  const match = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  return shiftDecimal(`${match[1]}${match[2] ? `.${match[2]}` : ''}`, Number(match[3]));
}

/** Moves the decimal point of a plain decimal string by `places` (negative: left), exactly. */
export function shiftDecimal(text: string, places: number): string {
  const [whole, fraction = ''] = text.split('.') as [string, string?];
  let digits = whole + fraction;
  let point = whole.length + places;
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const result = `${digits.slice(0, point)}.${digits.slice(point)}`
    .replace(/^0+(?=\d)/, '')
    .replace(/0+$/, '')
    .replace(/\.$/, '');
  return result === '' ? '0' : result;
}

/** ISO 8601 in UTC with milliseconds; a number is milliseconds since the epoch (as LiveKit for Node stamps metrics). */
export function timestampText(when: Date | number | undefined): string {
  return (when === undefined ? new Date() : new Date(when)).toISOString();
}

export interface RecordFields {
  readonly sessionId: string;
  readonly userId: string;
  readonly provider: string;
  readonly eventType: string;
  readonly model?: string | undefined;
  readonly agentId?: string | undefined;
  readonly key?: string | undefined;
  readonly timestamp?: Date | number | undefined;
  /** Top-level quantities: quantity, unit_cost, total_cost and the token kinds. */
  readonly quantities?: Readonly<Record<string, Quantity>>;
  readonly usageData?: Readonly<Record<string, Quantity>>;
}

/** The body of one usage event, complete at record time, so any resend is the same event. */
export function usageBody(fields: RecordFields): UsageBody {
  const body: Record<string, unknown> = {
    session_id: fields.sessionId,
    user_id: fields.userId,
    provider: fields.provider,
    event_type: fields.eventType,
    event_id: eventIdFor(fields.userId, fields.key),
    timestamp: timestampText(fields.timestamp),
  };
  if (fields.model !== undefined) body.model = fields.model;
  if (fields.agentId !== undefined) body.agent_id = fields.agentId;
  for (const [name, value] of Object.entries(fields.quantities ?? {})) {
    if (!QUANTITY_FIELDS.has(name)) throw new TypeError(`record(): unexpected quantity ${name}`);
    body[name] = exact(value, name);
  }
  if (fields.usageData !== undefined)
    body.usage_data = Object.fromEntries(
      Object.entries(fields.usageData).map(([name, value]) => [name, exact(value, `usage_data.${name}`)]),
    );
  if (body.quantity === undefined && body.usage_data === undefined)
    throw new TypeError('record() needs a quantity or usageData');
  return body as UsageBody;
}
