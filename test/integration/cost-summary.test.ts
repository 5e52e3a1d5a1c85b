import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate } from '../support/harness.ts';

describe('GET /api/costs/summary on the embedded process', () => {
  let app: CallmeterProcess;
  let sessionId: string;

  beforeAll(async () => {
    // An event of January 2025 is past the default window of 35 days: the window is configuration.
    app = await startCallmeter({ DATA_DIR: isolate('summary').dataDir, USAGE_MAX_AGE_DAYS: '3650' });
    sessionId = (
      await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
        room_name: 'r',
        user_id: 'tenant-9',
        agent_id: 'agent-1',
      })
    ).body.id;
    const events = [
      { provider: 'deepgram', event_type: 'stt_minutes', usage_data: { audio_duration_seconds: 210 } },
      { provider: 'gemini', event_type: 'llm_tokens', quantity: 1200, unit_cost: 0.00086, total_cost: 0.001032 },
      { provider: 'google', event_type: 'llm_tokens', usage_data: { input_tokens: 900, output_tokens: 300 } },
      { provider: 'resemble', event_type: 'tts_characters', usage_data: { character_count: 510 } },
      { provider: 'resemble', event_type: 'tts_characters', quantity: 1, timestamp: '2025-01-15T12:00:00Z' },
      // An hour before this UTC month began: last month in UTC, this month in Kathmandu (+05:45).
      {
        provider: 'resemble',
        event_type: 'tts_characters',
        quantity: 1,
        timestamp: new Date(utcMonthStart() - 3_600_000).toISOString(),
      },
    ];
    const answer = await call<{ status: string }[]>(
      app.url,
      'POST',
      '/api/usage/events/batch',
      events.map((e) => ({ session_id: sessionId, user_id: 'tenant-9', ...e })),
    );
    expect(answer.body.map((r) => r.status)).toEqual(Array(6).fill('accepted'));
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('answers the compat.md keys first, with exact decimal strings, and the breakdowns', async () => {
    const summary = await call<Record<string, unknown>>(app.url, 'GET', '/api/costs/summary', undefined, {
      'x-user-id': 'tenant-9',
    });
    expect(summary.status).toBe(200);
    expect(Object.keys(summary.body).slice(0, 3)).toEqual(['total_cost', 'this_month_cost', 'by_provider']);
    // 3.5 min x 0.0077 + 1200 x 0.00086/1K + (900 x 0.30 + 300 x 2.50)/1M + 512 x 0.00004
    expect(summary.body).toMatchObject({
      total_cost: '0.049482',
      this_month_cost: '0.049402',
      by_provider: { deepgram: '0.02695', gemini: '0.001032', google: '0.00102', resemble: '0.02048' },
      currency: 'USD',
      event_count: 6,
      session_count: 1,
      unpriced_event_count: 0,
      reported_total_cost: '0.001032',
      live_cost: '0.049482',
    });
    expect(summary.body.by_service).toContainEqual({
      event_type: 'tts_characters',
      service: 'tts',
      unit: 'character',
      quantity: '512',
      cost: '0.02048',
      parts: [{ dimension: 'quantity', unit: 'character', quantity: '512', cost: '0.02048' }],
    });
  });

  it('starts "this month" in the given time zone, at +05:45 too', async () => {
    const kathmandu = await call<Record<string, unknown>>(
      app.url,
      'GET',
      '/api/costs/summary?tz=Asia/Kathmandu',
      undefined,
      { 'x-user-id': 'tenant-9' },
    );
    expect(kathmandu.body.total_cost).toBe('0.049482');
    expect(kathmandu.body.this_month_cost).toBe('0.049442');
  });

  it('stops live cost counting once the call ended', async () => {
    await call(app.url, 'PATCH', `/api/sessions/${sessionId}`, { status: 'COMPLETED' });
    const summary = await call<Record<string, unknown>>(app.url, 'GET', '/api/costs/summary', undefined, {
      'x-user-id': 'tenant-9',
    });
    expect(summary.body.live_cost).toBe('0');
  });

  it('gives a user with no usage zeros and an empty breakdown', async () => {
    const summary = await call<Record<string, unknown>>(app.url, 'GET', '/api/costs/summary', undefined, {
      'x-user-id': 'nobody',
    });
    expect(summary.body).toMatchObject({
      total_cost: '0',
      this_month_cost: '0',
      by_provider: {},
      by_service: [],
      event_count: 0,
      live_cost: '0',
    });
  });

  it('requires x-user-id, and refuses an unknown time zone with a 422', async () => {
    expect((await call(app.url, 'GET', '/api/costs/summary')).text).toBe('{"detail":"User ID required"}');
    const zone = await call(app.url, 'GET', '/api/costs/summary?tz=Mars/Olympus', undefined, {
      'x-user-id': 'tenant-9',
    });
    expect(zone.status).toBe(422);
    expect(zone.text).toContain('"loc":["query","tz"]');
  });
});

function utcMonthStart(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}
