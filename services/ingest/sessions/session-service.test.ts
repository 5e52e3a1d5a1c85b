import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/logger.ts';
import { MicroBatcher } from '../../shared/micro-batcher.ts';
import type { Envelope } from '../../domain/records/index.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { createSessionService } from './session-service.ts';
import { MAX_WAITING_CHANGES } from '../shared/keyed-queue.ts';
import { MemorySessionStore } from './memory-session-store.ts';
import { MAX_ANALYSIS_BYTES, MAX_SESSION_DATA_BYTES } from './session-limits.ts';
import { T0 } from './session.fixtures.ts';

const log = createLogger('silent');
const brokerDown = () =>
  AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable', { headers: { 'Retry-After': '1' } });

/** A record sink that micro-batches like the Kafka one; `refuse` decides each flush. */
function makeSink(refuse: (records: Envelope[]) => boolean = () => false) {
  const flushes: Envelope[][] = [];
  const batcher = new MicroBatcher<Envelope>(async (records) => {
    flushes.push(records);
    if (refuse(records)) throw brokerDown();
  });
  const sink: RecordSink = { publish: (envelopes) => batcher.submit(envelopes) };
  return { sink, flushes };
}

function makeService(sink: RecordSink) {
  const store = new MemorySessionStore();
  let clock = T0;
  const service = createSessionService({ store, sink, log, now: () => clock++ });
  return { store, service };
}

const dataOf = (records: Envelope[]) =>
  records.map((r) => (r.payload as { session_data: Record<string, unknown> }).session_data);

describe('session service: one session per live room', () => {
  it('answers a second create for the live room with its session, filled with what it lacked, and publishes that change', async () => {
    const { sink, flushes } = makeSink();
    const { service } = makeService(sink);
    const first = await service.create({ room_name: 'r', user_id: 'u', session_data: { from: 'token' } });
    const second = await service.create({
      room_name: 'r',
      user_id: 'u',
      agent_id: 'agent-1',
      session_data: { from: 'worker', lang: 'en' },
    });
    expect(second).toMatchObject({
      id: first.id,
      agent_id: 'agent-1',
      session_data: { from: 'token', lang: 'en' },
      version: 2,
    });
    expect(dataOf(flushes.flat())).toEqual([{ from: 'token' }, { from: 'token', lang: 'en' }]);
    const third = await service.create({ room_name: 'r', user_id: 'u', agent_id: 'agent-2' });
    expect(third).toEqual(second);
  });

  it('gives another tenant its own session of a live room of the same name, and each tenant reads and ends its own', async () => {
    const { service } = makeService(makeSink().sink);
    const mine = await service.create({ room_name: 'room-x', user_id: 'u' });
    const theirs = await service.create({ room_name: 'room-x', user_id: 'v' });
    expect(theirs.id).not.toBe(mine.id);
    expect((await service.create({ room_name: 'room-x', user_id: 'u' })).id).toBe(mine.id);
    expect((await service.getByRoom('room-x', 'u')).id).toBe(mine.id);
    expect((await service.getByRoom('room-x', 'v')).id).toBe(theirs.id);
    await expect(service.getByRoom('room-x', 'w')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await service.endByRoom('room-x', 'v')).status).toBe('COMPLETED');
    expect((await service.getByRoom('room-x', 'u')).status).toBe('ACTIVE');
  });

  it('makes a new session for a room whose sessions all ended, and answers a read naming no tenant with the room’s one live session, or a 409 while several tenants hold it', async () => {
    const { service } = makeService(makeSink().sink);
    const first = await service.create({ room_name: 'r', user_id: 'u' });
    await service.endByRoom('r');
    const next = await service.create({ room_name: 'r', user_id: 'u' });
    expect(next.id).not.toBe(first.id);
    expect((await service.getByRoom('r')).id).toBe(next.id);
    const other = await service.create({ room_name: 'r', user_id: 'v' });
    await expect(service.getByRoom('r')).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await service.getByRoom('r', 'v')).id).toBe(other.id);
    expect((await service.getByRoom('r', 'u')).id).toBe(next.id);
  });

  it('makes one session of 20 concurrent creates for one room', async () => {
    const { service } = makeService(makeSink().sink);
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        service.create({ room_name: 'busy', user_id: 'u', session_data: { [`k${i}`]: i } }),
      ),
    );
    expect(new Set(created.map((s) => s.id)).size).toBe(1);
    expect(Object.keys((await service.getByRoom('busy')).session_data)).toHaveLength(20);
  });
});

