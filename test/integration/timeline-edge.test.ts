import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costSummary } from '../../services/query/cost-summary.ts';
import { costTimeline } from '../../services/query/cost-timeline.ts';
import type { InstantRange } from '../../services/query/routes/date-bounds.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { isolate, testConfig } from '../support/harness.ts';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/**
 * Ingest takes usage stamped up to 5 minutes ahead of the clock, so in the last minutes of a day the
 * next day may already hold usage: the default timeline must show it, or its points do not add up to the
 * summary until the date turns.
 */
describe('the default timeline at the end of a day', () => {
  const yesterday = Date.now() - (Date.now() % DAY_MS) - DAY_MS;
  const beforeMidnight = yesterday + DAY_MS - 2 * MINUTE_MS;
  const AHEAD = 'tenant-ahead';
  const BEHIND = 'tenant-behind';
  const FIRST_AHEAD = 'tenant-first-ahead';
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolate('timeline-edge')));
    await migrate(ch, createLogger('silent'));
    const event = (user: string, atMs: number, cost: string) => ({
      id: randomUUID(),
      user_id: user,
      agent_id: 'agent-1',
      session_id: randomUUID(),
      provider: 'deepgram',
      service: 'stt',
      event_type: 'stt_minutes',
      quantity: '1',
      unit: 'minute',
      unit_cost: cost,
      cost,
      reported_total_cost: null,
      cost_source: 'computed',
      occurred_at: atMs,
      received_at: beforeMidnight,
    });
    await ch.client.insert({
      table: `${ch.database}.usage_events`,
      values: [
        event(AHEAD, yesterday + 10 * 60 * MINUTE_MS, '1.5'),
        // Sent at 23:58 stamped 00:02: four minutes ahead, inside the tolerance.
        event(AHEAD, beforeMidnight + 4 * MINUTE_MS, '0.25'),
        event(BEHIND, yesterday + 10 * 60 * MINUTE_MS, '2'),
        // Only usage stamped in the next day, read at noon: a writer's clock ahead of the reader's.
        event(FIRST_AHEAD, yesterday + DAY_MS + 2 * MINUTE_MS, '3'),
      ],
      format: 'JSONEachRow',
    });
  }, 120_000);

  afterAll(async () => {
    await ch?.client.close();
  });

  const points = async (user: string, range: InstantRange = { start: null, end: null }) =>
    (await costTimeline(ch, user, range, 'daily', 'UTC', beforeMidnight)).map((point) => [
      point.date,
      point.total_cost,
    ]);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

  it('ends with the next day once it holds usage, so that its points add up to the summary', async () => {
    expect(await points(AHEAD)).toEqual([
      [day(yesterday), '1.5'],
      [day(yesterday + DAY_MS), '0.25'],
    ]);
    const summary = await costSummary(ch, AHEAD, 'UTC', beforeMidnight);
    expect(summary.total_cost).toBe('1.75');
    const timeline = await costTimeline(ch, AHEAD, { start: null, end: null }, 'daily', 'UTC', beforeMidnight);
    expect(Exact.sum(0, ...timeline.map((point) => point.total_cost)).toFixed()).toBe(summary.total_cost);
  });

  it('cuts "all time" to the same buckets', async () => {
    const allTime = { start: Date.UTC(2020, 0, 1), end: Date.UTC(2100, 0, 1) };
    expect(await points(AHEAD, allTime)).toEqual([
      [day(yesterday), '1.5'],
      [day(yesterday + DAY_MS), '0.25'],
    ]);
  });

  it('still ends with the current day when the next one holds nothing', async () => {
    expect(await points(BEHIND)).toEqual([[day(yesterday), '2']]);
  });

  it('shows usage whose first instant lies past the current bucket, when a writer clock is ahead', async () => {
    const noon = yesterday + 12 * 60 * MINUTE_MS;
    const timeline = await costTimeline(ch, FIRST_AHEAD, { start: null, end: null }, 'daily', 'UTC', noon);
    expect(timeline.map((point) => [point.date, point.total_cost])).toEqual([[day(yesterday + DAY_MS), '3']]);
  });
});
