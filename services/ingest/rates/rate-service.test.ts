import { describe, expect, it } from 'vitest';
import type { RateCreateBody } from '../../../schemas/http/rates.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { loadCatalogs } from '../../domain/pricing/index.ts';
import { makeCard, makeRate } from '../../domain/pricing/index.ts';
import { TenantRateIndex } from '../../domain/pricing/index.ts';
import { toCardEntry } from '../../domain/pricing/index.ts';
import type { RateRecord } from '../../../schemas/records/rate.ts';
import type { Envelope } from '../../domain/records/index.ts';
import { createTenantRateService } from './rate-service.ts';
import { MemoryRateEntryStore } from './rate-entry-store.ts';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const card = makeCard([makeRate({ id: 'card-stt' })]);
// Never read: every entry ended here is one this process made (the store's copy is read first).
const noReads = {} as ClickHouse;

function makeBody(overrides: Partial<RateCreateBody> = {}): RateCreateBody {
  return {
    user_id: 'noisy',
    provider: 'deepgram',
    event_type: 'stt_minutes',
    price: '0.001',
    dimension: 'quantity',
    ...overrides,
  };
}

function makeService(perTenant: number, tenants = new TenantRateIndex(card, () => NOW)) {
  const published: Envelope[] = [];
  const state = { refusing: false };
  const entries = new MemoryRateEntryStore();
  const service = createTenantRateService({
    card: () => card,
    catalogs: loadCatalogs(),
    entries,
    tenants,
    perTenant,
    reads: noReads,
    maxAgeMs: 35 * 86_400_000,
    sink: {
      publish: async (envelopes) => {
        if (state.refusing) throw AppError.of('DEPENDENCY_UNAVAILABLE', 'the journal is full');
        published.push(...envelopes);
      },
    },
    now: () => NOW,
  });
  return { service, published, state, tenants };
}

async function refusal(call: Promise<unknown>): Promise<AppError> {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('the cap on a tenant’s rate entries', () => {
  it('refuses the entry past the cap with a conflict naming it, and publishes nothing for it', async () => {
    const { service, published } = makeService(3);
    for (let n = 0; n < 3; n += 1) await service.create(makeBody());
    const error = await refusal(service.create(makeBody()));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('already has 3 rate entries in force');
    expect(published.filter((envelope) => envelope.kind === 'rate')).toHaveLength(3);
  });

  it('counts each tenant apart: one at its cap leaves another free', async () => {
    const { service } = makeService(2);
    await service.create(makeBody());
    await service.create(makeBody());
    await refusal(service.create(makeBody()));
    expect((await service.create(makeBody({ user_id: 'steady' }))).user_id).toBe('steady');
  });

  it('frees a place when an entry is ended, and counts an entry that ends later until it ends', async () => {
    const { service } = makeService(2);
    const first = await service.create(makeBody());
    await service.create(makeBody({ effective_to: new Date(NOW + 60_000) }));
    await refusal(service.create(makeBody()));
    await service.end(first.id);
    expect((await service.create(makeBody())).user_id).toBe('noisy');
  });

  it('holds the cap from the entries read from the store when ingest’s own copy has none (Redis flushed)', async () => {
    const tenants = new TenantRateIndex(card, () => NOW);
    tenants.apply(
      ['tenant-a', 'tenant-b'].map((id) => ({ entry: { ...makeRate({ id, user_id: 'noisy' }) }, version: 1 })),
    );
    const { service } = makeService(2, tenants);
    expect((await refusal(service.create(makeBody()))).code).toBe('CONFLICT');
  });

  it('frees the place of an entry the store had read in, as soon as this process ends it (before any refresh)', async () => {
    const tenants = new TenantRateIndex(card, () => NOW);
    const { service, published } = makeService(1, tenants);
    const first = await service.create(makeBody());
    // As the refresher would have read it in: the index counts it too.
    const stored = published.find((envelope) => envelope.kind === 'rate')!.payload as RateRecord;
    tenants.apply([{ entry: toCardEntry(stored), version: stored.version }]);
    await refusal(service.create(makeBody()));
    await service.end(first.id);
    expect((await service.create(makeBody())).user_id).toBe('noisy');
  });

  it('gives the place back when the entry could not be published', async () => {
    const { service, state } = makeService(1);
    state.refusing = true;
    expect((await refusal(service.create(makeBody()))).code).toBe('DEPENDENCY_UNAVAILABLE');
    state.refusing = false;
    expect((await service.create(makeBody())).user_id).toBe('noisy');
  });
});

describe('tenant rates: one currency per tenant', () => {
  it('refuses a price in another currency than the card’s with a 422 at currency, and publishes nothing', async () => {
    const { service, published } = makeService(10);
    await expect(service.create(makeBody({ currency: 'EUR' }))).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'currency'],
          msg: "Value error, prices are in USD, every tenant's one currency: a price in EUR would be added into costs in USD",
          input: 'EUR',
        },
      ],
    });
    expect(published).toEqual([]);
  });

  it('takes a price in the card’s currency, given or not', async () => {
    const { service } = makeService(10);
    expect(await service.create(makeBody({ currency: 'USD' }))).toMatchObject({ currency: 'USD' });
    expect(await service.create(makeBody())).toMatchObject({ currency: 'USD' });
  });
});

describe('tenant rates: instants', () => {
  it('refuses an effective_to after the latest instant the store holds, at its field', async () => {
    const { service, published } = makeService(10);
    const answer = service.create(makeBody({ effective_to: new Date('2300-01-01T00:00:00Z') }));
    await expect(answer).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: [
        {
          loc: ['body', 'effective_to'],
          msg: 'Value error, effective_to is after 2299-12-31T23:59:59.999Z, the latest instant stored',
        },
      ],
    });
    expect(published).toEqual([]);
  });
});
