import { SESSION_DIMENSION } from '../../../schemas/pricing-terms.ts';
import {
  calcPrice,
  findProvider,
  type ModelInfo,
  type ModelPrice,
  type Provider,
  type TieredPrices,
} from '@pydantic/genai-prices';
import { Exact } from '../../shared/exact-decimal.ts';
import { chargedTokens, TOKEN_KINDS, type TokenCounts, type TokenKind } from './token-kinds.ts';

/** The catalog package's version: part of every catalog rate id, so a stored event names the prices that priced it. */
export const LLM_CATALOG_VERSION = '0.1.8';

/**
 * The provider ids fleets send (LiveKit's and Pipecat's plugin names) that the catalog files under
 * another id; any other id is looked up as sent.
 */
const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  gemini: 'google',
  vertex: 'google',
  vertexai: 'google',
  'google-vertex': 'google',
  xai: 'x-ai',
  grok: 'x-ai',
  mistralai: 'mistral',
  bedrock: 'aws',
  'aws-bedrock': 'aws',
  'azure-openai': 'azure',
  'together-ai': 'together',
  togetherai: 'together',
  'fireworks-ai': 'fireworks',
};

/** The LLM providers the rates API lists from the catalog (every provider id it knows still prices). */
export const LISTED_LLM_PROVIDERS = [
  'openai',
  'anthropic',
  'google',
  'groq',
  'mistral',
  'deepseek',
  'x-ai',
  'cerebras',
  'together',
  'fireworks',
  'azure',
  'aws',
  'perplexity',
  'cohere',
  'openrouter',
] as const;

/** The catalog's price key of each token kind, per million tokens (its prices/units.yml). */
const PRICE_KEYS: Readonly<Record<TokenKind, string>> = {
  input_tokens: 'input_mtok',
  cached_input_tokens: 'cache_read_mtok',
  cache_write_tokens: 'cache_write_mtok',
  audio_input_tokens: 'input_audio_mtok',
  cached_audio_input_tokens: 'cache_audio_read_mtok',
  image_input_tokens: 'input_image_mtok',
  cached_image_input_tokens: 'cache_image_read_mtok',
  output_tokens: 'output_mtok',
  audio_output_tokens: 'output_audio_mtok',
  reasoning_tokens: 'output_reasoning_mtok',
};
const PER_MILLION = new Exact(1_000_000);
/** A few models also charge per request (the catalog's `requests_kcount`, per 1,000 requests). */
const REQUESTS_KEY = 'requests_kcount';
const PER_THOUSAND = new Exact(1_000);
/**
 * A realtime model billed by the time it is connected (xAI's voice agent API) has the catalog's
 * `audio_hours` price (its unit `audio_seconds`: audio time, no direction), charged here on the event's
 * `session_duration_seconds`, per 3,600 seconds as published. A model that bills tokens has no such
 * price, so its connected time costs nothing.
 */
const TIME_KEY = 'audio_hours';
/** Audio in, per hour: what a transcription model's minutes are priced at. */
const INPUT_AUDIO_TIME_KEY = 'input_audio_hours';
const PER_HOUR = new Exact(3_600);
export { SESSION_DIMENSION };

export type CatalogDimension = TokenKind | 'requests' | typeof SESSION_DIMENSION;

/** One priced part of an event: quantity × price ÷ per, exactly. */
export interface CatalogComponent {
  readonly dimension: CatalogDimension;
  readonly quantity: Exact;
  readonly price: Exact;
  readonly per: Exact;
  readonly cost: Exact;
}

export interface CatalogPrice {
  /** `genai-prices@<version>:<provider>:<model>[@<start date>]`: which catalog prices applied. */
  readonly rate_id: string;
  readonly provider: string;
  readonly model: string;
  readonly components: readonly CatalogComponent[];
  readonly cost: Exact;
}

interface ResolvedModel {
  readonly provider: Provider;
  readonly model: ModelInfo;
}

/** At most this many (provider, model) names are remembered; past it the memory starts again. */
const RESOLVED_LIMIT = 10_000;

/**
 * Prices LLM token usage from the genai-prices package (MIT, pinned, bundled data, never fetched at run
 * time). The package chooses the model (its name matching: dated snapshots, prefixes) and the prices in
 * force at the event's time; the arithmetic is done here in exact decimals, since the package sums floats.
 */
export class LlmCatalog {
  private readonly resolved = new Map<string, ResolvedModel | null>();

  /** The catalog model a provider's model name prices as, or null; remembered, so later events are a map lookup. */
  resolve(provider: string, model: string): ResolvedModel | null {
    const key = `${provider}\u0000${model}`;
    const known = this.resolved.get(key);
    if (known !== undefined) return known;
    if (this.resolved.size >= RESOLVED_LIMIT) this.resolved.clear();
    const found = lookUp(provider, model);
    this.resolved.set(key, found);
    return found;
  }

  /** The catalog's id of a provider a fleet names (an alias resolved). */
  providerId(provider: string): string {
    return PROVIDER_ALIASES[provider.toLowerCase()] ?? provider.toLowerCase();
  }

