import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { EventStreamReader } from '../support/event-stream-reader.ts';
import { isolate, serviceEnv } from '../support/harness.ts';

interface LiveMessage {
  total_cost: string;
  sessions: {
    session_id: string;
    total_cost: string;
    by_service: Record<string, { quantity: string; cost: string }>;
  }[];
}

const STT_TWO_MINUTES = { provider: 'deepgram', event_type: 'stt_minutes', quantity: 2 }; // 0.0154
const TTS_100_CHARACTERS = { provider: 'resemble', event_type: 'tts_characters', quantity: 100 }; // 0.004

async function newSession(url: string, userId: string, room: string): Promise<string> {
  const created = await call<{ id: string }>(url, 'POST', '/api/sessions/', { room_name: room, user_id: userId });
  expect(created.status).toBe(201);
  return created.body.id;
}

async function postUsage(url: string, sessionId: string, userId: string, event: object): Promise<void> {
  const answer = await call(url, 'POST', '/api/usage/events', { session_id: sessionId, user_id: userId, ...event });
  expect(answer.status, answer.text).toBe(201);
}

async function summaryLiveCost(url: string, userId: string): Promise<string> {
  const summary = await call<{ live_cost: string }>(url, 'GET', '/api/costs/summary', undefined, {
    'x-user-id': userId,
  });
  return summary.body.live_cost;
}

