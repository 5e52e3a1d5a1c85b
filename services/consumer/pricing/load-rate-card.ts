import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { rateCardSchema, type RateCard } from '../../../schemas/rate-card.ts';
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
const validateCard = addFormats(new Ajv({ allErrors: true, strict: true })).compile<RateCard>(rateCardSchema);

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
 * their aliases resolved, so lookups compare names as they are.
 */
export function parseRateCard(json: unknown): RateCard {
  if (!validateCard(json)) throw new RateCardError((validateCard.errors ?? []).map(describeSchemaError));
  const problems = listRateCardProblems(json);
  if (problems.length > 0) throw new RateCardError(problems);
  return deepFreeze(normalize(json));
}

function normalize(card: RateCard): RateCard {
  const aliases = lowerCaseAliases(card.provider_aliases);
  const rates = card.rates.map((rate) => ({
    ...rate,
    provider: resolveProvider(aliases, rate.provider),
    ...(rate.model === undefined ? {} : { model: rate.model.toLowerCase() }),
  }));
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
