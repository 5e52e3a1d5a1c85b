import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate } from '../support/harness.ts';

// The dashboard in Debian's chromium (installed by the test setup; never a browser download),
// driven by playwright-core, against the embedded process: every tile and table equals the API's
// answer, the chart has one point per bucket, the drill-down lists the breakdown, and usage posted
// during the test reaches the live tile and the drill-down through the live streams.
const ROOT = path.resolve(import.meta.dirname, '../..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const USER = 'dash-user';
const ADMIN_API_KEY = 'dashboard-test-admin-key-0123456789abcdef';

function chromiumPath(): string {
  return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim();
}

async function post(url: string, route: string, body: unknown, headers: Record<string, string> = {}) {
  const answer = await call<Record<string, unknown>>(url, 'POST', route, body, headers);
  if (answer.status >= 300) throw new Error(`${route}: ${answer.status} ${answer.text}`);
  return answer.body;
}

const usage = (sessionId: string, event: object) => ({ session_id: sessionId, user_id: USER, ...event });

async function texts(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].map((cell) => (cell.textContent ?? '').trim())),
  );
}

describe('the dashboard in a browser', () => {
  let app: CallmeterProcess;
  let browser: Browser;
  let active: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    app = await startCallmeter({ DATA_DIR: isolate('dashboard').dataDir, LOG_LEVEL: 'warn' });
    const ended = (
      await post(app.url, '/api/sessions/', { room_name: 'room-ended', user_id: USER, agent_id: 'agent-a' })
    ).id as string;
    active = (await post(app.url, '/api/sessions/', { room_name: 'room-live', user_id: USER, agent_id: 'agent-b' }))
      .id as string;
    await post(app.url, '/api/usage/events/batch', [
      usage(ended, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 3 }),
      usage(ended, {
        provider: 'google',
        event_type: 'llm_tokens',
        usage_data: { input_tokens: 900, output_tokens: 300 },
      }),
      usage(active, { provider: 'resemble', event_type: 'tts_characters', quantity: 250 }),
      usage(active, { provider: 'nobody-prices-this', event_type: 'tts_characters', quantity: 5 }),
    ]);
    await call(app.url, 'PATCH', `/api/sessions/${ended}`, { status: 'COMPLETED' });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  });

  it('shows exactly what the API answers, live, with no console error, at 1280 and 375 px', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${app.url}/dashboard?user_id=${USER}&tz=UTC&period=daily`);
    const api = async <T>(route: string) =>
      (await call<T>(app.url, 'GET', route, undefined, { 'x-user-id': USER })).body;
    const summary = await api<Record<string, string | number>>('/api/costs/summary?tz=UTC');
    const tile = (id: string) => page.locator(`[data-testid="${id}"]`);
    await expect.poll(() => tile('tile-total').textContent(), { timeout: 15_000 }).toBe(`$${summary.total_cost}`);
    expect(await tile('tile-month').textContent()).toBe(`$${summary.this_month_cost}`);
    expect(await tile('tile-unpriced').textContent()).toBe(String(summary.unpriced_event_count));
    await expect.poll(() => tile('tile-live').textContent()).toBe(`$${summary.live_cost}`);

    const timeline = await api<{ date: string; total_cost: string; event_count: number }[]>(
      '/api/costs/timeline?tz=UTC&period=daily',
    );
    await expect.poll(() => page.getAttribute('[data-testid="chart"]', 'data-points')).toBe(String(timeline.length));
    expect(await page.locator('[data-testid="chart"] canvas').count()).toBe(1);
    expect(await texts(page, '[data-testid="timeline-table"]')).toEqual(
      timeline.map((p) => [p.date, `$${p.total_cost}`, String(p.event_count)]),
    );
    const agents =
      await api<{ agent_name: string; total_cost: string; session_count: number; event_count: number }[]>(
        '/api/costs/by-agent?tz=UTC',
      );
    expect(agents.length).toBe(2);
    expect(await texts(page, '[data-testid="agents-table"]')).toEqual(
      agents.map((a) => [a.agent_name, `$${a.total_cost}`, String(a.session_count), String(a.event_count)]),
    );
    const unpriced = await api<{ provider: string; event_count: number }[]>('/api/costs/unpriced');
    expect((await texts(page, '[data-testid="unpriced-table"]')).map((row) => row[0])).toEqual(
      unpriced.map((u) => u.provider),
    );

    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-readme.png') });

    // The session list, newest first, with each call's cost; the live call's drill-down.
    const sessions = (
      await api<{
        sessions: {
          id: string;
          room_name: string;
          status: string;
          started_at: string | null;
          duration: number | null;
        }[];
      }>('/api/sessions/?limit=20')
    ).sessions;
    const sessionRows = await Promise.all(
      sessions.map(async (s) => {
        const card = await api<{ total_cost_exact: string; budget: null }>(`/api/sessions/${s.id}/costs`);
        expect(card.budget).toBeNull();
        return [s.room_name, s.status, s.started_at ?? '', String(s.duration ?? ''), `$${card.total_cost_exact}`, ''];
      }),
    );
    await expect.poll(() => texts(page, '[data-testid="sessions-table"]')).toEqual(sessionRows);
    const rates = await api<
      { provider: string; model: string | null; price: string; currency: string; scope: string }[]
    >(`/api/rates?user_id=${USER}`);
    expect((await texts(page, '[data-testid="rates-table"]')).map((row) => [row[0], row[1], row[3], row[4]])).toEqual(
      rates.slice(0, 100).map((r) => [r.provider, r.model ?? '', `${r.price} ${r.currency}`, r.scope]),
    );
    await page.getByRole('button', { name: 'room-live' }).click();
    const breakdown = await api<{ total_cost: string; items: { provider: string; service: string; cost: string }[] }>(
      `/api/sessions/${active}/cost-breakdown`,
    );
    await expect.poll(() => tile('breakdown-total').textContent()).toBe(`$${breakdown.total_cost}`);
    expect((await texts(page, '[data-testid="breakdown-table"]')).map((row) => [row[0], row[1], row[3]])).toEqual(
      breakdown.items.map((i) => [i.provider, i.service, `$${i.cost}`]),
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-1280.png'), fullPage: true });

    // Usage posted now shows in the live tile and the open drill-down, through the streams.
    const posted = performance.now();
    await post(
      app.url,
      '/api/usage/events',
      usage(active, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 10 }),
    );
    const after = await api<Record<string, string>>('/api/costs/summary?tz=UTC');
    await expect.poll(() => tile('tile-live').textContent(), { timeout: 5_000 }).toBe(`$${after.live_cost}`);
    const newBreakdown = await api<{ total_cost: string }>(`/api/sessions/${active}/cost-breakdown`);
    await expect
      .poll(() => tile('breakdown-total').textContent(), { timeout: 5_000 })
      .toBe(`$${newBreakdown.total_cost}`);
    process.stdout.write(`dashboard: posted usage shown live after ${Math.round(performance.now() - posted)} ms\n`);

    // Keyboard: the identity form, then the dashboard's controls, are reachable with Tab.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toMatch(/INPUT|BUTTON|SELECT|A|DIV/);

    await page.setViewportSize({ width: 375, height: 800 });
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-375.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows the tenant’s budgets with their exact spend, burn-down and projected exhaustion, and marks the call over its cap', async () => {
    const tenant = 'dash-budgets';
    const headers = { 'x-user-id': tenant };
    const api = async <T>(route: string) => (await call<T>(app.url, 'GET', route, undefined, headers)).body;
    const open = async (room: string) =>
      (await post(app.url, '/api/sessions/', { room_name: room, user_id: tenant, agent_id: 'agent-c' })).id as string;
    const [over, under] = [await open('room-over-cap'), await open('room-under-cap')];
    // deepgram's speech to text is 0.0077 a minute: 10 minutes and 1, so 0.0847 for the tenant.
    const minutes = (session: string, quantity: number) => ({
      session_id: session,
      user_id: tenant,
      provider: 'deepgram',
      event_type: 'stt_minutes',
      quantity,
    });
    await post(app.url, '/api/usage/events/batch', [minutes(over, 10), minutes(under, 1)]);
    const budget = (body: object) => post(app.url, '/api/budgets', { user_id: tenant, ...body });
    // Spent is 0.0847 of 0.08470001: on course to run out within the month, whenever the test runs
    // (but in its last third of a second); a float subtraction would show 1.0000000000287557e-8.
    await budget({ name: 'month spend', amount: '0.08470001', period: 'month' });
    await budget({ name: 'quiet agent', agent_id: 'agent-quiet', amount: '5', period: 'day' });
    await budget({ name: 'deepgram week', amount: '0.05', period: 'week', filter: { provider: 'deepgram' } });
    await budget({ name: 'call cap', amount: '0.05', per_call: true });

    type Budget = { name: string; spent: string | null; remaining: string | null; period_start: string | null };
    type Bounds = Budget & { period: string; period_end: string | null; projected_exhaustion_at: string | null };
    const listed = await api<Bounds[]>(`/api/budgets?user_id=${tenant}`);
    expect(listed.map((b) => [b.name, b.spent, b.remaining])).toEqual([
      ['month spend', '0.0847', '0.00000001'],
      ['quiet agent', '0', '5'],
      ['deepgram week', '0.0847', '0'],
      ['call cap', null, null],
    ]);
    expect((await api<{ allowed: boolean }>(`/api/sessions/${over}/budget`)).allowed).toBe(false);
    expect((await api<{ allowed: boolean }>(`/api/sessions/${under}/budget`)).allowed).toBe(true);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const before = Date.now();
    await page.goto(`${app.url}/dashboard?user_id=${tenant}&tz=UTC`);
    const periodOf = (b: Bounds) =>
      `${b.period} in UTC: ${b.period_start?.slice(0, 10)} until ${b.period_end?.slice(0, 10)}`;
    // The burn-down in words, with the share of the period gone (measured below for the month) as `N`.
    const gone = '% spent, N% of the period gone';
    const expected = [
      ['month spend', 'tenant', periodOf(listed[0]!), '$0.08470001', '$0.0847', '$0.00000001', `99.9${gone}`],
      ['quiet agent', 'agent agent-quiet', periodOf(listed[1]!), '$5', '$0', '$5', `0${gone}`, 'not on course'],
      [
        'deepgram week',
        'tenant, provider deepgram only',
        periodOf(listed[2]!),
        '$0.05',
        '$0.0847',
        '$0',
        `100${gone}`,
        'reached',
      ],
      ['call cap', 'per call (tenant)', 'each call', '$0.05', '', '', 'cap $0.05 per call', ''],
    ];
    const rows = () => texts(page, '[data-testid="budgets-table"]');
    await expect
      .poll(async () => (await rows()).map((row) => row.slice(0, 6)), { timeout: 15_000 })
      .toEqual(expected.map((row) => row.slice(0, 6)));
    const shown = await rows();
    expect(shown.map((row) => row[6]!.replace(/[0-9.]+% of the period/, 'N% of the period'))).toEqual(
      expected.map((row) => row[6]),
    );
    expect(shown.slice(1).map((row) => row[7])).toEqual(['not on course', 'reached', '']);

    // The month's burn-down and projected exhaustion, measured in the page between `before` and now.
    const bars = page.locator('[data-testid="burn-down"]');
    expect(await bars.count()).toBe(3);
    const month = bars.first();
    expect([await month.getAttribute('data-spent'), await bars.nth(2).getAttribute('data-spent')]).toEqual([
      '99.9',
      '100',
    ]);
    const elapsed = Number(await month.getAttribute('data-elapsed'));
    const projected = await page.locator('[data-testid="budgets-table"] time').getAttribute('datetime');
    const after = Date.now();
    const start = Date.parse(listed[0]!.period_start!);
    const share = (at: number) => Math.floor(((at - start) / (Date.parse(listed[0]!.period_end!) - start)) * 1000) / 10;
    expect(elapsed).toBeGreaterThanOrEqual(share(before));
    expect(elapsed).toBeLessThanOrEqual(share(after));
    const projectedAt = (at: number) => start + ((at - start) * 0.08470001) / 0.0847;
    expect(Date.parse(projected!)).toBeGreaterThanOrEqual(Math.floor(projectedAt(before)));
    expect(Date.parse(projected!)).toBeLessThanOrEqual(Math.ceil(projectedAt(after)) + 1);
    expect(shown[0]![7]).toBe(`${projected!.slice(0, 10)} ${projected!.slice(11, 16)} UTC`);

    // The calls: the one over its cap is marked, the one under it is not.
    const callRow = (room: string) => page.locator('[data-testid="sessions-table"] tr', { hasText: room });
    await expect.poll(() => callRow('room-over-cap').locator('[data-testid="over-cap"]').count()).toBe(1);
    expect((await callRow('room-over-cap').locator('td').last().textContent())?.trim()).toBe(
      'over cap $0.077 of $0.05',
    );
    expect(await callRow('room-under-cap').locator('[data-testid="over-cap"]').count()).toBe(0);
    expect((await callRow('room-under-cap').locator('td').last().textContent())?.trim()).toBe('$0.0077 of $0.05');
    await page.locator('[data-testid="budgets"]').screenshot({ path: path.join(ARTIFACTS, 'dashboard-budgets.png') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('with AUTH_MODE=on reads with a bearer token, and shows only that tenant', async () => {
    const secured = await startCallmeter({
      DATA_DIR: isolate('dashboard-auth').dataDir,
      LOG_LEVEL: 'warn',
      AUTH_MODE: 'on',
      ADMIN_API_KEY,
    });
    try {
      const admin = { authorization: `Bearer ${ADMIN_API_KEY}` };
      const mine = (await post(secured.url, '/api/sessions/', { room_name: 'r1', user_id: 'tenant-a' }, admin))
        .id as string;
      const theirs = (await post(secured.url, '/api/sessions/', { room_name: 'r2', user_id: 'tenant-b' }, admin))
        .id as string;
      await post(
        secured.url,
        '/api/usage/events/batch',
        [
          { session_id: mine, user_id: 'tenant-a', provider: 'deepgram', event_type: 'stt_minutes', quantity: 1 },
          { session_id: theirs, user_id: 'tenant-b', provider: 'deepgram', event_type: 'stt_minutes', quantity: 7 },
        ],
        admin,
      );
      const key = (await post(secured.url, '/api/admin/keys', { scope: 'read', user_id: 'tenant-a' }, admin))
        .key as string;
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`${secured.url}/dashboard`);
      await page.getByLabel('Bearer token (user token or read key)').fill(key);
      await page.getByRole('button', { name: 'Show costs' }).click();
      const summary = await call<{ total_cost: string }>(secured.url, 'GET', '/api/costs/summary', undefined, {
        authorization: `Bearer ${key}`,
      });
      expect(summary.body.total_cost).toBe('0.0077');
      await expect
        .poll(() => page.locator('[data-testid="tile-total"]').textContent(), { timeout: 15_000 })
        .toBe('$0.0077');
      // Budgets are an admin route: a read key is told so, once.
      await expect.poll(() => page.locator('[data-testid="budgets-forbidden"]').count()).toBe(1);
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      await secured.stop();
    }
  }, 180_000);
});
