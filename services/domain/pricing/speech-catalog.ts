import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FromSchema } from 'json-schema-to-ts';
import { Exact } from '../../shared/exact-decimal.ts';

/** The speech catalog in the repository: speech-to-text and text-to-speech list prices, with their sources. */
export const SPEECH_CATALOG_URL = new URL('../../../infra/rate-card/speech-catalog.json', import.meta.url);

const decimal = { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } as const;

export const speechCatalogSchema = {
  $id: 'callmeter/speech-catalog',
  type: 'object',
  required: ['version', 'currency', 'entries'],
  properties: {
    version: { const: 1 },
    currency: { const: 'USD' },
    note: { type: 'string' },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: [
          'id',
          'provider',
          'event_type',
          'unit',
          'price',
          'per',
          'effective_from',
          'source',
          'read_at',
          'checked',
        ],
        properties: {
          id: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$' },
          provider: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$' },
          /** Absent: the provider's price for any model without an entry of its own. */
          model: { type: 'string', minLength: 1 },
          event_type: { enum: ['stt_minutes', 'tts_characters'] },
          /** The unit as the provider publishes the price. */
          unit: { enum: ['minute', 'second', 'hour', 'character'] },
          price: decimal,
          per: decimal,
          effective_from: { type: 'string', format: 'date-time' },
          source: { type: 'string', minLength: 1 },
          read_at: { type: 'string', format: 'date' },
          /** false: the price could not be checked on the provider's own page (the note says where it is from). */
          checked: { type: 'boolean' },
          note: { type: 'string' },
        },
      },
    },
    not_found: { type: 'array' },
  },
} as const;

export type SpeechCatalogFile = FromSchema<typeof speechCatalogSchema>;
export type SpeechEntry = SpeechCatalogFile['entries'][number];

/**
 * How many of the published unit one unit of the event type's quantity is (stt_minutes count minutes,
 * tts_characters characters), as a fraction so that a price per hour divides once, at the end.
 */
const UNIT_RATIO: Readonly<
  Record<SpeechEntry['event_type'], Partial<Record<SpeechEntry['unit'], readonly [number, number]>>>
> = {
  stt_minutes: { minute: [1, 1], second: [60, 1], hour: [1, 60] },
  tts_characters: { character: [1, 1] },
};

