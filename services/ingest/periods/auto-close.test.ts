import { describe, expect, it } from 'vitest';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/logger.ts';
import { autoClosePass } from './auto-close.ts';

/** A ClickHouse answering the tenants with usage per month, and the closed months. */
function reads(usage: { user_id: string; period: string }[], closed: { user_id: string; period: string }[]) {
  const asked: Record<string, unknown>[] = [];
  const client = {
    query: async ({ query, query_params }: { query: string; query_params: Record<string, unknown> }) => {
      asked.push(query_params);
      const due = query_params.due as string[] | undefined;
      const rows = query.includes('usage_totals_daily')
        ? usage.filter((row) => due!.includes(row.period))
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
    expect((asked[0]!.due as string[]).slice(0, 2)).toEqual(['2026-10', '2026-09']);
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
