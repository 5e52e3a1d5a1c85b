import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import type { EventClaims } from '../usage/event-claims.ts';
import { releaseClaims } from './release-claims.ts';

const log = createLogger('silent');

/** Claims that note each release, or refuse every one. */
function fakeClaims(refuse = false): EventClaims & { released: [string, readonly string[]][] } {
  const released: [string, readonly string[]][] = [];
  return {
    released,
    claim: async () => ({ kept: new Set(), fresh: new Set() }),
    release: async (keys, token) => {
      if (refuse) throw new Error('redis down');
      released.push([token, keys]);
    },
  };
}

const claimed = [
  { token: 'batch-1', keys: ['e1:t', 'e2:t'] },
  { token: 'batch-2', keys: ['e3:t'] },
];

describe('releaseClaims', () => {
  it("lets go of each batch's claims under its own token", async () => {
    const claims = fakeClaims();
    await releaseClaims(claims, claimed, { onCluster: false, log });
    expect(claims.released).toEqual([
      ['batch-1', ['e1:t', 'e2:t']],
      ['batch-2', ['e3:t']],
    ]);
  });

  it('keeps the claims for their TTL on a cluster, where the lookup may read a lagging replica', async () => {
    const claims = fakeClaims();
    await releaseClaims(claims, claimed, { onCluster: true, log });
    expect(claims.released).toEqual([]);
  });

  it('never fails the round when Redis refuses the release, and does nothing without claims', async () => {
    await expect(releaseClaims(fakeClaims(true), claimed, { onCluster: false, log })).resolves.toBeUndefined();
    await expect(releaseClaims(null, claimed, { onCluster: false, log })).resolves.toBeUndefined();
  });
});
