import fc from 'fast-check';
import { USAGE_LIMITS } from '../../schemas/records/usage.ts';
import { Exact, toStoredDecimal } from '../../services/shared/exact-decimal.ts';

/**
 * Generated usage events around and past every bound of USAGE_LIMITS and the time window, each with
 * the verdict the documented limits give it and the exact cost it must add when accepted.
 */
export type HostileKind = 'unit_cost' | 'total_cost' | 'both' | 'tokens' | 'priced';

export type TimeChoice =
  | { readonly kind: 'none' }
  | { readonly kind: 'relative'; readonly ms: number }
  | { readonly kind: 'absolute'; readonly iso: string };

export interface HostileEvent {
  readonly kind: HostileKind;
  /** Which hostile tenant sends it, and to which of its sessions. */
  readonly tenant: number;
  readonly session: number;
  /** A fresh event id, or one drawn (by this fraction) from the ids sent before, any tenant's. */
  readonly reuse: number | null;
  readonly quantity: string;
  readonly unitCost: string;
  readonly totalCost: string;
  readonly inputTokens: string;
  readonly outputTokens: string;
  readonly asNumber: boolean;
  readonly time: TimeChoice;
}

const DAY_MS = 86_400_000;
export const MAX_AGE_MS = 35 * DAY_MS;
const FUTURE_MS = 5 * 60_000;
/** Instants closer than this to an edge of the window may go either way (the clocks of client and server). */
const EDGE_MARGIN_MS = 30_000;
const MAX_QUANTITY = new Exact(USAGE_LIMITS.MAX_QUANTITY);
const MAX_REPORTED = new Exact(USAGE_LIMITS.MAX_REPORTED_COST);
// The default card's split token prices (google): 0.30 and 2.50 per 1M tokens.
const INPUT_PRICE = new Exact('0.30').div(1e6);
const OUTPUT_PRICE = new Exact('2.50').div(1e6);
const DEEPGRAM_PER_MINUTE = new Exact('0.0077');

/** A decimal of 10^0 to 10^20 with up to 24 decimals, or a value at or one step past a bound. */
function magnitude(bounds: readonly string[]): fc.Arbitrary<string> {
  const generated = fc
    .tuple(
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 0, max: 24 }),
      fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    )
    .chain(([digits, decimals, negative]) =>
      fc.tuple(
        fc.bigInt({ min: 0n, max: 10n ** BigInt(digits) }),
        fc.bigInt({ min: 0n, max: 10n ** BigInt(decimals) - 1n }),
        fc.constant(decimals),
        fc.constant(negative),
      ),
    )
    .map(
      ([whole, fraction, decimals, negative]) =>
        `${negative && whole + fraction > 0n ? '-' : ''}${whole}${decimals > 0 ? `.${String(fraction).padStart(decimals, '0')}` : ''}`,
    );
  return fc.oneof({ weight: 3, arbitrary: generated }, { weight: 1, arbitrary: fc.constantFrom(...bounds) });
}

const QUANTITY_BOUNDS = [
  '1000000000000',
  '1000000000000.000000000000000001',
  '1000000000001',
  '0',
  '0.0000000000000000001',
  '100000000000000000000000',
];
const COST_BOUNDS = [
  '1000000',
  '1000000.000000000000000001',
  '0.000001',
  '0.000001000000000001',
  '0.000000000000000001',
  '0',
];
const TOKEN_BOUNDS = ['1000000000000', '1000000000001', '500000000000', '500000000001', '0'];

const tokens = fc.oneof(
  fc.constantFrom(...TOKEN_BOUNDS),
  fc
    .integer({ min: 0, max: 13 })
    .chain((digits) => fc.bigInt({ min: 0n, max: 10n ** BigInt(digits) }))
    .map(String),
);

/** Around the 35-day edge, around the 5-minute edge, anywhere inside, or a date of years 1000 to 9999. */
const time: fc.Arbitrary<TimeChoice> = fc.oneof(
  fc.constant({ kind: 'none' } as const),
  fc
    .integer({ min: -2 * 3_600_000, max: 2 * 3_600_000 })
    .map((ms) => ({ kind: 'relative', ms: -MAX_AGE_MS + ms }) as const),
  fc.integer({ min: -120_000, max: 120_000 }).map((ms) => ({ kind: 'relative', ms: FUTURE_MS + ms }) as const),
  fc.integer({ min: -MAX_AGE_MS + 60_000, max: 0 }).map((ms) => ({ kind: 'relative', ms }) as const),
  fc
    .date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((date) => ({ kind: 'absolute', iso: date.toISOString() }) as const),
);

export function hostileEvent(tenants: number): fc.Arbitrary<HostileEvent> {
  return fc.record({
    kind: fc.constantFrom<HostileKind>('unit_cost', 'total_cost', 'both', 'tokens', 'priced'),
    tenant: fc.integer({ min: 0, max: tenants - 1 }),
    session: fc.integer({ min: 0, max: 1 }),
    reuse: fc.oneof(
      { weight: 5, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 999_999 }).map((n) => n / 1_000_000) },
    ),
    quantity: magnitude(QUANTITY_BOUNDS),
    unitCost: magnitude(COST_BOUNDS),
    totalCost: magnitude(COST_BOUNDS),
    inputTokens: tokens,
    outputTokens: tokens,
    asNumber: fc.boolean(),
    time,
  });
}