export interface SpeechPrice {
  readonly entry: SpeechEntry;
  /** The event's quantity in the entry's unit. */
  readonly quantity: Exact;
  readonly price: Exact;
  readonly per: Exact;
  readonly cost: Exact;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validate = addFormats(new Ajv({ allErrors: true, strict: false })).compile<SpeechCatalogFile>(
  speechCatalogSchema,
);

export class SpeechCatalogError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid speech catalog: ${problems.join('; ')}`);
    this.name = 'SpeechCatalogError';
  }
}

/**
 * The speech prices, indexed by provider and event type, each list newest first: pricing an event is
 * a map lookup and a walk over that provider's few entries, never a scan of the catalog.
 */
export class SpeechCatalog {
  private readonly byProvider = new Map<string, SpeechEntry[]>();

  constructor(readonly file: SpeechCatalogFile) {
    for (const entry of file.entries) {
      const key = `${entry.provider}\u0000${entry.event_type}`;
      this.byProvider.set(key, [...(this.byProvider.get(key) ?? []), entry]);
    }
    for (const entries of this.byProvider.values())
      entries.sort((a, b) => Date.parse(b.effective_from) - Date.parse(a.effective_from));
  }

  static load(url: URL = SPEECH_CATALOG_URL): SpeechCatalog {
    return SpeechCatalog.parse(JSON.parse(readFileSync(url, 'utf8')));
  }

  static parse(json: unknown): SpeechCatalog {
    if (!validate(json))
      throw new SpeechCatalogError(
        (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`),
      );
    const problems: string[] = [];
    const ids = new Set<string>();
    for (const entry of json.entries) {
      if (ids.has(entry.id)) problems.push(`${entry.id}: the id is used twice`);
      ids.add(entry.id);
      if (UNIT_RATIO[entry.event_type][entry.unit] === undefined)
        problems.push(`${entry.id}: ${entry.event_type} cannot be priced per ${entry.unit}`);
      if (new Exact(entry.per).isZero()) problems.push(`${entry.id}: per is 0`);
      if (entry.model !== undefined && entry.model !== entry.model.toLowerCase())
        problems.push(`${entry.id}: the model must be lower case`);
    }
    if (problems.length > 0) throw new SpeechCatalogError(problems);
    return new SpeechCatalog(json);
  }

  /**
   * The entry in force at `at` for the provider's model: the model's own entries, else those of the
   * longest catalog model the name starts with followed by `-` (a voice or dated variant: `aura-2` for
   * `aura-2-andromeda-en`), else the provider's entries without a model; the latest effective_from not
   * after `at`. Provider and model are compared lower-cased.
   */
  find(provider: string, eventType: string, model: string | null, at: Date): SpeechEntry | null {
    const index = this.indexOf(`${provider.toLowerCase()}\u0000${eventType}`);
    if (index === null) return null;
    const name = model?.toLowerCase() ?? null;
    let chosen = index.providerWide;
    if (name !== null) {
      const own = index.byModel.get(name);
      if (own !== undefined) chosen = own;
      else {
        // The longest catalog model the name starts with, followed by '-'; the models are longest first.
        const prefix = index.models.find((known) => name.startsWith(`${known}-`));
        if (prefix !== undefined) chosen = index.byModel.get(prefix)!;
      }
    }
    const atMs = at.getTime();
    return chosen.find((entry) => this.exact(entry).fromMs <= atMs) ?? null;
  }

  private readonly parsed = new WeakMap<SpeechEntry, { price: Exact; per: Exact; fromMs: number }>();

  /** An entry's price, per and start as numbers, parsed once. */
  private exact(entry: SpeechEntry): { price: Exact; per: Exact; fromMs: number } {
    let parsed = this.parsed.get(entry);
    if (parsed === undefined) {
      parsed = { price: new Exact(entry.price), per: new Exact(entry.per), fromMs: Date.parse(entry.effective_from) };
      this.parsed.set(entry, parsed);
    }
    return parsed;
  }

  private readonly indexes = new Map<
    string,
    { byModel: Map<string, SpeechEntry[]>; models: string[]; providerWide: SpeechEntry[] } | null
  >();

  /** One provider and event type's entries by model (each list newest first), built on first use. */
  private indexOf(
    key: string,
  ): { byModel: Map<string, SpeechEntry[]>; models: string[]; providerWide: SpeechEntry[] } | null {
    const known = this.indexes.get(key);
    if (known !== undefined) return known;
    const entries = this.byProvider.get(key);
    if (entries === undefined) return null;
    const byModel = new Map<string, SpeechEntry[]>();
    const providerWide: SpeechEntry[] = [];
    for (const entry of entries) {
      if (entry.model === undefined) providerWide.push(entry);
      else byModel.set(entry.model, [...(byModel.get(entry.model) ?? []), entry]);
    }
    const index = { byModel, models: [...byModel.keys()].sort((a, b) => b.length - a.length), providerWide };
    this.indexes.set(key, index);
    return index;
  }

  /** The exact cost of `quantity` (in the event type's unit), or null when no entry prices it. */
  price(provider: string, eventType: string, model: string | null, quantity: Exact, at: Date): SpeechPrice | null {
    const entry = this.find(provider, eventType, model, at);
    if (entry === null) return null;
    const [times, divide] = UNIT_RATIO[entry.event_type][entry.unit]!;
    const { price, per } = this.exact(entry);
    // Multiply first and divide once: exact whenever per × divide is a power of ten.
    const cost = quantity.times(times).times(price).dividedBy(per.times(divide));
    return { entry, quantity: quantity.times(times).dividedBy(divide), price, per, cost };
  }

  entries(): readonly SpeechEntry[] {
    return this.file.entries;
  }
}
