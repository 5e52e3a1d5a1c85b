import { describe, expect, it } from 'vitest';
import { MAX_BUCKETS, timelineBuckets } from './timeline-buckets.ts';

const at = (text: string) => Date.parse(text);

describe('timeline buckets', () => {
  it('lists every day of a range, the partial first and last ones included', () => {
    const buckets = timelineBuckets(at('2026-11-20T10:00:00Z'), at('2026-11-22T00:00:01Z'), 'daily', 'UTC')!;
    expect(buckets.map((b) => b.date)).toEqual(['2026-11-20', '2026-11-21', '2026-11-22']);
    expect(new Date(buckets[0]!.start).toISOString()).toBe('2026-11-20T00:00:00.000Z');
  });

  it('starts weeks on Monday and months on the 1st, in the zone', () => {
    expect(
      timelineBuckets(at('2026-11-22T00:00:00Z'), at('2026-12-01T00:00:00Z'), 'weekly', 'UTC')!.map((b) => b.date),
    ).toEqual(['2026-11-16', '2026-11-23', '2026-11-30']);
    const months = timelineBuckets(
      at('2026-10-31T18:20:00Z'),
      at('2027-01-01T00:00:00Z'),
      'monthly',
      'Asia/Kathmandu',
    )!;
    expect(months.map((b) => b.date)).toEqual(['2026-11-01', '2026-12-01', '2027-01-01']);
    expect(new Date(months[0]!.start).toISOString()).toBe('2026-10-31T18:15:00.000Z');
  });

  it('cuts days of 23 and 25 hours where DST changes', () => {
    const [spring] = timelineBuckets(
      at('2026-03-08T12:00:00Z'),
      at('2026-03-08T13:00:00Z'),
      'daily',
      'America/New_York',
    )!;
    expect(spring!.end - spring!.start).toBe(23 * 3_600_000);
    const [autumn] = timelineBuckets(
      at('2026-11-01T12:00:00Z'),
      at('2026-11-01T13:00:00Z'),
      'daily',
      'America/New_York',
    )!;
    expect(autumn!.end - autumn!.start).toBe(25 * 3_600_000);
  });

  it('refuses more than MAX_BUCKETS buckets', () => {
    expect(timelineBuckets(0, (MAX_BUCKETS + 1) * 86_400_000, 'daily', 'UTC')).toBeNull();
    expect(timelineBuckets(0, MAX_BUCKETS * 86_400_000, 'daily', 'UTC')).toHaveLength(MAX_BUCKETS);
  });

  it('buckets an instant of the first century in its own year, so that an as_of there has a current bucket', () => {
    const instant = Date.parse('0046-07-12T10:00:00.000Z');
    for (const period of ['daily', 'weekly', 'monthly'] as const) {
      const buckets = timelineBuckets(instant, instant + 1, period, 'UTC');
      expect(buckets).toHaveLength(1);
      expect(buckets![0]!.start).toBeLessThanOrEqual(instant);
      expect(buckets![0]!.end).toBeGreaterThan(instant);
    }
    expect(timelineBuckets(instant, instant + 1, 'monthly', 'UTC')![0]!.date).toBe('0046-07-01');
  });
});
