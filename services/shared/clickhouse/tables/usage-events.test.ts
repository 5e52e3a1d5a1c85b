import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lookupParts, STORED_LOOKUP_CHARS } from './usage-events.ts';

describe('the stored-id lookup in parts', () => {
  it('cuts a large round into parts whose URL-encoded ids fit the budget, keeping every ref once and in order', () => {
    const refs = Array.from({ length: 30_000 }, (_, i) => ({
      user_id: i % 3 === 0 ? 'é'.repeat(512) : `tenant-${i % 7}`,
      event_id: randomUUID(),
    }));
    const parts = lookupParts(refs);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flat()).toEqual(refs);
    for (const part of parts) {
      const encoded = part.reduce(
        (sum, ref) =>
          sum + encodeURIComponent(`'${ref.user_id}',`).length + encodeURIComponent(`'${ref.event_id}',`).length,
        0,
      );
      expect(encoded).toBeLessThanOrEqual(STORED_LOOKUP_CHARS);
    }
  });

  it('asks once for an ordinary round, and never for no refs', () => {
    const refs = Array.from({ length: 2_000 }, () => ({ user_id: 'tenant', event_id: randomUUID() }));
    expect(lookupParts(refs)).toHaveLength(1);
    expect(lookupParts([])).toEqual([]);
  });
});
