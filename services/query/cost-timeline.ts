import type { costTimelineResponse } from '../../schemas/http/cost-responses.ts';
import type { WireOf } from '../../schemas/http/response-parts.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { AppError } from '../shared/errors.ts';
import { READ_AFRESH, type Answers } from './answer-cache.ts';
import { CostTally, money } from './cost-tally.ts';
import { FUTURE_TOLERANCE_MS } from '../shared/validation/instant-window.ts';
import { readRows, readTogether } from './queries/together.ts';
import {
  timelineLinesRead,
  usageSpan,
  usageSpanOf,
  usageSpanRead,
  type TimelineLine,
  type UsageSpan,
  type UsageSpanRow,
} from './queries/usage-totals.ts';
import type { InstantRange } from './routes/date-bounds.ts';
import { MAX_BUCKETS, timelineBuckets, type Period } from './timeline-buckets.ts';

/** One bucket of GET /api/costs/timeline. */
export type TimelinePoint = WireOf<typeof costTimelineResponse.schema>[number];

/**
 * GET /api/costs/timeline: every bucket of the range, oldest first, zeros included. Without a
 * start the range begins at the user's first usage (no usage: no buckets); without an end it
 * ends with the current bucket, or the next one when it already holds usage (stamped up to
 * FUTURE_TOLERANCE_MS ahead), so that the points always add up to the summary. A range of more than
 * MAX_BUCKETS buckets is cut to the user's data first.
 */
export async function costTimeline(
  ch: ClickHouse,
  userId: string,
  range: InstantRange,
  period: Period,
  timeZone: string,
  nowMs: number,
  answers: Answers = READ_AFRESH,
): Promise<readonly TimelinePoint[]> {
  // "Now" matters only as the end of the current bucket, and whether usage may already lie past it.
  const nowEnd = currentBucketEnd(nowMs, period, timeZone);
  const nearEnd = nowMs + FUTURE_TOLERANCE_MS >= nowEnd;
  return answers.answer(
    userId,
    JSON.stringify(['timeline', range.start, range.end, period, timeZone, nowEnd, nearEnd]),
    () => readTimeline(ch, userId, range, period, timeZone, nowEnd, nearEnd),
  );
}

async function readTimeline(
  ch: ClickHouse,
  userId: string,
  range: InstantRange,
  period: Period,
  timeZone: string,
  nowEnd: number,
  nearEnd: boolean,
): Promise<TimelinePoint[]> {
  // The span is read only when the answer needs it: without a start, and in the last minutes of the
  // current bucket, when usage stamped ahead of the clock may already lie in the next one.
  let span: UsageSpan | null | undefined;
  if (range.start === null && range.end === null && !nearEnd) {
    // The dashboard's default: from the first usage to the current bucket, whose end is known without
    // the span away from a bucket's last minutes (usage stamps at most FUTURE_TOLERANCE_MS ahead). Nothing
    // lies before the first usage, so the span and the lines up to that end are one statement.
    const rows = await readTogether<{ span: UsageSpanRow; lines: TimelineLine }>(ch, {
      span: usageSpanRead(ch, userId),
      lines: timelineLinesRead(ch, userId, { start: null, end: nowEnd }, period, timeZone),
    });
    span = usageSpanOf(rows.span);
    if (span === null) return [];
    // A first usage at or past the current bucket (a writer's clock ahead of this one) takes the path below.
    if (span.first < nowEnd)
      return points(timelineBuckets(span.first, nowEnd, period, timeZone), rows.lines, period, timeZone);
  }
  const readSpan = async () => (span === undefined ? (span = await usageSpan(ch, userId)) : span);
  const lastEnd = async () => {
    const last = nearEnd ? (await readSpan())?.last : undefined;
    return last === undefined ? nowEnd : Math.max(nowEnd, currentBucketEnd(last, period, timeZone));
  };
  let start = range.start ?? (await readSpan())?.first ?? null;
  if (start === null) return [];
  let end = range.end ?? Math.max(await lastEnd(), currentBucketEnd(start, period, timeZone));
  let buckets = timelineBuckets(start, end, period, timeZone);
  if (buckets === null) {
    // "All time" as dashboards ask it (2020-01-01 to 2099-12-31, daily): the range is cut to the caller's
    // data, from the first usage (or the start, if later) to the current bucket or the one of the last
    // usage (or the end, if earlier), as the replaced service answered it. A range really that long
    // inside the data is still a 422.
    const first = (await readSpan())?.first;
    if (first === undefined) return [];
    start = Math.max(start, first);
    end = Math.min(end, Math.max(await lastEnd(), currentBucketEnd(start, period, timeZone)));
    if (end <= start) return [];
    buckets = timelineBuckets(start, end, period, timeZone);
  }
  const lines = await readRows<TimelineLine>(ch, timelineLinesRead(ch, userId, { start, end }, period, timeZone));
  return points(buckets, lines, period, timeZone);
}

/** The buckets' points from their lines; null buckets (more than MAX_BUCKETS) are a 422. */
function points(
  buckets: ReturnType<typeof timelineBuckets>,
  lines: readonly TimelineLine[],
  period: Period,
  timeZone: string,
): TimelinePoint[] {
  if (buckets === null) {
    throw AppError.validation([
      {
        type: 'value_error',
        loc: ['query', 'start_date'],
        msg: `Value error, the range holds more than ${MAX_BUCKETS} ${period} buckets: give a later start_date or a longer period`,
        input: null,
        ctx: { error: {} },
      },
    ]);
  }
  const tallies = new Map(buckets.map((bucket) => [bucket.date, new CostTally()]));
  for (const line of lines) {
    const tally = tallies.get(line.bucket_date);
    // Both sides cut the same range with the IANA rules; were their tz data ever to disagree, fail
    // loudly rather than answer a timeline whose points do not add up to the summary.
    if (tally === undefined)
      throw AppError.of(
        'INTERNAL',
        `ClickHouse put usage in bucket ${line.bucket_date}, outside the ${period} buckets of ${timeZone} computed here`,
      );
    tally.add(line);
  }
  return buckets.map(({ date }) => {
    const tally = tallies.get(date)!;
    return {
      date,
      total_cost: money(tally.totalCost),
      by_provider: tally.byProvider(),
      by_service: tally.byService(),
      event_count: tally.events,
    };
  });
}

function currentBucketEnd(instantMs: number, period: Period, timeZone: string): number {
  return timelineBuckets(instantMs, instantMs + 1, period, timeZone)![0]!.end;
}
