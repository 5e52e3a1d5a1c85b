import { describe, expect, it } from 'vitest';
import type { UsageEventBody } from '../../../schemas/http/usage-event.ts';
import { AppError } from '../../shared/errors.ts';
import type { Envelope } from '../../domain/records/index.ts';
import { MemorySessionStore } from '../sessions/memory-session-store.ts';
import { makeSession, T0 } from '../sessions/session.fixtures.ts';
import type { Session } from '../sessions/session.ts';
import { forgettingChanges, SessionIdentities } from './session-identities.ts';
import { createUsageService, identityRefreshMs } from './usage-service.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const GRACE_MS = HOUR_MS;

/** A call of ten minutes from T0, ended; the clock starts at its end. */
async function endedCall(overrides: Partial<Session> = {}) {
  const store = new MemorySessionStore();
  const session = makeSession({
    agent_id: 'agent-1',
    status: 'COMPLETED',
    ended_at: T0 + 10 * 60_000,
    duration: 600,
    updated_at: T0 + 10 * 60_000,
    ...overrides,
  });
  await store.create(session);
  const published: Envelope[] = [];
  let clock = T0 + 10 * 60_000;
  const identities = new SessionIdentities(store, { refreshMs: identityRefreshMs(GRACE_MS), now: () => clock });
  const service = createUsageService({
    sessions: store,
    sink: { publish: async (envelopes) => void published.push(...envelopes) },
    now: () => clock,
    maxAgeMs: 35 * DAY_MS,
    graceAfterEndMs: GRACE_MS,
    identities,
  });
  const usage = (atMs: number | null): UsageEventBody => ({
    session_id: session.id,
    user_id: session.user_id,
    provider: 'deepgram',
    event_type: 'stt_minutes',
    quantity: '1',
    ...(atMs === null ? {} : { timestamp: new Date(atMs) }),
  });
  return {
    store,
    session,
    service,
    identities,
    published,
    usage,
    advance: (ms: number) => (clock += ms),
  };
}

const conflict = (answer: Promise<unknown>) =>
  expect(answer).rejects.toSatisfy((error) => error instanceof AppError && error.code === 'CONFLICT');

describe('usage service: usage is judged by when it occurred', () => {
  it('takes usage that occurred within the call whenever it arrives inside the timestamp window', async () => {
    const call = await endedCall();
    call.advance(34 * DAY_MS);
    const accepted = await call.service.accept(call.usage(T0 + 5 * 60_000));
    expect(accepted.record.occurred_at).toBe(new Date(T0 + 5 * 60_000).toISOString());
    expect(call.published).toHaveLength(1);
  });

  it('takes usage that occurred within the grace after the end, and refuses it past that with a 409 naming both instants', async () => {
    const call = await endedCall();
    const end = T0 + 10 * 60_000;
    call.advance(2 * DAY_MS);
    await call.service.accept(call.usage(end + GRACE_MS));
    const past = call.service.accept(call.usage(end + GRACE_MS + 1));
    await conflict(past);
    await expect(past).rejects.toThrow(
      `Session ended at ${new Date(end).toISOString()}; usage at ${new Date(end + GRACE_MS + 1).toISOString()} is more than 3600 seconds after its end: it takes no more usage`,
    );
    expect(call.published).toHaveLength(1);
  });

  it('judges usage without a timestamp by its receipt, so the grace is how late after the end it may arrive', async () => {
    const call = await endedCall();
    call.advance(GRACE_MS);
    await call.service.accept(call.usage(null));
    call.advance(1);
    await conflict(call.service.accept(call.usage(null)));
  });

  it('rejects a batch item past the end alone, at its session_id, and takes the item within the call', async () => {
    const call = await endedCall();
    call.advance(DAY_MS);
    const late = { ...call.usage(null), timestamp: undefined };
    const inside = { ...call.usage(null), timestamp: new Date(T0 + 60_000).toISOString() };
    const results = await call.service.acceptBatch([late, inside] as never);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'accepted']);
    expect(results[0]).toMatchObject({ errors: [{ loc: ['body', 0, 'session_id'] }] });
  });

  it('never refuses on a kept identity: an end moved later by another process is read before a 409', async () => {
    const call = await endedCall();
    const end = T0 + 10 * 60_000;
    await call.identities.read(call.session.id);
    await call.store.update(call.session.id, (current) => ({
      ...current,
      ended_at: end + DAY_MS,
      updated_at: end + DAY_MS,
      version: current.version + 1,
    }));
    call.advance(DAY_MS);
    await call.service.accept(call.usage(end + DAY_MS - 60_000));
    expect(call.published).toHaveLength(1);
  });

  it('knows at once of an end recorded through the session store of this process', async () => {
    const call = await endedCall({ status: 'ACTIVE', ended_at: null, duration: null });
    call.advance(2 * GRACE_MS);
    await call.service.accept(call.usage(null));
    const store = forgettingChanges(call.store, call.identities);
    await store.update(call.session.id, (current) => ({
      ...current,
      status: 'COMPLETED',
      ended_at: T0 + 10 * 60_000,
      updated_at: T0 + 10 * 60_000,
      version: current.version + 1,
    }));
    // Well within the kept identity's refresh: only the store's notice makes the end known.
    call.advance(1_000);
    await conflict(call.service.accept(call.usage(null)));
  });

  it('ends a session stored with an end in the year 9999 five minutes after its last change, as usage sees it', async () => {
    const call = await endedCall({ ended_at: Date.parse('9999-12-31T00:00:00Z'), updated_at: T0 + 10 * 60_000 });
    call.advance(DAY_MS);
    await call.service.accept(call.usage(T0 + 15 * 60_000 + GRACE_MS));
    await conflict(call.service.accept(call.usage(null)));
  });
});
