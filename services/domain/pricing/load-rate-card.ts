import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { rateCardSchema, type RateCard, type RateCardFile } from '../../../schemas/rate-card.ts';
import { listEntryEventTypes } from './entry-event-types.ts';
import { listRateCardProblems } from './rate-card-problems.ts';
import { lowerCaseAliases, resolveProvider } from './provider-names.ts';

export type { RateCard };

/** The one card in the repository; the build copies infra/ beside services/, so this holds in dist too. */
export const DEFAULT_RATE_CARD_URL = new URL('../../../infra/rate-card/rate-card.json', import.meta.url);

export class RateCardError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid rate card: ${problems.join('; ')}`);
    this.name = 'RateCardError';
  }
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
// Its own instance, unlike the records' one: a card is checked once at start, and listing every
// schema error at once is worth more there than stopping at the first.
const validateCard = addFormats(new Ajv({ allErrors: true, strict: true })).compile<RateCardFile>(rateCardSchema);

/** Reads and checks a card file; every problem found is in the one RateCardError. */
export async function loadRateCard(path: string | URL): Promise<RateCard> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RateCardError([`${String(path)} is not JSON: ${(error as Error).message}`]);
  }
  return parseRateCard(json);
}

/**
 * A checked, frozen card whose provider ids and models are lower-cased and whose provider ids have
 * their aliases resolved, so lookups compare names as they are; an entry written for a `service` is
 * one rate per event type of that service, so lookups only ever match on event_type.
 */
export function parseRateCard(json: unknown): RateCard {
  if (!validateCard(json)) throw new RateCardError((validateCard.errors ?? []).map(describeSchemaError));
  const problems = listRateCardProblems(json);
  if (problems.length > 0) throw new RateCardError(problems);
  return deepFreeze(normalize(json));
}

function normalize(card: RateCardFile): RateCard {
  const aliases = lowerCaseAliases(card.provider_aliases);
  // Every rate of a service entry keeps the entry's id: it is the rate_id stored with what it priced.
  const rates = card.rates.flatMap((entry) =>
    listEntryEventTypes(card.services, entry).map((event_type) => ({
      ...entry,
      event_type,
      provider: resolveProvider(aliases, entry.provider),
      ...(entry.model === undefined ? {} : { model: entry.model.toLowerCase() }),
    })),
  );
  return { ...card, services: structuredClone(card.services), provider_aliases: aliases, rates };
}

function describeSchemaError(error: ErrorObject): string {
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
