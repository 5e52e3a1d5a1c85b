import { describe, expect, it } from 'vitest';
import { Exact } from '../../shared/exact-decimal.ts';
import { SpeechCatalog, SpeechCatalogError, type SpeechEntry } from './speech-catalog.ts';

const entry = (
  fields: Partial<SpeechEntry> & Pick<SpeechEntry, 'id' | 'provider' | 'event_type' | 'unit' | 'price'>,
): SpeechEntry => ({
  per: '1',
  effective_from: '2025-01-01T00:00:00Z',
  source: 'https://example.com/pricing',
  read_at: '2026-11-24',
  checked: true,
  ...fields,
});

const catalog = SpeechCatalog.parse({
  version: 1,
  currency: 'USD',
  entries: [
    entry({ id: 'dg-default', provider: 'deepgram', event_type: 'stt_minutes', unit: 'minute', price: '0.0077' }),
    entry({
      id: 'dg-nova-3-old',
      provider: 'deepgram',
      model: 'nova-3',
      event_type: 'stt_minutes',
      unit: 'minute',
      price: '0.0092',
    }),
    entry({
      id: 'dg-nova-3-new',
      provider: 'deepgram',
      model: 'nova-3',
      event_type: 'stt_minutes',
      unit: 'minute',
      price: '0.0077',
      effective_from: '2026-06-01T00:00:00Z',
    }),
    entry({
      id: 'dg-aura-2',
      provider: 'deepgram',
      model: 'aura-2',
      event_type: 'tts_characters',
      unit: 'character',
      price: '0.030',
      per: '1000',
    }),
    entry({
      id: 'dg-aura',
      provider: 'deepgram',
      model: 'aura',
      event_type: 'tts_characters',
      unit: 'character',
      price: '0.015',
      per: '1000',
    }),
    entry({ id: 'sm-second', provider: 'speechmatics', event_type: 'stt_minutes', unit: 'second', price: '0.0001' }),
    entry({
      id: 'groq-hour',
      provider: 'groq',
      model: 'whisper-large-v3',
      event_type: 'stt_minutes',
      unit: 'hour',
      price: '0.111',
    }),
  ],
});

describe('the speech catalog', () => {
  it('prices a model by its own entry in force at the event time, never a later one', () => {
    expect(
      catalog
        .price('Deepgram', 'stt_minutes', 'nova-3', new Exact('2.5'), new Date('2026-05-31T23:59:59Z'))
        ?.cost.toFixed(),
    ).toBe('0.023');
    expect(
      catalog
        .price('deepgram', 'stt_minutes', 'nova-3', new Exact('2.5'), new Date('2026-06-01T00:00:00Z'))
        ?.cost.toFixed(),
    ).toBe('0.01925');
    expect(
      catalog.price('deepgram', 'stt_minutes', 'nova-3', new Exact('1'), new Date('2024-12-31T00:00:00Z')),
    ).toBeNull();
  });

  it('takes the longest model a voice name starts with, else the provider entry', () => {
    expect(catalog.find('deepgram', 'tts_characters', 'aura-2-andromeda-en', new Date())?.id).toBe('dg-aura-2');
    expect(catalog.find('deepgram', 'tts_characters', 'aura-asteria-en', new Date())?.id).toBe('dg-aura');
    expect(catalog.find('deepgram', 'stt_minutes', 'nova-2-general', new Date())?.id).toBe('dg-default');
    expect(catalog.find('deepgram', 'stt_minutes', null, new Date())?.id).toBe('dg-default');
    expect(catalog.find('deepgram', 'tts_characters', 'unknown-voice', new Date())).toBeNull();
    expect(catalog.find('nobody', 'stt_minutes', null, new Date())).toBeNull();
  });

  it('converts minutes to a price per second or per hour, dividing once at the end', () => {
    const seconds = catalog.price('speechmatics', 'stt_minutes', null, new Exact('1.5'), new Date())!;
    expect([seconds.quantity.toFixed(), seconds.cost.toFixed()]).toEqual(['90', '0.009']);
    const hours = catalog.price('groq', 'stt_minutes', 'whisper-large-v3', new Exact('3'), new Date())!;
    expect([hours.quantity.toFixed(), hours.cost.toFixed()]).toEqual(['0.05', '0.00555']);
    expect(
      catalog.price('deepgram', 'tts_characters', 'aura-2-thalia-en', new Exact('1234'), new Date())?.cost.toFixed(),
    ).toBe('0.03702');
  });

  it('refuses a file with a duplicate id, a unit its event type cannot take, or a model in capitals, naming each', () => {
    const bad = {
      version: 1,
      currency: 'USD',
      entries: [
        entry({ id: 'a', provider: 'x', event_type: 'tts_characters', unit: 'minute', price: '1' }),
        entry({ id: 'a', provider: 'x', model: 'Nova', event_type: 'stt_minutes', unit: 'minute', price: '1' }),
      ],
    };
    expect(() => SpeechCatalog.parse(bad)).toThrow(SpeechCatalogError);
    expect(() => SpeechCatalog.parse(bad)).toThrow(
      'a: tts_characters cannot be priced per minute; a: the id is used twice; a: the model must be lower case',
    );
    expect(() => SpeechCatalog.parse({ version: 1, currency: 'USD', entries: [{ id: 'b' }] })).toThrow(
      /must have required property 'provider'/,
    );
  });
});

describe('the speech catalog file', () => {
  it('loads, names a source and a read date for every entry, and prices each at quantity × price ÷ per in its unit', () => {
    const loaded = SpeechCatalog.load();
    expect(loaded.entries().length).toBeGreaterThanOrEqual(15);
    for (const entry of loaded.entries()) {
      const at = new Date(Date.parse(entry.effective_from) + 1);
      const priced = loaded.price(entry.provider, entry.event_type, entry.model ?? null, new Exact('1'), at);
      expect([entry.id, priced?.entry.id]).toEqual([entry.id, entry.id]);
      const perEventUnit = {
        minute: '1',
        second: '60',
        hour: '0.016666666666666666666666666666666666666666666666666666666667',
        character: '1',
      }[entry.unit];
      expect(
        priced!.cost.minus(new Exact(perEventUnit).times(entry.price).dividedBy(entry.per)).abs().lte('1e-40'),
      ).toBe(true);
      expect(entry.source).toMatch(/^https:\/\//);
    }
  });
});
