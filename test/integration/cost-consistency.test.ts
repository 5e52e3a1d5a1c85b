import { Exact } from '../../services/shared/exact-decimal.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addDays,
  formatLocalDate,
  localDate,
  startOfLocalDay,
  startOfMonth,
} from '../../services/shared/zoned-time.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import {
  makeEvents,
  makeSessions,
  prng,
  sumOf,
  writeRateCardWithChange,
  type GeneratedEvent,
} from '../support/cost-fixtures.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';

const USER = 'tenant-consistency';
const OTHER = 'tenant-other';
const EVENTS = 700;
const RESENT = 120;
const DAYS = 75;
const ZONES = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/New_York'] as const;
const PERIODS = ['daily', 'weekly', 'monthly'] as const;

interface Point {
  date: string;
  total_cost: string;
  by_provider: Record<string, string>;
}
interface Agent {
  agent_id: string;
  agent_name: string;
  total_cost: string;
  session_count: number;
  event_count: number;
}

interface Running {
  readonly ingest: CallmeterProcess;
  query: CallmeterProcess;
  /** Kills the process that stores usage (kill -9, mid-stream) and starts it again: its batches are replayed. */
  readonly crashConsumer: (() => Promise<void>) | null;
  readonly stop: () => Promise<unknown>;
}

/** Two ways to run callmeter: one embedded process, or ingest and consumer+query apart over real Kafka and Redis. */
const MODES = [
  {
    name: 'the embedded process',
    start: async (env: Record<string, string>, dataDir: string): Promise<Running> => {
      const app = await startCallmeter({ ...env, DATA_DIR: dataDir });
      return { ingest: app, query: app, crashConsumer: null, stop: () => app.stop() };
    },
  },
  {
    name: 'ingest and consumer apart over real Kafka and Redis, the consumer killed mid-stream',
    start: async (env: Record<string, string>, dataDir: string): Promise<Running> => {
      const isolation = isolate('consistency-kafka');
      const consumerEnv = serviceEnv(isolation, {
        ...env,
        SERVICES: 'consumer,query',
        DATA_DIR: `${dataDir}/consumer`,
      });
      const ingest = await startCallmeter(
        serviceEnv(isolation, { ...env, SERVICES: 'ingest', DATA_DIR: `${dataDir}/ingest` }),
      );
      const running: Running = {
        ingest,
        query: await startCallmeter(consumerEnv),
        crashConsumer: async () => {
          await running.query.stop('SIGKILL');
          running.query = await startCallmeter(consumerEnv);
        },
        stop: async () => void (await Promise.allSettled([ingest.stop(), running.query.stop()])),
      };
      return running;
    },
  },
] as const;

