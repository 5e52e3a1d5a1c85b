import { describe, expect, it } from 'vitest';
import type { RateCreateBody } from '../../schemas/http/rates.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { Envelope } from '../shared/records/envelope.ts';
import { makeCard, makeCatalogs, makeRate } from '../shared/pricing/pricing.fixtures.ts';
import { createTenantRateService } from './rate-service.ts';
import { MemoryRateEntryStore } from './rates/rate-entry-store.ts';

function makeService() {
  const published: Envelope[] = [];
  const service = createTenantRateService({
    card: () => makeCard([makeRate()]),
    catalogs: makeCatalogs([]),
    entries: new MemoryRateEntryStore(),
    // Creating an entry reads nothing from the store.
    reads: {} as ClickHouse,
    sink: { publish: async (envelopes) => void published.push(...envelopes) },
  });
  return { service, published };
}

const body = (overrides: Partial<RateCreateBody> = {}): RateCreateBody => ({
  user_id: 'tenant-a',
  provider: 'deepgram',
  event_type: 'stt_minutes',
  price: '0.005',
  dimension: 'quantity',
  ...overrides,
});

describe('tenant rates: one currency per tenant', () => {
  it('refuses a price in another currency than the card’s with a 422 at currency, and publishes nothing', async () => {
    const { service, published } = makeService();
    await expect(service.create(body({ currency: 'EUR' }))).rejects.toMatchObject({
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
    const { service } = makeService();
    expect(await service.create(body({ currency: 'USD' }))).toMatchObject({ currency: 'USD' });
    expect(await service.create(body())).toMatchObject({ currency: 'USD' });
  });
});

describe('tenant rates: instants', () => {
  it('refuses an effective_to after the latest instant the store holds, at its field', async () => {
    const { service, published } = makeService();
    const answer = service.create(body({ effective_to: new Date('2300-01-01T00:00:00Z') }));
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