/** A batch of 1 to 1,000 generated events, valid and invalid mixed. */
export function hostileBatch(tenants: number): fc.Arbitrary<HostileEvent[]> {
  return fc
    .integer({ min: 1, max: 1000 })
    .chain((size) => fc.array(hostileEvent(tenants), { minLength: size, maxLength: size }));
}

/** The instant the event claims, in ms since the epoch (null: receipt time), resolved when it is sent. */
export function timestampOf(time: TimeChoice, nowMs: number): string | null {
  if (time.kind === 'none') return null;
  return time.kind === 'absolute' ? time.iso : new Date(nowMs + time.ms).toISOString();
}

/** The body a hostile client sends for this event. */
export function hostileBody(
  event: HostileEvent,
  ids: { session_id: string; user_id: string; event_id: string },
  timestamp: string | null,
): Record<string, unknown> {
  const quantity = event.asNumber && /^\d{1,15}$/.test(event.quantity) ? Number(event.quantity) : event.quantity;
  const base = { ...ids, ...(timestamp === null ? {} : { timestamp }) };
  switch (event.kind) {
    case 'unit_cost':
      return { ...base, provider: 'acme-unknown', event_type: 'tts_characters', quantity, unit_cost: event.unitCost };
    case 'total_cost':
      return { ...base, provider: 'acme-unknown', event_type: 'tts_characters', quantity, total_cost: event.totalCost };
    case 'both':
      return {
        ...base,
        provider: 'acme-unknown',
        event_type: 'stt_minutes',
        quantity,
        unit_cost: event.unitCost,
        total_cost: event.totalCost,
      };
    case 'tokens':
      return {
        ...base,
        provider: 'gemini',
        event_type: 'llm_tokens',
        usage_data: { input_tokens: Number(event.inputTokens), output_tokens: Number(event.outputTokens) },
      };
    case 'priced':
      return { ...base, provider: 'Deepgram', event_type: 'stt_minutes', quantity };
  }
}

export interface Verdict {
  /** true: within every bound; false: past one; null: too close to a time edge to say. */
  readonly valid: boolean | null;
  /** The exact cost the views must add when the event is accepted (the stored, rounded one). */
  readonly cost: Exact;
}

/** What the documented limits say of this event sent at `sentAtMs`, and what it costs when stored. */
export function verdictOf(event: HostileEvent, timestamp: string | null, sentAtMs: number): Verdict {
  const money = moneyVerdict(event);
  const timeValid = timeVerdict(timestamp, sentAtMs);
  const valid = !money.valid ? false : timeValid;
  return { valid, cost: money.cost };
}

function moneyVerdict(event: HostileEvent): { valid: boolean; cost: Exact } {
  if (event.kind === 'tokens') {
    const [input, output] = [new Exact(event.inputTokens), new Exact(event.outputTokens)];
    const valid = input.lte(MAX_QUANTITY) && output.lte(MAX_QUANTITY) && input.plus(output).lte(MAX_QUANTITY);
    return { valid, cost: input.times(INPUT_PRICE).plus(output.times(OUTPUT_PRICE)) };
  }
  const raw = new Exact(event.quantity);
  const quantity = new Exact(toStoredDecimal(raw));
  const quantityValid = !raw.isNegative() && raw.lte(MAX_QUANTITY);
  const unit = new Exact(event.unitCost);
  const total = new Exact(event.totalCost);
  const costValid = (value: Exact) => !value.isNegative() && value.lte(MAX_REPORTED);
  switch (event.kind) {
    case 'priced':
      return { valid: quantityValid, cost: stored(quantity.times(DEEPGRAM_PER_MINUTE)) };
    case 'unit_cost':
      return {
        valid: quantityValid && costValid(unit) && quantity.times(unit).lte(MAX_REPORTED),
        cost: stored(quantity.times(unit)),
      };
    case 'total_cost':
      return {
        valid: quantityValid && costValid(total) && (quantity.isZero() || total.div(quantity).lte(MAX_REPORTED)),
        cost: stored(total),
      };
    case 'both':
      return { valid: quantityValid && costValid(unit) && costValid(total), cost: stored(total) };
  }
}

function timeVerdict(timestamp: string | null, sentAtMs: number): boolean | null {
  if (timestamp === null) return true;
  const offset = Date.parse(timestamp) - sentAtMs;
  if (Math.abs(offset - FUTURE_MS) < EDGE_MARGIN_MS || Math.abs(offset + MAX_AGE_MS) < EDGE_MARGIN_MS) return null;
  return offset < FUTURE_MS && offset > -MAX_AGE_MS;
}

function stored(value: Exact): Exact {
  return new Exact(toStoredDecimal(value));
}