describe('session service', () => {
  it('refuses an ended_at past 5 minutes ahead with a 422 before looking the session up, and changes nothing', async () => {
    const { sink, flushes } = makeSink();
    const { store, service } = makeService(sink);
    const { id } = await service.create({ room_name: 'r', user_id: 'u' });
    const far = Date.parse('2300-01-01T00:00:00Z');
    const unknown = '00000000-0000-4000-8000-000000000999';
    await expect(service.update(unknown, { status: 'COMPLETED', ended_at: far })).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: [{ loc: ['body', 'ended_at'], msg: 'Value error, ended_at is more than 5 minutes in the future' }],
    });
    await expect(service.update(id, { status: 'COMPLETED', ended_at: far })).rejects.toMatchObject({
      code: 'VALIDATION',
    });
    expect((await store.get(id))?.status).toBe('ACTIVE');
    expect(flushes.flat()).toHaveLength(1);
    await expect(service.update(id, { status: 'COMPLETED', ended_at: T0 + 60_000 })).resolves.toMatchObject({
      status: 'COMPLETED',
      ended_at: T0 + 60_000,
    });
  });

  it('leaves no trace of two PATCHes of one session that the broker refused, and publishes none later', async () => {
    let refusing = false;
    const { sink, flushes } = makeSink(() => refusing);
    const { store, service } = makeService(sink);
    const { id } = await service.create({ room_name: 'r', user_id: 'u' });
    refusing = true;
    const refused = await Promise.allSettled([
      service.update(id, { metadata: { a: 1 } }),
      service.update(id, { metadata: { b: 2 } }),
    ]);
    expect(refused.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((await store.get(id))?.session_data).toEqual({});

    refusing = false;
    flushes.length = 0;
    const accepted = await service.update(id, { metadata: { c: 3 } });
    expect(accepted.session_data).toEqual({ c: 3 });
    expect(dataOf(flushes.flat())).toEqual([{ c: 3 }]);
  });

  it('refuses a change past MAX_WAITING_CHANGES waiting for one session with 429 and no trace, and takes other sessions meanwhile', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const sink: RecordSink = { publish: async () => (holding ? gate : undefined) };
    const { store, service } = makeService(sink);
    const { id } = await service.create({ room_name: 'r', user_id: 'u' });
    const other = await service.create({ room_name: 'o', user_id: 'u' });
    holding = true;
    const waiting = Array.from({ length: MAX_WAITING_CHANGES }, (_, i) =>
      service.update(id, { metadata: { [`k${i}`]: i } }),
    );
    const refused = await service.update(id, { metadata: { over: true } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    holding = false;
    await expect(service.update(other.id, { metadata: { fine: true } })).resolves.toMatchObject({
      session_data: { fine: true },
    });
    release();
    await Promise.all(waiting);
    const stored = await store.get(id);
    expect(Object.keys(stored?.session_data ?? {})).toHaveLength(MAX_WAITING_CHANGES);
    expect(stored?.session_data).not.toHaveProperty('over');
  });

  it('keeps every one of many concurrent accepted PATCHes of one session, each in its own record', async () => {
    const { sink, flushes } = makeSink();
    const { store, service } = makeService(sink);
    const { id } = await service.create({ room_name: 'r', user_id: 'u' });
    await Promise.all(Array.from({ length: 20 }, (_, i) => service.update(id, { metadata: { [`k${i}`]: i } })));
    const stored = await store.get(id);
    expect([Object.keys(stored?.session_data ?? {}).length, stored?.version]).toEqual([20, 21]);
    expect(flushes.flat().map((r) => (r.payload as { version: number }).version)).toEqual(
      Array.from({ length: 21 }, (_, i) => i + 1),
    );
  });

  it('publishes changes of different sessions in the same send, and refuses only the refused session', async () => {
    let refusedId = '';
    const { sink, flushes } = makeSink((records) => records.some((r) => r.key === refusedId));
    const { store, service } = makeService(sink);
    const [one, two, three] = await Promise.all(
      ['r1', 'r2', 'r3'].map((room_name) => service.create({ room_name, user_id: 'u' })),
    );
    flushes.length = 0;
    await Promise.all([
      service.update(one!.id, { call_status: 'ANSWERED' }),
      service.update(two!.id, { call_status: 'ANSWERED' }),
    ]);
    expect(flushes.map((records) => records.length)).toEqual([2]);

    refusedId = three!.id;
    await expect(service.endByRoom('r3')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect((await store.get(three!.id))?.status).toBe('ACTIVE');
    expect((await service.endByRoom('r1')).status).toBe('COMPLETED');
  });

  it('refuses with a 422 a PATCH that would grow session_data past its bound, and keeps the session', async () => {
    const { sink, flushes } = makeSink();
    const { store, service } = makeService(sink);
    const half = 'x'.repeat(MAX_SESSION_DATA_BYTES / 2);
    const { id } = await service.create({ room_name: 'r', user_id: 'u', session_data: { a: half } });
    const refused = (await service.update(id, { metadata: { b: half } }).catch((e: unknown) => e)) as AppError;
    expect([refused.code, refused.detail]).toEqual([
      'VALIDATION',
      [
        {
          type: 'value_error',
          loc: ['body', 'metadata'],
          msg: expect.stringMatching(
            /^Value error, session_data would be \d+ bytes as JSON, over the limit of 65536 bytes$/,
          ),
          input: { b: half },
          ctx: { error: {} },
        },
      ],
    ]);
    expect((await store.get(id))?.version).toBe(1);
    expect(flushes.flat()).toHaveLength(1);
    await expect(service.update(id, { metadata: { b: 'small' } })).resolves.toMatchObject({ version: 2 });
  });

  it('refuses with a 422 a PATCH whose analysis is past its bound, naming analysis, and keeps the session', async () => {
    const { sink, flushes } = makeSink();
    const { store, service } = makeService(sink);
    const { id } = await service.create({ room_name: 'r', user_id: 'u' });
    const analysis = { summary: 'x'.repeat(MAX_ANALYSIS_BYTES) };
    const refused = (await service
      .update(id, { analysis, call_status: 'ANSWERED' })
      .catch((e: unknown) => e)) as AppError;
    expect([refused.code, refused.detail]).toEqual([
      'VALIDATION',
      [
        {
          type: 'value_error',
          loc: ['body', 'analysis'],
          msg: `Value error, analysis would be ${MAX_ANALYSIS_BYTES + 14} bytes as JSON, over the limit of 65536 bytes`,
          input: analysis,
          ctx: { error: {} },
        },
      ],
    ]);
    expect((await store.get(id))?.version).toBe(1);
    expect(flushes.flat()).toHaveLength(1);
    await expect(service.update(id, { analysis: { summary: 'short' } })).resolves.toMatchObject({
      version: 2,
      analysis: { summary: 'short' },
    });
  });

  it('refuses with a 422 a new session whose session_data is past its bound, and publishes nothing', async () => {
    const { sink, flushes } = makeSink();
    const { service } = makeService(sink);
    const session_data = { a: 'x'.repeat(MAX_SESSION_DATA_BYTES) };
    await expect(service.create({ room_name: 'r', user_id: 'u', session_data })).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: [{ loc: ['body', 'session_data'] }],
    });
    expect(flushes).toEqual([]);
  });
});
