/**
 * The names pricing speaks in, shared by the wire schemas (schemas/http/) and the pricer
 * (services/domain/pricing). They live here, with no import, so the schemas stay a leaf.
 */

/**
 * The token counts a usage event may carry, each a whole number, counted as OpenAI and LiveKit count
 * them: `input_tokens` is every prompt token (cached and audio ones included), `output_tokens` every
 * completion token (audio and reasoning included); the others are parts of those two.
 */
export const TOKEN_KINDS = [
  'input_tokens',
  'cached_input_tokens',
  'cache_write_tokens',
  'audio_input_tokens',
  'cached_audio_input_tokens',
  'image_input_tokens',
  'cached_image_input_tokens',
  'output_tokens',
  'audio_output_tokens',
  'reasoning_tokens',
] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];
export type TokenCounts = Partial<Record<TokenKind, string>>;

/** A realtime model's connected time, in seconds: priced where the vendor bills time. */
export const SESSION_DIMENSION = 'session_duration_seconds';

/**
 * What one price multiplied: the event's quantity, one token kind, (a few catalog models) the request,
 * or a realtime model's connected seconds.
 */
export const COST_DIMENSIONS = ['quantity', ...TOKEN_KINDS, 'requests', SESSION_DIMENSION] as const;
export type CostDimension = (typeof COST_DIMENSIONS)[number];

/** Where a price came from: the rate card (a tenant's own entries included) or the built-in catalog. */
export const PRICE_SCOPES = ['card', 'tenant', 'catalog'] as const;
export type PriceScope = (typeof PRICE_SCOPES)[number];

/** Where an event's cost came from: the prices, the sender's own figures, or nothing (cost 0, listed as unpriced). */
export const COST_SOURCES = ['computed', 'reported', 'unpriced'] as const;
export type CostSource = (typeof COST_SOURCES)[number];
