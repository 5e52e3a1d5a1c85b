import { describe, expect, it } from 'vitest';
import type { RateEntry } from '../../../schemas/rate-card.ts';
import { makeCard, makeRate, makeUsage } from './pricing.fixtures.ts';
import { priceUsage } from './price-usage.ts';
import { cardWithTenantIndex, resolveEntry, TenantRateIndex } from './tenant-rate-index.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');

function makeEntry(overrides: Partial<RateEntry> = {}): RateEntry {
  return makeRate({ id: 'tenant-a', user_id: 'tenant-a', price: '0.001', ...overrides });
}

function makeIndexedCard(entries: readonly RateEntry[], now = () => NOW) {
  const base = makeCard([makeRate({ id: 'card-stt' })]);
  const index = new TenantRateIndex(base, now);
  index.apply(entries.map((entry) => ({ entry, version: 1 })));
  return { index, card: cardWithTenantIndex(base, index) };
}

/** A noisy tenant's many entries, for one provider of its own or all alike. */
function noisyEntries(count: number): RateEntry[] {
  return Array.from({ length: count }, (_, n) =>
    makeEntry({ id: `tenant-noisy-${String(n).padStart(5, '0')}`, user_id: 'noisy', model: `model-${n}` }),
  );
}

describe('the tenant rate index', () => {
  it('prices a tenant without ever looking up another tenant’s entries', () => {
    const { index, card } = makeIndexedCard([
      ...noisyEntries(10_000),
      makeEntry({ id: 'tenant-steady', user_id: 'steady' }),
    ]);
    for (let n = 0; n < 100; n += 1) {
      expect(priceUsage(card, makeUsage({ user_id: 'steady' })).rate_id).toBe('tenant-steady');
      expect(priceUsage(card, makeUsage({ user_id: 'no-entries' })).rate_id).toBe('card-stt');
    }
    expect(index.lookupsOf('noisy')).toBe(0);
    expect(index.lookupsOf('steady')).toBe(100);
    expect(index.candidates('steady', 'stt_minutes', 'quantity', NOW).map((rate) => rate.id)).toEqual([
      'tenant-steady',
    ]);
  });

  it('prices every usage as the card with the tenants’ entries among its own rates does, string for string', () => {
    const entries = [
      makeEntry({ id: 'tenant-a-1', user_id: 'a' }),
      makeEntry({ id: 'tenant-a-0', user_id: 'a', price: '0.002' }),
      makeEntry({ id: 'tenant-a-model', user_id: 'a', model: 'nova-3', price: '0.003' }),
      makeEntry({ id: 'tenant-a-later', user_id: 'a', price: '0.004', effective_from: '2025-06-01T11:00:00Z' }),
      makeEntry({ id: 'tenant-b', user_id: 'b', provider: '*', price: '0.005', effective_to: '2025-06-01T11:30:00Z' }),
    ];
    const { card } = makeIndexedCard(entries);
    // As the card was made before the index: the entries, read in id order, after the card's own (of two
    // entries equal in all but id, the first in id order wins).
    const base = makeCard([makeRate({ id: 'card-stt' })]);
    const byId = [...entries].sort((a, b) => (a.id < b.id ? -1 : 1));
    const flat = { ...base, rates: [...base.rates, ...byId.flatMap((entry) => resolveEntry(base, entry))] };
    for (const user_id of ['a', 'b', 'c'])
      for (const model of [null, 'nova-3'])
        for (const at of ['2025-06-01T10:00:00Z', '2025-06-01T11:15:00Z', '2025-06-01T12:00:00Z']) {
          const usage = makeUsage({ user_id, model, occurred_at: new Date(at), quantity: '3.5' });
          expect(priceUsage(card, usage)).toStrictEqual(priceUsage(flat, usage));
        }
  });

  it('leaves an ended entry out of the lookups of usage after its end, and prices usage before it by it', () => {
    let now = NOW;
    const { index, card } = makeIndexedCard(
      [makeEntry({ id: 'tenant-ending', effective_to: new Date(NOW + 60_000).toISOString() })],
      () => now,
    );
    expect(index.candidates('tenant-a', 'stt_minutes', 'quantity', NOW)).toHaveLength(1);
    now = NOW + 60_000;
    expect(index.countLive('tenant-a', now)).toBe(0);
    expect(index.candidates('tenant-a', 'stt_minutes', 'quantity', now)).toHaveLength(0);
    expect(priceUsage(card, makeUsage({ user_id: 'tenant-a', occurred_at: new Date(now) })).rate_id).toBe('card-stt');
    expect(priceUsage(card, makeUsage({ user_id: 'tenant-a', occurred_at: new Date(NOW) })).rate_id).toBe(
      'tenant-ending',
    );
    // Listed as the rates API always listed it.
    expect(index.ratesOf('tenant-a').map((rate) => rate.id)).toEqual(['tenant-ending']);
  });

  it('takes a higher version of an entry and ignores one as old or older, read again', () => {
    const { index } = makeIndexedCard([]);
    const ended = makeEntry({ effective_to: new Date(NOW - 1).toISOString() });
    index.apply([{ entry: ended, version: 2 }]);
    index.apply([{ entry: makeEntry(), version: 1 }]);
    expect(index.versionOf('tenant-a', 'tenant-a')).toBe(2);
    expect(index.countLive('tenant-a', NOW)).toBe(0);
  });

  it('counts a tenant’s entries not ended, one that ends later included', () => {
    const { index } = makeIndexedCard([
      makeEntry({ id: 'tenant-open' }),
      makeEntry({ id: 'tenant-later', effective_to: new Date(NOW + 1).toISOString() }),
      makeEntry({ id: 'tenant-over', effective_to: new Date(NOW).toISOString() }),
      makeEntry({ id: 'tenant-other', user_id: 'other' }),
    ]);
    expect(index.countLive('tenant-a', NOW)).toBe(2);
    expect(index.countLive('other', NOW)).toBe(1);
  });

  it('resolves a tenant entry stored in another currency than the card’s to no rate, so that no total adds two', () => {
    const card = makeCard([makeRate({ id: 'card-stt' })]);
    expect(resolveEntry(card, makeEntry({ id: 'euro', currency: 'EUR' }))).toEqual([]);
    expect(resolveEntry(card, makeEntry({ id: 'dollar', currency: 'USD' })).map((rate) => rate.id)).toEqual(['dollar']);
  });
});
