import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { messageIdOf, type WebhookEvent } from '../../domain/webhooks/index.ts';
import {
  firstUnpriced,
  MAX_PENDING_EMITS,
  UNPRICED_HINT,
  UnpricedNotices,
  unpricedEvent,
  type StoredUsage,
  type UnpricedNoticesDeps,
} from './unpriced-notices.ts';

let ids = 0;
function makeStoredUsage(overrides: Partial<StoredUsage> = {}): StoredUsage {
  ids += 1;
  return {
    id: `00000000-0000-4000-8000-${String(ids).padStart(12, '0')}`,
    user_id: 'tenant-1',
    session_id: 'call-1',
    provider: 'acme',
    model: 'v1',
    event_type: 'tts_characters',
    occurred_at: '2026-11-27T12:00:00.000Z',
    cost_source: 'unpriced',
    reverses: null,
    ...overrides,
  };
}

/** An outbox keyed by webhook-id as the real emitter's, and the tenants an endpoint receives usage.unpriced for. */
function harness(subscribed: string[]) {
  const outbox = new Set<string>();
  const sent: WebhookEvent[] = [];
  const calls = { emit: 0, receiving: 0 };
  // queuedFor 0: the endpoint went between the look and the emit, and the outbox took no row.
  const state = { failing: false, queuedFor: 1 };
  const deps: UnpricedNoticesDeps = {
    endpoints: {
      receiving: (_type, userId) => {
        calls.receiving += 1;
        return subscribed.includes(userId) ? [{} as never] : [];
      },
    },
    emit: async (event) => {
      calls.emit += 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (state.failing) throw new Error('outbox insert failed');
      const message_id = messageIdOf(event.type, event.user_id, event.idempotency_key);
      if (state.queuedFor === 0) return { message_id, endpoints: 0, duplicate: false };
      const duplicate = outbox.has(message_id);
      outbox.add(message_id);
      if (!duplicate) sent.push(event);
      return { message_id, endpoints: duplicate ? 0 : 1, duplicate };
    },
    log: createLogger('silent'),
  };
  return { deps, sent, calls, state };
}

describe('firstUnpriced', () => {
  it('keeps the earliest unpriced row of each tenant, provider, model and event type, never a priced row or a reversal', () => {
    const later = makeStoredUsage({ occurred_at: '2026-11-27T12:00:05.000Z' });
    const earlier = makeStoredUsage({ occurred_at: '2026-11-27T12:00:01.000Z' });
    const otherModel = makeStoredUsage({ model: '' });
    const otherTenant = makeStoredUsage({ user_id: 'tenant-2', occurred_at: '2026-11-27T12:00:09.000Z' });
    const otherType = makeStoredUsage({ event_type: 'stt_minutes' });
    const tie = makeStoredUsage({ user_id: 'tenant-2', occurred_at: '2026-11-27T12:00:09.000Z' });
    const rows = [
      later,
      makeStoredUsage({ cost_source: 'computed', occurred_at: '2026-11-27T11:00:00.000Z' }),
      makeStoredUsage({ reverses: 'some-event', occurred_at: '2026-11-27T11:00:00.000Z' }),
      earlier,
      otherModel,
      otherTenant,
      tie,
      otherType,
    ];
    expect(firstUnpriced(rows)).toEqual([earlier, otherModel, otherTenant, otherType]);
    expect(firstUnpriced([makeStoredUsage({ cost_source: 'reported' })])).toEqual([]);
  });

  it('tells apart kinds whose names would run together', () => {
    const rows = [makeStoredUsage({ provider: 'a', model: 'b:c' }), makeStoredUsage({ provider: 'a:b', model: 'c' })];
    expect(firstUnpriced(rows)).toHaveLength(2);
  });
});

describe('unpricedEvent', () => {
  it('carries the first row of its kind, a null model for none, and one key per tenant kind whatever the event', () => {
    const row = makeStoredUsage({ model: '', session_id: 'call-9', occurred_at: '2026-11-27T12:00:01.250Z' });
    const event = unpricedEvent(row);
    expect(event).toEqual({
      type: 'usage.unpriced',
      user_id: 'tenant-1',
      idempotency_key: event.idempotency_key,
      data: {
        user_id: 'tenant-1',
        provider: 'acme',
        model: null,
        event_type: 'tts_characters',
        session_id: 'call-9',
        event_id: row.id,
        first_seen_at: '2026-11-27T12:00:01.250Z',
        hint: UNPRICED_HINT,
      },
    });
    expect(UNPRICED_HINT).toContain('POST /api/rates');
    const sameKind = unpricedEvent(makeStoredUsage({ model: '', session_id: 'call-10' }));
    expect(sameKind.idempotency_key).toBe(event.idempotency_key);
    expect(unpricedEvent(makeStoredUsage({ model: 'v1' })).idempotency_key).not.toBe(event.idempotency_key);
  });
});

