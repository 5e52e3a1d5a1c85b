import { loadCatalogs } from '../../services/domain/pricing/index.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { priceUsage, type UsageToPrice } from '../../services/domain/pricing/index.ts';

/**
 * The pricing micro-benchmark: nanoseconds per event priced (a) by today's five-entry card alone, the
 * baseline, for events the card prices; (b) the same events with the whole catalog loaded beneath the
 * card; (c) events of the same shapes that the catalog prices (speech by the minute and character, LLM
 * tokens); (d) richer token mixes (cached, audio), more parts per event. The four run in alternating rounds and each reports its median round, so that a noisy neighbour slows
 * all of them alike. Prints one JSON line.
 */
const { rounds, perRound } = JSON.parse(process.argv[2] ?? '{"rounds":15,"perRound":20000}') as {
  rounds: number;
  perRound: number;
};
const card = await loadRateCard(DEFAULT_RATE_CARD_URL);
const catalogs = loadCatalogs();
const at = new Date();
const base = { user_id: 'bench', occurred_at: at } as const;

// Without a model, as the interface's workers send them: a catalog's price of a model comes before the
// card's provider-wide entries (docs/pricing-kinds.md), so these are the events the card prices.
const cardEvents: UsageToPrice[] = [
  { ...base, event_type: 'stt_minutes', provider: 'deepgram', quantity: '2.5' },
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'google',
    quantity: '1200',
    input_tokens: '900',
    output_tokens: '300',
  },
  { ...base, event_type: 'tts_characters', provider: 'resemble', quantity: '480' },
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'gemini',
    quantity: '1200',
    input_tokens: '1200',
  },
];
// The same shapes as the card's events (one price, a two-kind split, one price, a one-kind split), priced
// by the catalog: what loading the catalog and looking an event up in it costs.
const fleetEvents: UsageToPrice[] = [
  { ...base, event_type: 'stt_minutes', provider: 'groq', model: 'whisper-large-v3-turbo', quantity: '2.5' },
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'openai',
    model: 'gpt-4o-mini-2024-07-18',
    quantity: '1200',
    input_tokens: '900',
    output_tokens: '300',
  },
  { ...base, event_type: 'tts_characters', provider: 'cartesia', model: 'sonic-2', quantity: '480' },
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'anthropic',
    model: 'claude-sonnet-4-20250514',
    quantity: '1200',
    input_tokens: '1200',
  },
];
// Realtime and cached token mixes: more parts per event, each priced (reported, no target).
const richEvents: UsageToPrice[] = [
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'openai',
    model: 'gpt-4o-mini',
    quantity: '1500',
    input_tokens: '1200',
    cached_input_tokens: '800',
    output_tokens: '300',
  },
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'openai',
    model: 'gpt-realtime',
    quantity: '3000',
    input_tokens: '2000',
    audio_input_tokens: '1500',
    cached_input_tokens: '500',
    cached_audio_input_tokens: '200',
    output_tokens: '1000',
    audio_output_tokens: '800',
  },
  {
    ...base,
    event_type: 'llm_tokens',
    provider: 'anthropic',
    model: 'claude-sonnet-4-20250514',
    quantity: '2400',
    input_tokens: '2000',
    cache_write_tokens: '1000',
    output_tokens: '400',
  },
];

function round(events: readonly UsageToPrice[], withCatalogs: boolean): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < perRound; i += 1) priceUsage(card, events[i % events.length]!, withCatalogs ? catalogs : null);
  return Number(process.hrtime.bigint() - started) / perRound;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const series = {
  card: [] as number[],
  card_with_catalog: [] as number[],
  fleet_catalog: [] as number[],
  token_kinds: [] as number[],
};
// A first round of each, unmeasured, warms the JIT and the catalog's model memory.
for (const [events, withCatalogs] of [
  [cardEvents, false],
  [cardEvents, true],
  [fleetEvents, true],
  [richEvents, true],
] as const)
  round(events, withCatalogs);
for (let r = 0; r < rounds; r += 1) {
  series.card.push(round(cardEvents, false));
  series.card_with_catalog.push(round(cardEvents, true));
  series.fleet_catalog.push(round(fleetEvents, true));
  series.token_kinds.push(round(richEvents, true));
}
const unpriced = [...fleetEvents, ...richEvents].filter(
  (event) => priceUsage(card, event, catalogs).scope !== 'catalog',
).length;
process.stdout.write(
  `${JSON.stringify({ card_ns: median(series.card), card_with_catalog_ns: median(series.card_with_catalog), fleet_catalog_ns: median(series.fleet_catalog), token_kinds_ns: median(series.token_kinds), fleet_unpriced: unpriced })}\n`,
);