  /** Every model the catalog lists for a provider; none for a provider it does not know. */
  models(provider: string): readonly ModelInfo[] {
    return findProvider({ providerId: this.providerId(provider) })?.models ?? [];
  }

  /** The model's prices at `at`, since when they apply (null: no start date) and until when (the next dated entry). */
  pricesAt(model: ModelInfo, at: Date): { prices: ModelPrice; since: string | null; until: string | null } {
    const inForce = pricesInForce(model, at);
    const starts = Array.isArray(model.prices)
      ? model.prices.flatMap((entry) => (entry.constraint?.type === 'start_date' ? [entry.constraint.start_date] : []))
      : [];
    const until = starts.filter((start) => new Date(start).getTime() > at.getTime()).sort()[0] ?? null;
    return { ...inForce, until };
  }

  /**
   * The exact cost at `at` of the token counts (null: the event carries none) and of the connected time
   * (`sessionSeconds`, null when not carried), or null when the catalog cannot price it: no such model,
   * tokens carried that the model has no token price for and no time to bill instead, or only time
   * carried for a model that bills none. Connected time is charged only where the model has a time price.
   */
  price(
    provider: string,
    model: string,
    counts: TokenCounts | null,
    at: Date,
    sessionSeconds: Exact | null = null,
  ): CatalogPrice | null {
    const resolved = this.resolve(provider.toLowerCase(), model.toLowerCase());
    if (resolved === null) return null;
    const { prices, since } = pricesInForce(resolved.model, at);
    const { priced, exact } = prepared(prices);
    const timePrice = prices[TIME_KEY];
    if (priced.size === 0 && timePrice === undefined) return null;
    // A model billed only by time prices an event by its time: tokens without time cannot be priced.
    if (priced.size === 0 && counts !== null && sessionSeconds === null) return null;
    const components: CatalogComponent[] = [];
    if (counts !== null && priced.size > 0) components.push(...tokenComponents(prices, priced, exact, counts));
    if (sessionSeconds !== null && timePrice !== undefined) {
      const price = priceAt(timePrice, new Exact(0));
      components.push({
        dimension: SESSION_DIMENSION,
        quantity: sessionSeconds,
        price,
        per: PER_HOUR,
        cost: sessionSeconds.times(price).dividedBy(PER_HOUR),
      });
    }
    // Only connected time, of a model that bills none: nothing here to price (listed as unpriced, never a silent 0).
    if (components.length === 0) return null;
    return {
      rate_id: rateIdOf(resolved, since),
      provider: resolved.provider.id,
      model: resolved.model.id,
      components,
      cost: Exact.sum(0, ...components.map((part) => part.cost)),
    };
  }

  /**
   * A transcription model's price per hour of audio in at `at` (the catalog's `input_audio_hours`, else
   * its `audio_hours`: whisper-1, gpt-transcribe, Groq's whisper models), or null when it has neither.
   */
  audioHourPrice(provider: string, model: string, at: Date): { price: Exact; rate_id: string } | null {
    const resolved = this.resolve(provider.toLowerCase(), model.toLowerCase());
    if (resolved === null) return null;
    const { prices, since } = pricesInForce(resolved.model, at);
    const price = prices[INPUT_AUDIO_TIME_KEY] ?? prices[TIME_KEY];
    return price === undefined ? null : { price: priceAt(price, new Exact(0)), rate_id: rateIdOf(resolved, since) };
  }
}

/** Each priced token kind's part (the event's kinds charged as token-kinds.ts says), and the per-request price if any. */
function tokenComponents(
  prices: ModelPrice,
  priced: ReadonlySet<TokenKind>,
  exact: ReadonlyMap<TokenKind, Exact>,
  counts: TokenCounts,
): CatalogComponent[] {
  // A tiered price depends on the prompt's size; a flat one was parsed once.
  const totalInput = new Exact(counts.input_tokens ?? 0);
  const components: CatalogComponent[] = [];
  for (const [kind, quantity] of chargedTokens(counts, priced)) {
    // A kind the event does not carry and that charges nothing is no part of its cost (as on the card).
    if (counts[kind] === undefined && quantity.isZero()) continue;
    const price = exact.get(kind) ?? priceAt(prices[PRICE_KEYS[kind]], totalInput);
    components.push({
      dimension: kind,
      quantity,
      price,
      per: PER_MILLION,
      cost: quantity.times(price).dividedBy(PER_MILLION),
    });
  }
  const requests = prices[REQUESTS_KEY];
  if (requests !== undefined) {
    const price = priceAt(requests, totalInput);
    components.push({
      dimension: 'requests',
      quantity: new Exact(1),
      price,
      per: PER_THOUSAND,
      cost: price.dividedBy(PER_THOUSAND),
    });
  }
  components.sort(
    (a, b) => TOKEN_KINDS.indexOf(a.dimension as TokenKind) - TOKEN_KINDS.indexOf(b.dimension as TokenKind),
  );
  return components;
}

