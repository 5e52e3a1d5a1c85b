import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, oneProcessModes } from '../support/harness.ts';

const USER = 'reprice-a';
const OTHER = 'reprice-b';
const DAY_MS = 86_400_000;

interface Summary {
  total_cost: string;
  event_count: number;
  unpriced_event_count: number;
}
interface Repriced {
  dry_run: boolean;
  events: number;
  old_total: string;
  new_total: string;
}

const MODES = oneProcessModes('reprice');

describe.each(MODES)('repricing on $name: stored usage takes a price entered afterwards, once', (mode) => {
  let app: CallmeterProcess;
  let sessionId: string;
  let deepgramCost: string;
  const twoDaysAgo = new Date(Date.now() - 2 * DAY_MS);
  const range = {
    from: new Date(Date.now() - 4 * DAY_MS).toISOString(),
    to: new Date(Date.now() + 60_000).toISOString(),
  };
  const as = (user: string) => ({ 'x-user-id': user });
  const summary = async (user = USER) =>
    (await call<Summary>(app.url, 'GET', '/api/costs/summary', undefined, as(user))).body;
  const reprice = (body: Record<string, unknown>) => call<Repriced>(app.url, 'POST', '/api/rates/reprice', body);
  const unpricedProviders = async () =>
    (await call<{ provider: string }[]>(app.url, 'GET', '/api/costs/unpriced', undefined, as(USER))).body.map(
      (row) => row.provider,
    );

  beforeAll(async () => {
    app = await startCallmeter(mode.env());
    for (const user of [USER, OTHER]) {
      const session = await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
        room_name: 'reprice-room',
        user_id: user,
        agent_id: 'agent-reprice',
      });
      expect(session.status).toBe(201);
      if (user === USER) sessionId = session.body.id;
      const events = [
        ...[1, 2, 3].map((n) => ({
          provider: 'speechmatics-reprice',
          event_type: 'stt_minutes',
          quantity: 2,
          timestamp: new Date(twoDaysAgo.getTime() + n * 60_000).toISOString(),
        })),
        { provider: 'deepgram', event_type: 'stt_minutes', quantity: 3, timestamp: twoDaysAgo.toISOString() },
      ];
      const answer = await call<{ status: string; cost: string }[]>(
        app.url,
        'POST',
        '/api/usage/events/batch',
        events.map((event) => ({ session_id: session.body.id, user_id: user, ...event })),
      );
      expect(answer.body.map((item) => item.status)).toEqual(Array(4).fill('accepted'));
      deepgramCost = answer.body[3]!.cost;
    }
    await eventually(async () => expect((await summary()).event_count).toBe(4));
    await eventually(async () => expect((await summary(OTHER)).event_count).toBe(4));
    expect(await unpricedProviders()).toContain('speechmatics-reprice');
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('prices a week of unpriced calls after a rate is added that starts in the past: a dry run first, then once', async () => {
    const before = await summary();
    const rate = await call(app.url, 'POST', '/api/rates', {
      user_id: USER,
      provider: 'speechmatics-reprice',
      event_type: 'stt_minutes',
      price: '0.01',
      effective_from: new Date(Date.now() - 3 * DAY_MS).toISOString(),
    });
    expect(rate.status).toBe(201);
    // The entry prices nothing stored until a repricing applies it.
    expect((await summary()).total_cost).toBe(before.total_cost);

    const scope = { ...range, user_id: USER, provider: 'speechmatics-reprice' };
    await eventually(async () => {
      const dry = await reprice({ ...scope, dry_run: true });
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({ dry_run: true, events: 3, old_total: '0', new_total: '0.06' });
    });
    expect((await summary()).total_cost).toBe(before.total_cost);

    const applied = await reprice(scope);
    expect(applied.body).toEqual({ dry_run: false, events: 3, old_total: '0', new_total: '0.06' });
    const expected = new Exact(before.total_cost).plus('0.06').toFixed();
    await eventually(async () => {
      const now = await summary();
      expect([now.total_cost, now.event_count, now.unpriced_event_count]).toEqual([expected, 4, 0]);
    });
    expect(await unpricedProviders()).not.toContain('speechmatics-reprice');

    const again = await reprice(scope);
    expect(again.body).toEqual({ dry_run: false, events: 0, old_total: '0', new_total: '0' });
    expect((await summary()).total_cost).toBe(expected);
    // Another tenant's unpriced usage is not touched: the rate is USER's.
    expect((await summary(OTHER)).unpriced_event_count).toBe(3);

    const rows = (
      await call<{
        events: { total_cost: string; weight: number; correction: { kind: string; reason: string } | null }[];
      }>(app.url, 'GET', `/api/sessions/${sessionId}/cost-breakdown`)
    ).body.events.filter((row) => row.correction?.kind === 'reprice');
    expect(rows.map((row) => [row.weight, row.total_cost]).sort()).toEqual(
      [...Array(3).fill([-1, '0']), ...Array(3).fill([1, '0.02'])].sort(),
    );
  });

  it('reprices what a tenant price entered after it was stored supersedes, and nothing a card change would', async () => {
    const before = await summary();
    const rate = await call(app.url, 'POST', '/api/rates', {
      user_id: USER,
      provider: 'deepgram',
      event_type: 'stt_minutes',
      price: '0.005',
      effective_from: new Date(Date.now() - 3 * DAY_MS).toISOString(),
    });
    expect(rate.status).toBe(201);
    const newCost = new Exact('0.005').times(3).toFixed();
    await eventually(async () => {
      const dry = await reprice({ ...range, user_id: USER, dry_run: true });
      expect(dry.body).toEqual({ dry_run: true, events: 1, old_total: deepgramCost, new_total: newCost });
    });
    const applied = await reprice({ ...range, user_id: USER });
    expect(applied.body.events).toBe(1);
    const expected = new Exact(before.total_cost).minus(deepgramCost).plus(newCost).toFixed();
    await eventually(async () => expect((await summary()).total_cost).toBe(expected));
    // The other tenant's events keep the card's price: no tenant entry of theirs superseded it.
    const others = await reprice({ ...range, user_id: OTHER, dry_run: true });
    expect(others.body).toEqual({ dry_run: true, events: 0, old_total: '0', new_total: '0' });
  });

  it('refuses a range that is empty or longer than 31 days, and an entry older than the usage window', async () => {
    const empty = await reprice({ from: range.to, to: range.from });
    expect([empty.status, (empty.body as unknown as { detail: { loc: string[] }[] }).detail[0]!.loc]).toEqual([
      422,
      ['body', 'to'],
    ]);
    const long = await reprice({ from: new Date(Date.now() - 40 * DAY_MS).toISOString(), to: range.to });
    expect(long.status).toBe(422);
    const old = await call(app.url, 'POST', '/api/rates', {
      user_id: USER,
      provider: 'deepgram',
      event_type: 'stt_minutes',
      price: '0.001',
      effective_from: new Date(Date.now() - 40 * DAY_MS).toISOString(),
    });
    expect(old.status).toBe(422);
  });
});
