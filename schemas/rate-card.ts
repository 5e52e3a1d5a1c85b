import type { FromSchema } from 'json-schema-to-ts';
import { TOKEN_KINDS } from './pricing-terms.ts';

// A sign is allowed here so that a negative price reaches the semantic checks, which name the rate.
const decimal = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' } as const;
const name = { type: 'string', minLength: 1 } as const;

const serviceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['service', 'unit'],
  properties: { service: name, unit: name },
} as const;

/**
 * One price, in force from `effective_from` until a later entry with the same key replaces it.
 * `price` is for `price_per` units, so per-1K and per-1M prices are written as published.
 * An entry names exactly one of `event_type` and `service`; that rule is checked with the card's
 * other semantic checks (rate-card-problems.ts) rather than by a `oneOf` here, so that its message
 * names the rate instead of an array index.
 */
const rateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'provider', 'unit', 'price', 'price_per', 'pricing', 'effective_from'],
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$' },
    event_type: name,
    /** Every event type whose `services` entry has this service (`stt`, `llm`, `tts`). */
    service: name,
    /** `*` prices every provider that has no entry of its own. */
    provider: name,
    model: name,
    /** A negotiated price for one user; it beats every general entry. */
    user_id: name,
    unit: name,
    price: decimal,
    price_per: decimal,
    /**
     * What the price multiplies: the event's quantity, or one token kind of an exact split (fresh text
     * input, cached input, cache writes, audio input, cached audio input, text output, audio output,
     * reasoning; services/domain/pricing/token-kinds.ts). A kind without a price of its own is charged
     * as the kind it is part of.
     */
    pricing: { enum: ['quantity', ...TOKEN_KINDS] },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    effective_from: { type: 'string', format: 'date-time' },
    /** When the entry stops applying (absent: until a later entry of the same key replaces it); a tenant entry ended by DELETE has it. */
    effective_to: { type: 'string', format: 'date-time' },
    /** JSON has no comments: why a price is what it is goes here. */
    note: { type: 'string' },
  },
} as const;

/** The rate card: every price callmeter applies, in one versioned file (infra/rate-card/rate-card.json). */
export const rateCardSchema = {
  $id: 'callmeter/rate-card',
  type: 'object',
  additionalProperties: false,
  required: ['version', 'currency', 'services', 'provider_aliases', 'rates'],
  properties: {
    /** The format of this file; a loader reads only the version it was written for. */
    version: { const: 1 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    /** Known event types and the unit of their quantity. */
    services: { type: 'object', additionalProperties: serviceSchema },
    /** Another name of a provider → the provider id its rates are written under. */
    provider_aliases: { type: 'object', additionalProperties: name },
    rates: { type: 'array', items: rateSchema },
  },
} as const;

/** The card as written in the file. */
export type RateCardFile = FromSchema<typeof rateCardSchema>;
/** One entry as written: `event_type` or `service`. */
export type RateEntry = RateCardFile['rates'][number];
/**
 * One entry as lookups see it, after loading: always for one event type. An entry written with a
 * `service` becomes one Rate per event type of that service, each keeping the entry's `id` and its
 * `service` (which only tells lookups that the entry was written for the whole service).
 */
export type Rate = Omit<RateEntry, 'event_type'> & Required<Pick<RateEntry, 'event_type'>>;
/** A loaded card (load-rate-card.ts): every rate resolved to its event type. */
export type RateCard = Omit<RateCardFile, 'rates'> & { rates: Rate[] };
export type RatePricing = Rate['pricing'];
