import { describe, expect, it } from 'vitest';
import type { KeyCreateBody } from '../../schemas/http/admin.ts';
import { ANONYMOUS } from '../shared/auth/access.ts';
import type { KeyRegistry } from '../shared/auth/key-registry.ts';
import type { Envelope } from '../shared/records/envelope.ts';
import { createKeyService } from './key-service.ts';

describe('key service: expires_at', () => {
  it('refuses an expiry after the latest instant stored with a 422 at expires_at, and publishes nothing', async () => {
    const published: Envelope[] = [];
    const service = createKeyService({
      // A refused key never reaches the registry.
      keys: {} as KeyRegistry,
      sink: { publish: async (envelopes) => void published.push(...envelopes) },
    });
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