describe.each(MODES)('cost views agree to the last decimal on $name', (mode) => {
  let processes: Running;
  const nowMs = Date.now();
  const sessions = makeSessions(USER, OTHER);
  const events = makeEvents(prng(20261122), EVENTS, sessions, nowMs, DAYS);
  const mine = events.filter((event) => sessions[event.sessionIndex]!.user_id === USER);
  let sessionIds: string[] = [];
  const get = async <T>(path: string) => {
    const answer = await call<T>(processes.query.url, 'GET', path, undefined, { 'x-user-id': USER });
    expect(answer.status, answer.text).toBe(200);
    return answer.body;
  };

  beforeAll(async () => {
    const dir = isolate('consistency').dataDir;
    // The usage spans 75 days, past the default window of 35: the window is configuration.
    processes = await mode.start(
      { RATE_CARD_PATH: writeRateCardWithChange(dir), LOG_LEVEL: 'warn', USAGE_MAX_AGE_DAYS: String(DAYS + 1) },
      dir,
    );
    const url = processes.ingest.url;
    sessionIds = [];
    for (const session of sessions) {
      const created = await call<{ id: string }>(url, 'POST', '/api/sessions/', {
        room_name: session.room_name,
        user_id: session.user_id,
        agent_id: session.agent_id,
      });
      expect(created.status).toBe(201);
      if (session.agent_name !== null)
        await call(url, 'PATCH', `/api/sessions/${created.body.id}`, { agent_name: session.agent_name });
      sessionIds.push(created.body.id);
    }
    const bodies = events.map((event) => ({ ...event.body, session_id: sessionIds[event.sessionIndex] }));
    // Every event once, then some again in later batches: client retries are counted once.
    for (const [n, batch] of [...chunks(bodies, 100), ...chunks(bodies.slice(0, RESENT), 60)].entries()) {
      const answer = await call<{ status: string }[]>(url, 'POST', '/api/usage/events/batch', batch);
      expect(answer.status).toBe(200);
      expect(answer.body.filter((item) => item.status === 'rejected')).toEqual([]);
      if (n === 4) await processes.crashConsumer?.();
    }
    // End most calls; two stay live.
    for (const id of sessionIds.slice(2)) await call(url, 'PATCH', `/api/sessions/${id}`, { status: 'COMPLETED' });
    await eventually(
      async () => expect((await get<{ event_count: number }>('/api/costs/summary')).event_count).toBe(mine.length),
      60_000,
      250,
    );
  }, 180_000);

  afterAll(async () => {
    await processes?.stop();
  });

  it('sums every view to the hand-computed total, and lists the right counts', async () => {
    const total = sumOf(mine).toFixed();
    const summary = await get<{
      total_cost: string;
      by_provider: Record<string, string>;
      session_count: number;
      event_count: number;
      live_cost: string;
    }>('/api/costs/summary');
    expect(summary.total_cost).toBe(total);
    expect(summary.by_provider).toEqual(byProvider(mine));
    expect(summary.session_count).toBe(new Set(mine.map((event) => event.sessionIndex)).size);
    expect(summary.live_cost).toBe(sumOf(mine.filter((event) => event.sessionIndex < 2)).toFixed());
    for (const period of PERIODS)
      expect(sum((await get<Point[]>(`/api/costs/timeline?period=${period}`)).map((p) => p.total_cost))).toBe(total);
    const agents = await get<Agent[]>('/api/costs/by-agent?limit=1000');
    expect(
      sum([
        ...agents.map((a) => a.total_cost),
        sumOf(mine.filter((e) => sessions[e.sessionIndex]!.agent_id === null)).toFixed(),
      ]),
    ).toBe(total);
    const breakdowns = await Promise.all(
      sessionIds
        .slice(0, -1)
        .map((id) => get<{ total_cost: string; events: unknown[] }>(`/api/sessions/${id}/cost-breakdown`)),
    );
    expect(sum(breakdowns.map((b) => b.total_cost))).toBe(total);
    expect(breakdowns.reduce((n, b) => n + b.events.length, 0)).toBe(mine.length);
  });

  it('cuts timelines exactly in every zone and period, zeros included, the end day included', async () => {
    for (const tz of ZONES) {
      const today = localDate(nowMs, tz);
      const start = addDays(today, -40);
      const end = addDays(today, -3);
      const from = startOfLocalDay(start, tz);
      const until = startOfLocalDay(addDays(end, 1), tz);
      const inRange = mine.filter((event) => event.at >= from && event.at < until);
      for (const period of PERIODS) {
        const points = await get<Point[]>(
          `/api/costs/timeline?period=${period}&start_date=${formatLocalDate(start)}&end_date=${formatLocalDate(end)}&tz=${tz}`,
        );
        expect(sum(points.map((p) => p.total_cost)), `${tz} ${period}`).toBe(sumOf(inRange).toFixed());
        if (period === 'daily') {
          expect(points).toHaveLength(38);
          expect(points.map((p) => p.date)).toEqual(
            Array.from({ length: 38 }, (_, i) => formatLocalDate(addDays(start, i))),
          );
          for (const point of points) {
            const dayFrom = startOfLocalDay(localDateOf(point.date), tz);
            const dayUntil = startOfLocalDay(addDays(localDateOf(point.date), 1), tz);
            expect(point.total_cost, `${tz} ${point.date}`).toBe(
              sumOf(inRange.filter((e) => e.at >= dayFrom && e.at < dayUntil)).toFixed(),
            );
          }
        }
      }
      const summary = await get<{ this_month_cost: string }>(`/api/costs/summary?tz=${tz}`);
      const monthFrom = startOfLocalDay(startOfMonth(today), tz);
      expect(summary.this_month_cost, tz).toBe(sumOf(mine.filter((event) => event.at >= monthFrom)).toFixed());
    }
  });

  it('agrees between timeline, by-agent and the events over a range with unaligned instants', async () => {
    const from = nowMs - 30 * 86_400_000 + 7 * 60_000 + 13_000;
    const until = nowMs - 9 * 86_400_000 - 4 * 60_000 - 1_000;
    const query = `start_date=${new Date(from).toISOString()}&end_date=${new Date(until).toISOString()}`;
    const inRange = mine.filter((event) => event.at >= from && event.at <= until);
    const expected = sumOf(inRange).toFixed();
    expect(
      sum(
        (await get<Point[]>(`/api/costs/timeline?period=weekly&${query}&tz=Asia/Kathmandu`)).map((p) => p.total_cost),
      ),
    ).toBe(expected);
    // In UTC the whole days come from the daily rollup and the partial first and last days from the quarter hours and events.
    const utcDays = await get<Point[]>(`/api/costs/timeline?period=daily&${query}`);
    expect(sum(utcDays.map((p) => p.total_cost))).toBe(expected);
    for (const point of utcDays) {
      const dayFrom = Date.parse(`${point.date}T00:00:00Z`);
      expect(point.total_cost, point.date).toBe(
        sumOf(inRange.filter((e) => e.at >= dayFrom && e.at < dayFrom + 86_400_000)).toFixed(),
      );
    }
    const agents = await get<Agent[]>(`/api/costs/by-agent?${query}`);
    const withoutAgent = sumOf(inRange.filter((e) => sessions[e.sessionIndex]!.agent_id === null));
    expect(sum([...agents.map((a) => a.total_cost), withoutAgent.toFixed()])).toBe(expected);
    for (const agent of agents) {
      const own = inRange.filter((e) => sessions[e.sessionIndex]!.agent_id === agent.agent_id);
      expect(agent).toMatchObject({
        total_cost: sumOf(own).toFixed(),
        event_count: own.length,
        session_count: new Set(own.map((e) => e.sessionIndex)).size,
      });
    }
  });

  it('orders agents by cost, names them from their sessions, and never shows another user’s usage', async () => {
    const agents = await get<Agent[]>('/api/costs/by-agent');
    const costs = agents.map((a) => new Exact(a.total_cost));
    expect(costs).toEqual([...costs].sort((a, b) => b.comparedTo(a)));
    expect(Object.fromEntries(agents.map((a) => [a.agent_id, a.agent_name]))).toEqual({
      'agent-a': 'Front desk',
      'agent-b': 'Billing, "West"',
      'agent-c': 'Unknown',
      'agent-d': 'Unknown',
    });
    expect((await get<Agent[]>('/api/costs/by-agent?limit=2')).map((a) => a.agent_id)).toEqual(
      agents.slice(0, 2).map((a) => a.agent_id),
    );
    const other = await call<{ total_cost: string }>(processes.query.url, 'GET', '/api/costs/summary', undefined, {
      'x-user-id': OTHER,
    });
    expect(other.body.total_cost).toBe(
      sumOf(events.filter((e) => sessions[e.sessionIndex]!.user_id === OTHER)).toFixed(),
    );
  });

  it('breaks one call down by type and by provider and service, live while it is ACTIVE', async () => {
    const own = mine.filter((event) => event.sessionIndex === 0);
    const breakdown = await get<{
      total_cost: string;
      live: boolean;
      cost_by_type: Record<string, string>;
      items: { provider: string; service: string; cost: string }[];
      events: { id: string; occurred_at: string }[];
    }>(`/api/sessions/${sessionIds[0]}/cost-breakdown`);
    expect(breakdown.live).toBe(true);
    expect(breakdown.total_cost).toBe(sumOf(own).toFixed());
    expect(sum(Object.values(breakdown.cost_by_type))).toBe(sumOf(own).toFixed());
    expect(sum(breakdown.items.map((item) => item.cost))).toBe(sumOf(own).toFixed());
    expect(breakdown.events.map((e) => e.id).sort()).toEqual(own.map((e) => e.body.event_id as string).sort());
    const times = breakdown.events.map((e) => e.occurred_at);
    expect(times).toEqual([...times].sort());
    const ended = await get<{ live: boolean }>(`/api/sessions/${sessionIds[5]}/cost-breakdown`);
    expect(ended.live).toBe(false);
  });
});

function byProvider(events: readonly GeneratedEvent[]): Record<string, string> {
  const totals = new Map<string, Exact>();
  for (const event of events) {
    const provider = String(event.body.provider).toLowerCase();
    totals.set(provider, (totals.get(provider) ?? new Exact(0)).plus(event.cost));
  }
  return Object.fromEntries(
    [...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([provider, cost]) => [provider, cost.toFixed()]),
  );
}

function sum(values: readonly string[]): string {
  return values.reduce((total, value) => total.plus(value), new Exact(0)).toFixed();
}

function localDateOf(date: string) {
  const [year, month, day] = date.split('-').map(Number);
  return { year: year!, month: month!, day: day! };
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}