describe('the live cost streams on the embedded process', () => {
  let app: CallmeterProcess;
  const open: EventStreamReader[] = [];
  const stream = async (path: string, headers: Record<string, string> = {}) => {
    const reader = await EventStreamReader.open(`${app.url}${path}`, headers);
    open.push(reader);
    return reader;
  };

  beforeAll(async () => {
    app = await startCallmeter({
      DATA_DIR: isolate('live-streams').dataDir,
      LIVE_STREAM_HEARTBEAT_SECONDS: '1',
      LIVE_STREAMS_PER_TENANT: '3',
    });
  });

  afterAll(async () => {
    for (const reader of open) reader.close();
    await app?.stop();
  });

  it('sends the calls in progress at once, then again when their usage is stored, equal to the summary', async () => {
    const sessionId = await newSession(app.url, 'live-1', 'live-room-1');
    const otherTenant = await newSession(app.url, 'live-2', 'live-room-2');
    const live = await stream('/api/costs/live', { 'x-user-id': 'live-1' });
    expect(live.response.status).toBe(200);
    expect(live.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const first = await live.message(1);
    expect(first.event).toBe('live');
    expect(first.data).toMatchObject({ total_cost: '0', currency: 'USD', sessions: [{ session_id: sessionId }] });

    await postUsage(app.url, otherTenant, 'live-2', STT_TWO_MINUTES);
    await postUsage(app.url, sessionId, 'live-1', STT_TWO_MINUTES);
    await live.until(() => (live.messages.at(-1)?.data as LiveMessage).total_cost === '0.0154', 10_000, 'stt cost');
    await postUsage(app.url, sessionId, 'live-1', TTS_100_CHARACTERS);
    await live.until(() => (live.messages.at(-1)?.data as LiveMessage).total_cost === '0.0194', 10_000, 'tts cost');
    const latest = live.messages.at(-1)!.data as LiveMessage;
    expect(latest.sessions).toHaveLength(1);
    expect(latest.sessions[0]).toMatchObject({
      session_id: sessionId,
      room_name: 'live-room-1',
      status: 'ACTIVE',
      total_cost: '0.0194',
      event_count: 2,
      by_service: {
        stt: { event_type: 'stt_minutes', unit: 'minute', quantity: '2', cost: '0.0154' },
        tts: { event_type: 'tts_characters', unit: 'character', quantity: '100', cost: '0.004' },
      },
    });
    expect(await summaryLiveCost(app.url, 'live-1')).toBe(latest.total_cost);
    // Another tenant's usage is never in this stream, and every message has a distinct id.
    expect(live.messages.every((m) => !JSON.stringify(m.data).includes(otherTenant))).toBe(true);
    expect(new Set(live.messages.map((m) => m.id)).size).toBe(live.messages.length);

    // A call that ends leaves the stream.
    await call(app.url, 'PATCH', `/api/sessions/${sessionId}`, { status: 'COMPLETED' });
    await live.until(() => (live.messages.at(-1)?.data as LiveMessage).sessions.length === 0, 10_000, 'the end');
    expect(live.messages.at(-1)!.data).toMatchObject({ total_cost: '0', sessions: [] });
  });

  it('keeps an idle stream open with heartbeats, and resumes from Last-Event-ID without resending', async () => {
    const sessionId = await newSession(app.url, 'live-3', 'live-room-3');
    const first = await stream('/api/costs/live', { 'x-user-id': 'live-3' });
    const seen = await first.message(1);
    await first.until(() => first.comments >= 2, 10_000, 'two heartbeats');
    expect(first.messages).toHaveLength(1);

    // The reader already has this state: nothing is sent until it changes.
    const resumed = await stream('/api/costs/live', { 'x-user-id': 'live-3', 'last-event-id': seen.id! });
    await resumed.until(() => resumed.comments >= 1, 10_000, 'a heartbeat');
    expect(resumed.messages).toHaveLength(0);
    await postUsage(app.url, sessionId, 'live-3', STT_TWO_MINUTES);
    expect((await resumed.message(1)).data).toMatchObject({ total_cost: '0.0154' });

    // A reader whose last state is older gets the current one at once.
    const behind = await stream('/api/costs/live', { 'x-user-id': 'live-3', 'last-event-id': seen.id! });
    expect((await behind.message(1)).data).toMatchObject({ total_cost: '0.0154' });
  });

  it('streams one call’s breakdown on every change, and ends with the final one', async () => {
    const sessionId = await newSession(app.url, 'live-4', 'live-room-4');
    const breakdown = await stream(`/api/sessions/${sessionId}/cost-stream`, { 'x-user-id': 'live-4' });
    expect((await breakdown.message(1)).data).toMatchObject({ session_id: sessionId, total_cost: '0', live: true });
    await postUsage(app.url, sessionId, 'live-4', STT_TWO_MINUTES);
    await breakdown.until(
      () => (breakdown.messages.at(-1)?.data as { total_cost: string }).total_cost === '0.0154',
      10_000,
      'the usage',
    );
    const asRead = await call(app.url, 'GET', `/api/sessions/${sessionId}/cost-breakdown`);
    expect(breakdown.messages.at(-1)!.data).toEqual({ ...asRead.body, status: 'ACTIVE', budget: null });

    await call(app.url, 'PATCH', `/api/sessions/${sessionId}`, { status: 'COMPLETED' });
    await breakdown.until(() => breakdown.ended, 10_000, 'the end of the stream');
    const last = breakdown.messages.at(-1)!;
    expect(last.event).toBe('end');
    expect(last.data).toMatchObject({ total_cost: '0.0154', live: false, status: 'COMPLETED' });
  });

  it('answers 404 for another user’s or an unknown session, 401 without a user, and 429 past the cap', async () => {
    const sessionId = await newSession(app.url, 'live-5', 'live-room-5');
    const foreign = await call(app.url, 'GET', `/api/sessions/${sessionId}/cost-stream`, undefined, {
      'x-user-id': 'someone-else',
    });
    expect([foreign.status, foreign.body]).toEqual([404, { detail: 'Session not found' }]);
    const unknown = await call(app.url, 'GET', '/api/sessions/00000000-0000-4000-8000-000000000000/cost-stream');
    expect([unknown.status, unknown.body]).toEqual([404, { detail: 'Session not found' }]);
    const anonymous = await call(app.url, 'GET', '/api/costs/live');
    expect([anonymous.status, anonymous.body]).toEqual([401, { detail: 'User ID required' }]);

    const held = [];
    for (let i = 0; i < 3; i += 1) {
      const reader = await stream('/api/costs/live', { 'x-user-id': 'live-5' });
      await reader.message(1);
      held.push(reader);
    }
    const refused = await call<{ detail: string }>(app.url, 'GET', '/api/costs/live', undefined, {
      'x-user-id': 'live-5',
    });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/^Too many live streams open for this user \(3\)/);
    // The cap is per tenant, and a stream closed by its reader frees its place.
    const otherTenant = await stream('/api/costs/live', { 'x-user-id': 'live-6' });
    expect(otherTenant.response.status).toBe(200);
    held[0]!.close();
    const again = await (async () => {
      for (let i = 0; i < 50; i += 1) {
        const reader = await stream('/api/costs/live', { 'x-user-id': 'live-5' });
        if (reader.response.status === 200) return reader;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the closed stream never freed its place');
    })();
    expect((await again.message(1)).data).toMatchObject({ sessions: [{ session_id: sessionId }] });
  });
});

describe('the live cost streams through Kafka and Redis', () => {
  let app: CallmeterProcess;
  let reader: EventStreamReader | null = null;

  beforeAll(async () => {
    app = await startCallmeter(serviceEnv(isolate('live-kafka')));
  });

  afterAll(async () => {
    reader?.close();
    await app?.stop();
  });

  it('wakes the stream when the consumer announces the stored batch over Redis', async () => {
    const sessionId = await newSession(app.url, 'live-k', 'live-room-k');
    reader = await EventStreamReader.open(`${app.url}/api/costs/live`, { 'x-user-id': 'live-k' });
    expect((await reader.message(1)).data).toMatchObject({ total_cost: '0' });
    await postUsage(app.url, sessionId, 'live-k', STT_TWO_MINUTES);
    await reader.until(
      () => (reader!.messages.at(-1)?.data as LiveMessage).total_cost === '0.0154',
      20_000,
      'the stored usage',
    );
    expect(await summaryLiveCost(app.url, 'live-k')).toBe('0.0154');
  });

  it('stops at once on SIGTERM with a stream open', async () => {
    expect(reader!.ended).toBe(false);
    expect(await app.stop('SIGTERM')).toBe(0);
    await reader!.until(() => reader!.ended, 5_000, 'the end of the stream');
  });
});
