import { describe, expect, it } from 'vitest';
import type { KeyCreateBody } from '../../../schemas/http/admin.ts';
import type { Caller } from '../../shared/auth/access.ts';
import { KeyRegistry } from '../../shared/auth/key-registry.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/logger.ts';
import type { Envelope } from '../../domain/records/index.ts';
import { createKeyService } from './key-service.ts';

const BOOTSTRAP: Caller = { kind: 'bootstrap', id: 'bootstrap', scope: 'admin', tenant: null };
const ANONYMOUS: Caller = { kind: 'anonymous', id: 'anonymous', scope: 'admin', tenant: null };

function makeService(perTenant: number) {
  // Never started: the keys this process makes are known to it without reading ClickHouse.
  const keys = new KeyRegistry(null as unknown as ClickHouse, 60_000, createLogger('silent'));
  const published: Envelope[] = [];
  const service = createKeyService({
    keys,
    sink: { publish: async (envelopes) => void published.push(...envelopes) },
    perTenant,
  });
  return { service, keys, published };
}

describe('the key service', () => {
  it('refuses a tenant its key past API_KEYS_PER_TENANT with a 409, counting neither revoked keys nor other tenants', async () => {
    const { service } = makeService(2);
    const first = await service.create({ scope: 'ingest', user_id: 'tenant-a' }, BOOTSTRAP);
    await service.create({ scope: 'read', user_id: 'tenant-a' }, BOOTSTRAP);
    const refused = await service.create({ scope: 'read', user_id: 'tenant-a' }, BOOTSTRAP).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect([(refused as AppError).code, (refused as AppError).detail]).toEqual([
      'CONFLICT',
      'Tenant tenant-a has 2 active API keys, the most API_KEYS_PER_TENANT allows: revoke one first',
    ]);
    await expect(service.create({ scope: 'read', user_id: 'tenant-b' }, BOOTSTRAP)).resolves.toMatchObject({
      user_id: 'tenant-b',
    });
    await service.revoke(first.id, BOOTSTRAP);
    await expect(service.create({ scope: 'read', user_id: 'tenant-a' }, BOOTSTRAP)).resolves.toMatchObject({
      user_id: 'tenant-a',
    });
  });

  it('marks the keys the anonymous caller of AUTH_MODE=off makes, and no other, in the record and the listing', async () => {
    const { service, published } = makeService(10);
    const open = await service.create({ scope: 'admin' }, ANONYMOUS);
    const made = await service.create({ scope: 'admin' }, BOOTSTRAP);
    expect([open.created_while_auth_off, made.created_while_auth_off]).toEqual([true, false]);
    const records = published.filter((envelope) => envelope.kind === 'api_key').map((envelope) => envelope.payload);
    expect(records.map((record) => (record as { created_while_auth_off: boolean }).created_while_auth_off)).toEqual([
      true,
      false,
    ]);
    expect(new Map(service.list(BOOTSTRAP).map((key) => [key.id, key.created_while_auth_off]))).toEqual(
      new Map([
        [open.id, true],
        [made.id, false],
      ]),
    );
  });
});

describe('key service: expires_at', () => {
  it('refuses an expiry after the latest instant stored with a 422 at expires_at, and publishes nothing', async () => {
    const { service, published } = makeService(10);
    const body = { scope: 'read', expires_at: new Date('2300-01-01T00:00:00Z') } as KeyCreateBody;
    await expect(service.create(body, ANONYMOUS)).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: [
        {
          loc: ['body', 'expires_at'],
          msg: 'Value error, expires_at is after 2299-12-31T23:59:59.999Z, the latest instant stored (leave it out for a key that never expires)',
          input: '2300-01-01T00:00:00.000Z',
        },
      ],
    });
    expect(published).toEqual([]);
  });
});
