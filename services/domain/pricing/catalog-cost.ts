import type { RateCard } from '../../../schemas/rate-card.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import type { Catalogs } from './catalogs.ts';
import type { LookUp } from './find-rate.ts';
import { tokenCounts, withTotals, type ComputedCost, type CostComponent, type CostInput } from './cost-parts.ts';
import { SESSION_DIMENSION } from './llm-catalog.ts';
import { resolveProvider } from './provider-names.ts';
import type { TokenCounts } from './token-kinds.ts';

/** A catalog price, and whether it is a model's own (an LLM model, a speech model or family) or a provider-wide one. */
export interface CatalogCost {
  readonly cost: ComputedCost;
  readonly specific: boolean;
}

/**
 * The catalogs' price of an event. An LLM event is priced by its tokens and its connected time. A speech
 * event is priced, most specific first, by its tokens where the LLM catalog has token prices for the
 * model (OpenAI's gpt-4o-mini-tts and transcribe models), by the speech catalog's entry for the model or
 * its family, by the LLM catalog's price per hour of audio (transcription models), and last by the speech
 * catalog's provider-wide entry.
 */
export function catalogCost(card: RateCard, catalogs: Catalogs, lookUp: LookUp, input: CostInput): CatalogCost | null {
  const provider = catalogProviderOf(card, catalogs, lookUp.provider);
  if (lookUp.event_type === 'llm_tokens') return llmEventCost(catalogs, provider, lookUp, input);
  const model = lookUp.model ?? null;
  const counts = tokenCounts(input);
  if (counts !== null && model !== null) {
    const cost = llmCost(catalogs, provider, model, counts, null, lookUp.at, input.quantity);
    // The quantity stays the event's minutes or characters; the parts are its tokens.
    if (cost !== null) return { cost, specific: true };
  }
  const speech = speechCost(catalogs, provider, lookUp, input.quantity);
  if (speech?.specific === true) return speech;
  const audio =
    lookUp.event_type === 'stt_minutes' && model !== null
      ? audioCost(catalogs, provider, model, lookUp.at, input.quantity)
      : null;
  return audio ?? speech;
}

/** The provider id both catalogs know it by: the card's alias, then the catalogs' (xai → x-ai, gemini → google). */
export function catalogProviderOf(card: RateCard, catalogs: Catalogs, provider: string): string {
  return catalogs.llm.providerId(resolveProvider(card.provider_aliases, provider));
}

function llmEventCost(catalogs: Catalogs, provider: string, lookUp: LookUp, input: CostInput): CatalogCost | null {
  const model = lookUp.model ?? null;
  const counts = tokenCounts(input);
  const session = input.session_duration_seconds ?? null;
  if (model === null || (counts === null && session === null)) return null;
  const seconds = session === null ? null : new Exact(session);
  const cost = llmCost(catalogs, provider, model, counts, seconds, lookUp.at, input.quantity);
  if (cost === null) return null;
  // The tokens priced must be exactly the event's quantity, as for a card split (a model billed only by
  // connected time prices no tokens).
  const tokens = cost.components.filter((part) => part.unit === 'token');
  const counted = Exact.sum(0, ...tokens.map((part) => part.quantity));
  return tokens.length > 0 && !counted.equals(input.quantity) ? null : { cost, specific: true };
}

const UNITS: Readonly<Record<string, string>> = { requests: 'request', [SESSION_DIMENSION]: 'second' };

function llmCost(
  catalogs: Catalogs,
  provider: string,
  model: string,
  counts: TokenCounts | null,
  sessionSeconds: Exact | null,
  at: Date,
  quantity: string,
): ComputedCost | null {
  const priced = catalogs.llm.price(provider, model, counts, at, sessionSeconds);
  if (priced === null) return null;
  const components = priced.components.map((part): CostComponent => ({
    dimension: part.dimension,
    quantity: part.quantity,
    unit: UNITS[part.dimension] ?? 'token',
    price: part.price,
    per: part.per,
    cost: part.cost,
    rate_id: priced.rate_id,
  }));
  return withTotals(new Exact(quantity), components, catalogs.currency, 'catalog');
}

function speechCost(catalogs: Catalogs, provider: string, lookUp: LookUp, quantityText: string): CatalogCost | null {
  const quantity = new Exact(quantityText);
  const priced = catalogs.speech.price(provider, lookUp.event_type, lookUp.model ?? null, quantity, lookUp.at);
  if (priced === null) return null;
  const component: CostComponent = {
    dimension: 'quantity',
    quantity: priced.quantity,
    unit: priced.entry.unit,
    price: priced.price,
    per: priced.per,
    cost: priced.cost,
    rate_id: priced.entry.id,
  };
  return {
    cost: withTotals(quantity, [component], catalogs.currency, 'catalog'),
    specific: priced.entry.model !== undefined,
  };
}

const MINUTES_PER_HOUR = new Exact(60);

/** Minutes of audio at a transcription model's price per hour in the LLM catalog. */
function audioCost(
  catalogs: Catalogs,
  provider: string,
  model: string,
  at: Date,
  minutesText: string,
): CatalogCost | null {
  const hourly = catalogs.llm.audioHourPrice(provider, model, at);
  if (hourly === null) return null;
  const minutes = new Exact(minutesText);
  const component: CostComponent = {
    dimension: 'quantity',
    quantity: minutes,
    unit: 'minute',
    price: hourly.price,
    per: MINUTES_PER_HOUR,
    cost: minutes.times(hourly.price).dividedBy(MINUTES_PER_HOUR),
    rate_id: hourly.rate_id,
  };
  return { cost: withTotals(minutes, [component], catalogs.currency, 'catalog'), specific: true };
}
