import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate } from '../support/harness.ts';

const USER = 'tenant-views';
const headers = { 'x-user-id': USER };

describe('timeline, by-agent and the per-session breakdown on the embedded process', () => {
  let app: CallmeterProcess;
  let busy: string;
  let quiet: string;
  const get = (path: string, extra: Record<string, string> = headers) =>
    call<unknown>(app.url, 'GET', path, undefined, extra);

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('views').dataDir, LOG_LEVEL: 'warn' });
    busy = (
      await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
        room_name: 'busy',
        user_id: USER,
        agent_id: 'agent-1',
      })
    ).body.id;
    quiet = (await call<{ id: string }>(app.url, 'POST', '/api/sessions/', { room_name: 'quiet', user_id: USER })).body
      .id;
    // 10,001 events of one character each, a week ago: more than a breakdown lists.
    const at = new Date(Date.now() - 7 * 86_400_000).toISOString();
    for (let sent = 0; sent < 10_001; sent += 1000) {
      const batch = Array.from({ length: Math.min(1000, 10_001 - sent) }, () => ({
        session_id: busy,
        user_id: USER,
        provider: 'resemble',
        event_type: 'tts_characters',
        quantity: 1,
        timestamp: at,
        event_id: randomUUID(),
      }));
      const answer = await call<{ status: string }[]>(app.url, 'POST', '/api/usage/events/batch', batch);
      expect(answer.body.every((item) => item.status === 'accepted')).toBe(true);
    }
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('answers a bare daily array from the first usage to today, zeros included', async () => {
    const answer = await get('/api/costs/timeline');
    const points = answer.body as { date: string; total_cost: string; by_provider: Record<string, string> }[];
    expect(answer.status).toBe(200);
    expect(points).toHaveLength(8);
    expect(points[0]).toMatchObject({ total_cost: '0.40004', by_provider: { resemble: '0.40004' } });
    expect(points.slice(1).map((p) => p.total_cost)).toEqual(Array(7).fill('0'));
    expect(points.at(-1)!.date).toBe(new Date().toISOString().slice(0, 10));
  });

  it('validates the query before asking for x-user-id, as the old service did', async () => {
    const pattern = await get('/api/costs/timeline?period=hourly', {});
    expect(pattern.status).toBe(422);
    expect(pattern.text).toBe(
      `{"detail":[{"type":"string_pattern_mismatch","loc":["query","period"],"msg":"String should match pattern '^(daily|weekly|monthly)$'","input":"hourly","ctx":{"pattern":"^(daily|weekly|monthly)$"}}]}`,
    );
    for (const path of ['/api/costs/timeline', '/api/costs/by-agent']) {
      const missing = await get(path, { 'x-user-id': '' });
      expect([missing.status, missing.text]).toEqual([401, '{"detail":"User ID required"}']);
    }
  });

  it('refuses unparseable dates, unknown zones and reversed ranges with a 422', async () => {
    const date = await get('/api/costs/timeline?start_date=2026-02-30');
    expect(date.text).toBe(
      '{"detail":[{"type":"datetime_from_date_parsing","loc":["query","start_date"],"msg":"Input should be a valid datetime or date, day value is outside expected range","input":"2026-02-30","ctx":{"error":"day value is outside expected range"}}]}',
    );
    expect((await get('/api/costs/by-agent?end_date=soon')).status).toBe(422);
    expect((await get('/api/costs/timeline?tz=Mars/Olympus')).text).toContain('"loc":["query","tz"]');
    expect((await get('/api/costs/timeline?start_date=2026-11-02&end_date=2026-11-01')).text).toContain(
      '"loc":["query","end_date"]',
    );
    expect((await get('/api/costs/timeline?start_date=1990-01-01&end_date=2026-01-01&period=monthly')).status).toBe(
      200,
    );
  });

  it('cuts a range of more than 10,000 buckets to the caller’s data, as dashboards ask for "all time"', async () => {
    const allTime = await get('/api/costs/timeline?start_date=2020-01-01&end_date=2099-12-31');
    expect(allTime.status).toBe(200);
    // The same buckets as the default timeline: from the first usage, a week ago, to today, zeros included.
    expect(allTime.body).toEqual((await get('/api/costs/timeline')).body);
    expect((allTime.body as unknown[]).length).toBe(8);
    // A long range that ends before the first usage holds none of it.
    const before = await get('/api/costs/timeline?start_date=1990-01-01&end_date=2026-01-01');
    expect([before.status, before.body]).toEqual([200, []]);
    // In another zone and period, the default (its span and lines read in one statement) and a range that
    // starts on the first usage's local day agree.
    for (const [zone, period] of [
      ['Asia/Kolkata', 'daily'],
      ['America/New_York', 'weekly'],
      ['UTC', 'monthly'],
    ]) {
      const daily = (await get(`/api/costs/timeline?tz=${zone}`)).body as { date: string }[];
      const ranged = await get(`/api/costs/timeline?tz=${zone}&period=${period}&start_date=${daily[0]!.date}`);
      expect(ranged.status).toBe(200);
      expect((ranged.body as unknown[]).length).toBeGreaterThan(0);
      expect((await get(`/api/costs/timeline?tz=${zone}&period=${period}`)).body).toEqual(ranged.body);
    }
    // Another tenant with no usage: no buckets.
    for (const path of ['/api/costs/timeline?start_date=2020-01-01&end_date=2099-12-31', '/api/costs/timeline'])
      expect((await get(path, { 'x-user-id': 'nobody-here' })).body).toEqual([]);
  });

  it('exports the timeline and the agents as CSV when asked', async () => {
    const byAccept = await get('/api/costs/timeline?period=monthly&start_date=2026-01-01&end_date=2026-02-15', {
      ...headers,
      accept: 'text/csv',
    });
    expect(byAccept.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(byAccept.text).toBe('date,total_cost,currency,event_count\r\n2026-01-01,0,USD,0\r\n2026-02-01,0,USD,0\r\n');
    const agents = await get('/api/costs/by-agent?format=csv');
    expect(agents.text).toBe(
      'agent_id,agent_name,total_cost,currency,session_count,event_count\r\nagent-1,Unknown,0.40004,USD,1,10001\r\n',
    );
    expect((await get('/api/costs/by-agent?format=xml')).status).toBe(422);
  });

  it('gives a user with no usage empty lists', async () => {
    for (const path of ['/api/costs/timeline', '/api/costs/by-agent']) {
      const answer = await get(path, { 'x-user-id': 'nobody' });
      expect([answer.status, answer.text]).toEqual([200, '[]']);
    }
  });

  it('lists at most 10,000 events of a session, oldest first, while the totals cover all of them', async () => {
    const answer = await get(`/api/sessions/${busy}/cost-breakdown`, {});
    const body = answer.body as {
      total_cost: string;
      events: unknown[];
      events_truncated: boolean;
      event_count: number;
      cost_by_type: Record<string, string>;
      items: unknown[];
    };
    expect(Object.keys(body).slice(0, 4)).toEqual(['session_id', 'total_cost', 'events', 'cost_by_type']);
    expect(body).toMatchObject({
      total_cost: '0.40004',
      events_truncated: true,
      event_count: 10_001,
      cost_by_type: { tts_characters: '0.40004' },
    });
    expect(body.events).toHaveLength(10_000);
    expect(body.items).toEqual([
      {
        provider: 'resemble',
        service: 'tts',
        event_type: 'tts_characters',
        quantity: '10001',
        unit: 'character',
        cost: '0.40004',
        parts: [{ dimension: 'quantity', unit: 'character', quantity: '10001', cost: '0.40004' }],
      },
    ]);
  });

  it('answers a session without events with zeros, and an unknown or foreign session with a 404', async () => {
    const empty = await get(`/api/sessions/${quiet}/cost-breakdown`);
    expect(empty.body).toMatchObject({
      session_id: quiet,
      total_cost: '0',
      events: [],
      cost_by_type: {},
      items: [],
      live: true,
    });
    for (const [path, extra] of [
      [`/api/sessions/${randomUUID()}/cost-breakdown`, headers],
      ['/api/sessions/not-a-uuid/cost-breakdown', headers],
      [`/api/sessions/${busy}/cost-breakdown`, { 'x-user-id': 'someone-else' }],
    ] as const) {
      const answer = await get(path, extra);
      expect([answer.status, answer.text]).toEqual([404, '{"detail":"Session not found"}']);
    }
  });
});
