import { describe, expect, it } from 'vitest';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/logger.ts';
import { autoClosePass } from './auto-close.ts';

/**
 * A ClickHouse answering the tenants' time zones, the tenants with usage per month (UTC tenants from
 * the days, the others from the quarter hours), and the closed months.
 */
function reads(
  usage: { user_id: string; period: string }[],
  closed: { user_id: string; period: string }[],
  zones: { user_id: string; time_zone: string }[] = [],
) {
  const asked: Record<string, unknown>[] = [];
  const zoned = new Set(zones.map((zone) => zone.user_id));
  const client = {
    query: async ({ query, query_params }: { query: string; query_params: Record<string, unknown> }) => {
      asked.push(query_params);
      const rows = query.includes('tenant_settings')
        ? zones.map((zone) => ({ ...zone, updated_ms: '1' }))
        : query.includes('usage_totals')
          ? usage.filter((row) => {
              const named = (query_params.users as string[]).includes(row.user_id);
              return (
                (query_params.periods as string[]).includes(row.period) &&
                (query.includes('NOT IN') ? !named : named) &&
                query.includes('usage_totals_15m') === zoned.has(row.user_id)
              );
            })
          : closed.map((row) => ({ ...row, version: 1, closed_ms: '0', reopened_ms: null }));
      return { json: async () => rows };
    },
  };
  return { ch: { client, database: 'db', cluster: null, embedded: true } as unknown as ClickHouse, asked };
}

describe('closing months automatically', () => {
  const log = createLogger('silent');
  const now = () => Date.parse('2026-11-06T12:00:00Z');

  it('closes, for each tenant with usage, the months that ended the given days ago and are not closed', async () => {
    const { ch, asked } = reads(
      [
        { user_id: 'a', period: '2026-10' },
        { user_id: 'b', period: '2026-10' },
        { user_id: 'b', period: '2026-09' },
      ],
      [{ user_id: 'b', period: '2026-09' }],
    );
    const closes: string[] = [];
    const periods = {
      close: async (user: string, period: string) => {
        closes.push(`${user} ${period}`);
        if (user === 'b') throw AppError.of('CONFLICT', 'closed meanwhile by another process');
        return { user_id: user, period, status: 'closed' as const, closed_at: '', version: 1, reopened_at: null };
      },
    };
    expect(await autoClosePass({ days: 5, reads: ch, periods, log, now })).toBe(1);
    expect(closes).toEqual(['a 2026-10', 'b 2026-10']);
    expect((asked[1]!.periods as string[]).slice(0, 2)).toEqual(['2026-10', '2026-09']);
  });

  it('counts the days from the end of the month in each tenant’s time zone', async () => {
    const { ch, asked } = reads(
      [
        { user_id: 'utc', period: '2026-10' },
        { user_id: 'kiritimati', period: '2026-10' },
        { user_id: 'honolulu', period: '2026-10' },
      ],
      [],
      [
        { user_id: 'kiritimati', time_zone: 'Pacific/Kiritimati' },
        { user_id: 'honolulu', time_zone: 'Pacific/Honolulu' },
      ],
    );
    const closes: string[] = [];
    const periods = {
      close: async (user: string, period: string) => {
        closes.push(`${user} ${period}`);
        return { user_id: user, period, status: 'closed' as const, closed_at: '', version: 1, reopened_at: null };
      },
    };
    // October ended at 2026-10-31T10:00Z at +14:00, at 2026-11-01T00:00Z in UTC, at 2026-11-01T10:00Z at -10:00.
    const at = () => Date.parse('2026-11-06T09:00:00Z');
    expect(await autoClosePass({ days: 5, reads: ch, periods, log, now: at })).toBe(2);
    expect(closes.sort()).toEqual(['kiritimati 2026-10', 'utc 2026-10']);
    const only = (user: string) => asked.find((params) => (params.users as string[] | undefined)?.join() === user)!;
    const kiritimati = only('kiritimati');
    expect(kiritimati.periods).toEqual(expect.arrayContaining(['2026-10']));
    expect((kiritimati.starts as number[])[0]).toBe(Date.parse('2026-09-30T10:00:00Z'));
    const honolulu = only('honolulu');
    expect((honolulu.periods as string[])[0]).toBe('2026-09');
  });

  it('closes nothing before the days have passed, and lets any other failure through', async () => {
    const { ch } = reads([{ user_id: 'a', period: '2026-10' }], []);
    const refused = { close: async () => Promise.reject(new Error('journal full')) };
    const early = await autoClosePass({ days: 6, reads: ch, periods: refused, log, now });
    // 2026-10 ended 5.5 days before: with 6 days it is not due, but earlier months are (none has usage).
    expect(early).toBe(0);
    await expect(autoClosePass({ days: 5, reads: ch, periods: refused, log, now })).rejects.toThrow('journal full');
  });
});