const rateIds = new WeakMap<ModelInfo, Map<string, string>>();

/** `genai-prices@<version>:<provider>:<model>[@<start date>]`, built once per model and start. */
function rateIdOf(resolved: ResolvedModel, since: string | null): string {
  let ids = rateIds.get(resolved.model);
  if (ids === undefined) rateIds.set(resolved.model, (ids = new Map()));
  let id = ids.get(since ?? '');
  if (id === undefined)
    ids.set(
      since ?? '',
      (id = `genai-prices@${LLM_CATALOG_VERSION}:${resolved.provider.id}:${resolved.model.id}${since === null ? '' : `@${since}`}`),
    );
  return id;
}

const preparedPrices = new WeakMap<
  ModelPrice,
  { priced: ReadonlySet<TokenKind>; exact: ReadonlyMap<TokenKind, Exact> }
>();

/** The kinds a price entry prices and its flat prices as exact decimals, worked out once per entry (tiered ones depend on the event). */
function prepared(prices: ModelPrice): { priced: ReadonlySet<TokenKind>; exact: ReadonlyMap<TokenKind, Exact> } {
  let found = preparedPrices.get(prices);
  if (found === undefined) {
    const priced = new Set(TOKEN_KINDS.filter((kind) => prices[PRICE_KEYS[kind]] !== undefined));
    const exact = new Map<TokenKind, Exact>();
    for (const kind of priced) {
      const price = prices[PRICE_KEYS[kind]];
      if (typeof price === 'number') exact.set(kind, exactOf(price));
    }
    found = { priced, exact };
    preparedPrices.set(prices, found);
  }
  return found;
}

function lookUp(provider: string, model: string): ResolvedModel | null {
  const providerId = PROVIDER_ALIASES[provider] ?? provider;
  if (findProvider({ providerId }) === undefined) return null;
  // calcPrice is the package's one public door to its model matching; the usage is a placeholder.
  const result = calcPrice({ input_tokens: 0 }, model, { providerId, timestamp: new Date(0) });
  return result === null ? null : { provider: result.provider, model: result.model };
}

/**
 * The model's prices at `at`, as the package picks them: the last entry whose constraint holds (a start
 * date on or before `at`, or a time-of-day window containing it), else the first; `since` is the start
 * date of the chosen entry, if it has one.
 */
export function pricesInForce(model: ModelInfo, at: Date): { prices: ModelPrice; since: string | null } {
  if (!Array.isArray(model.prices)) return { prices: model.prices, since: null };
  for (let i = model.prices.length - 1; i >= 0; i -= 1) {
    const entry = model.prices[i]!;
    const constraint = entry.constraint;
    if (constraint === undefined) return { prices: entry.prices, since: null };
    if (constraint.type === 'start_date' && at.getTime() >= new Date(constraint.start_date).getTime())
      return { prices: entry.prices, since: constraint.start_date };
    if (constraint.type === 'time_of_date' && withinTimeOfDay(constraint.start_time, constraint.end_time, at))
      return { prices: entry.prices, since: null };
  }
  return { prices: model.prices[0]!.prices, since: null };
}

function withinTimeOfDay(start: string, end: string, at: Date): boolean {
  // Written as UTC clock times, `00:30:00Z`.
  const seconds = (text: string) =>
    text
      .replace(/Z$/, '')
      .split(':')
      .reduce((total, part) => total * 60 + Number(part), 0);
  const now = at.getUTCHours() * 3600 + at.getUTCMinutes() * 60 + at.getUTCSeconds() + at.getUTCMilliseconds() / 1000;
  const [from, to] = [seconds(start), seconds(end)];
  return to < from ? now >= from || now < to : now >= from && now < to;
}

/** A flat price, or the tier whose start the event's total input tokens exceed (the package's rule). */
function priceAt(price: number | TieredPrices | undefined, totalInput: Exact): Exact {
  if (price === undefined) return new Exact(0);
  if (typeof price === 'number') return exactOf(price);
  let chosen = price.base;
  for (const tier of price.tiers) if (totalInput.greaterThan(tier.start)) chosen = tier.price;
  return exactOf(chosen);
}

/** The catalog's prices are decimal literals in its YAML; the shortest text of the float is that literal. */
function exactOf(value: number): Exact {
  return new Exact(String(value));
}

/** A model's price of one token kind per million tokens (a tiered price's base), or null when it has none. */
export function llmPriceKey(prices: ModelPrice, kind: TokenKind): { base: string; tiered: boolean } | null {
  const price = prices[PRICE_KEYS[kind]];
  if (price === undefined) return null;
  return typeof price === 'number'
    ? { base: exactOf(price).toFixed(), tiered: false }
    : { base: exactOf(price.base).toFixed(), tiered: true };
}

/** A model's price per hour of connected time (its `audio_hours`, charged on session_duration_seconds), or null. */
export function llmTimePrice(prices: ModelPrice): string | null {
  const price = prices[TIME_KEY];
  return price === undefined ? null : priceAt(price, new Exact(0)).toFixed();
}
