import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from './memory-session-store.ts';
import { sessionMutation } from './session-commands.ts';
import { makeSession, T0 } from './session.fixtures.ts';
import { sessionStoreContract } from './session-store.contract.ts';

sessionStoreContract('MemorySessionStore', (options) => new MemorySessionStore(options));

describe('MemorySessionStore retention', () => {
  it('starts the retention of an ended session again on each change', async () => {
    let now = T0;
    const store = new MemorySessionStore({ endedRetentionMs: 1_000, now: () => now });
    const session = makeSession();
    await store.create(session);
    await store.update(session.id, sessionMutation({ status: 'COMPLETED' }, now));
    now += 900;
    await store.update(session.id, sessionMutation({ analysis: { summary: 'ok' } }, now));
    now += 900;
    expect((await store.get(session.id))?.analysis).toEqual({ summary: 'ok' });
    now += 100;
    expect(await store.get(session.id)).toBeNull();
  });
});
