import { describe, expect, it } from 'vitest';
import type { RateEntryChange, StoredRate } from '../../shared/clickhouse/tables/rate-entries.ts';
import { createLogger } from '../../shared/logger.ts';
import { makeCard, makeRate, makeUsage } from './pricing.fixtures.ts';
import { priceUsage } from './price-usage.ts';
import { TENANT_RATES_OVERLAP_MS, TenantRateCard } from './tenant-rates.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');

function makeStored(overrides: Partial<StoredRate> = {}): StoredRate {
  return {
    id: 'tenant-1',
    user_id: 'tenant-a',
    provider: 'deepgram',
    model: null,
    event_type: 'stt_minutes',
    service: null,
    pricing: 'quantity',
    unit: 'minute',
    price: '0.001',
    price_per: '1',
    currency: 'USD',
    effective_from: '2025-01-01T00:00:00.000Z',
    effective_to: null,
    created_at: '2025-01-01T00:00:00.000Z',
    version: 1,
    ...overrides,
  };
}

/** The table as the refresher reads it: every version with when it was stored, on the store's clock; each read kept. */
class FakeTable {
  clockMs = NOW;
  readonly rows: RateEntryChange[] = [];
  readonly reads: { since: number | null; rows: number }[] = [];

  store(rate: StoredRate, storedMs = this.clockMs): void {
    this.rows.push({ rate, storedMs });
  }

  readonly read = async (since: number | null) => {
    const changes = this.rows.filter((row) => since === null || row.storedMs >= since);
    this.reads.push({ since, rows: changes.length });
    return { changes, readMs: this.clockMs };
  };
}

function makeTable(): FakeTable {
  return new FakeTable();
}

function makeRefresher(table: FakeTable, now = () => NOW) {
  return new TenantRateCard(makeCard([makeRate({ id: 'card-stt' })]), table.read, createLogger('silent'), now);
}

describe('the tenant rates refresher', () => {
  it('reads everything once, then only the versions stored since its last read', async () => {
    const table = makeTable();
    for (let n = 0; n < 1_000; n += 1)
      table.store(makeStored({ id: `tenant-old-${n}`, user_id: 'noisy' }), NOW - 60_000);
    const rates = makeRefresher(table);
    expect(await rates.refresh()).toBe(1_000);
    table.clockMs = NOW + 2_000;
    table.store(makeStored({ id: 'tenant-new', user_id: 'steady' }));
    expect(await rates.refresh()).toBe(1);
    expect(table.reads.map((read) => read.since)).toEqual([null, NOW - TENANT_RATES_OVERLAP_MS]);
    expect(priceUsage(rates.current(), makeUsage({ user_id: 'steady' })).rate_id).toBe('tenant-new');
    // Quiet: once the overlap has passed, a read finds nothing at all.
    table.clockMs = NOW + 2_000 + TENANT_RATES_OVERLAP_MS + 2_000;
    await rates.refresh();
    expect(await rates.refresh()).toBe(0);
  });

  it('reads a version stored a little before the latest one read but seen only after it', async () => {
    const table = makeTable();
    table.store(makeStored({ id: 'tenant-fast' }));
    const rates = makeRefresher(table);
    await rates.refresh();
    table.clockMs = NOW + 2_000;
    table.store(makeStored({ id: 'tenant-slow', user_id: 'late' }), NOW - TENANT_RATES_OVERLAP_MS / 2);
    await rates.refresh();
    expect(priceUsage(rates.current(), makeUsage({ user_id: 'late' })).rate_id).toBe('tenant-slow');
  });

  it('drops an entry ended by its next version from the lookups of usage after the end', async () => {
    const table = makeTable();
    table.store(makeStored(), NOW - 1_000);
    const rates = makeRefresher(table);
    await rates.refresh();
    expect(priceUsage(rates.current(), makeUsage({ user_id: 'tenant-a' })).rate_id).toBe('tenant-1');
    table.store(makeStored({ effective_to: new Date(NOW - 500).toISOString(), version: 2 }), NOW - 500);
    await rates.refresh();
    expect(rates.index.candidates('tenant-a', 'stt_minutes', 'quantity', NOW)).toHaveLength(0);
    expect(rates.index.countLive('tenant-a', NOW)).toBe(0);
    expect(priceUsage(rates.current(), makeUsage({ user_id: 'tenant-a' })).rate_id).toBe('card-stt');
  });

  it('keeps the highest version when an older one is read after it', async () => {
    const table = makeTable();
    table.store(makeStored({ effective_to: new Date(NOW - 500).toISOString(), version: 2 }), NOW);
    table.store(makeStored(), NOW - 1_000);
    const rates = makeRefresher(table);
    await rates.refresh();
    expect(rates.index.versionOf('tenant-a', 'tenant-1')).toBe(2);
    expect(rates.index.countLive('tenant-a', NOW)).toBe(0);
  });

  it('runs one read at a time: a refresh asked for during a read shares it', async () => {
    const table = makeTable();
    const rates = makeRefresher(table);
    await Promise.all([rates.refresh(), rates.refresh(), rates.refresh()]);
    expect(table.reads).toHaveLength(1);
  });

  it('keeps one card object for its life, so the card’s own index is built once', async () => {
    const table = makeTable();
    const rates = makeRefresher(table);
    const before = rates.current();
    table.store(makeStored(), NOW);
    await rates.refresh();
    expect(rates.current()).toBe(before);
  });
});