describe('UnpricedNotices', () => {
  it('emits each kind once per tenant, asking the outbox no more once it was emitted', async () => {
    const { deps, sent, calls } = harness(['tenant-1']);
    const notices = new UnpricedNotices(deps);
    const first = makeStoredUsage();
    await notices.noteStored([first, makeStoredUsage({ session_id: 'call-2' })]);
    await notices.noteStored([makeStoredUsage({ session_id: 'call-3' })]);
    expect(sent.map((event) => event.data)).toEqual([unpricedEvent(first).data]);
    expect(calls.emit).toBe(1);
    await notices.noteStored([makeStoredUsage({ model: 'v2' }), makeStoredUsage({ cost_source: 'computed' })]);
    expect(sent.map((event) => event.data['model'])).toEqual(['v1', 'v2']);
  });

  it('sends nothing again from another process or after a restart: the outbox knows the key', async () => {
    const { deps, sent, calls } = harness(['tenant-1']);
    await new UnpricedNotices(deps).noteStored([makeStoredUsage()]);
    await new UnpricedNotices(deps).noteStored([makeStoredUsage({ session_id: 'call-2' })]);
    expect(calls.emit).toBe(2);
    expect(sent).toHaveLength(1);
  });

  it('emits a key once when two rounds store it at the same time', async () => {
    const { deps, calls } = harness(['tenant-1']);
    const notices = new UnpricedNotices(deps);
    await Promise.all([notices.noteStored([makeStoredUsage()]), notices.noteStored([makeStoredUsage()])]);
    expect(calls.emit).toBe(1);
  });

  it('costs a tenant without an endpoint one look in memory per round, and emits once one subscribes', async () => {
    const subscribed: string[] = [];
    const { deps, sent, calls } = harness(subscribed);
    const notices = new UnpricedNotices(deps);
    await notices.noteStored([makeStoredUsage(), makeStoredUsage({ model: 'v2' }), makeStoredUsage({ model: 'v3' })]);
    expect(calls).toEqual({ emit: 0, receiving: 1 });
    await notices.noteStored(Array.from({ length: 100 }, () => makeStoredUsage({ cost_source: 'computed' })));
    expect(calls).toEqual({ emit: 0, receiving: 1 });
    subscribed.push('tenant-1');
    const later = makeStoredUsage({ session_id: 'call-after' });
    await notices.noteStored([later]);
    expect(sent.map((event) => event.data)).toEqual([unpricedEvent(later).data]);
  });

  it('logs an emit that failed, holds nothing up, and emits on the next row of that kind', async () => {
    const { deps, sent, state } = harness(['tenant-1']);
    const notices = new UnpricedNotices(deps);
    state.failing = true;
    await expect(notices.noteStored([makeStoredUsage()])).resolves.toBeUndefined();
    state.failing = false;
    const next = makeStoredUsage({ session_id: 'call-2' });
    await notices.noteStored([next]);
    expect(sent.map((event) => event.data)).toEqual([unpricedEvent(next).data]);
  });

  it('emits again on the next row when the message was queued for no endpoint', async () => {
    const { deps, sent, state } = harness(['tenant-1']);
    const notices = new UnpricedNotices(deps);
    state.queuedFor = 0;
    await notices.noteStored([makeStoredUsage()]);
    state.queuedFor = 1;
    const next = makeStoredUsage({ session_id: 'call-2' });
    await notices.noteStored([next]);
    expect(sent.map((event) => event.data)).toEqual([unpricedEvent(next).data]);
  });

  it('queues at most MAX_PENDING_EMITS emits at once, and announces a kind left out on its next row', async () => {
    const { deps, calls } = harness(['tenant-1']);
    const notices = new UnpricedNotices(deps);
    const invented = Array.from({ length: MAX_PENDING_EMITS + 5 }, (_, i) =>
      makeStoredUsage({ model: `made-up-${i}` }),
    );
    const first = notices.noteStored(invented);
    // A second round while the first one's emits still wait: nothing more is queued.
    await notices.noteStored([makeStoredUsage({ model: 'made-up-late' })]);
    await first;
    expect(calls.emit).toBe(MAX_PENDING_EMITS);
    await notices.noteStored([makeStoredUsage({ model: 'made-up-late' })]);
    expect(calls.emit).toBe(MAX_PENDING_EMITS + 1);
  });
});
