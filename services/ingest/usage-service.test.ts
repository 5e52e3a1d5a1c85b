import { describe, expect, it, vi } from 'vitest';
import type { UsageEventBody } from '../../schemas/http/usage-event.ts';
import { MemorySessionStore } from './sessions/memory-session-store.ts';
import { makeSession, T0 } from './sessions/session.fixtures.ts';
import { createUsageService } from './usage-service.ts';

describe('the usage service', () => {
  it('reads each session of a batch once, an unknown one included, and answers every event as alone', async () => {
    const store = new MemorySessionStore();
    const session = makeSession();
    await store.create(session);
    const reads = vi.spyOn(store, 'get');
    const usage = createUsageService({ sessions: store, sink: { publish: async () => undefined }, now: () => T0 });
    const event = (session_id: string, quantity: string) =>
      ({ session_id, user_id: session.user_id, provider: 'deepgram', event_type: 'stt_minutes', quantity }) as unknown as UsageEventBody;
    const readSession = usage.sessionReader();
    const prepared = await Promise.all(['1', '2', '3'].map((q) => usage.prepare(event(session.id, q), T0, readSession)));
    expect(prepared.map((p) => ('record' in p ? p.record.quantity : null))).toEqual(['1', '2', '3']);
    const unknown = '00000000-0000-4000-8000-000000000999';
    await Promise.all([1, 2].map(() => expect(usage.prepare(event(unknown, '1'), T0, readSession)).rejects.toThrow('Session not found')));
    expect(reads.mock.calls.map(([id]) => id)).toEqual([session.id, unknown]);
  });
});
