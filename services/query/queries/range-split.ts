import type { InstantRange } from '../routes/date-bounds.ts';

export const QUARTER_HOUR_MS = 15 * 60_000;
export const DAY_MS = 86_400_000;

/**
 * A range read as whole rollup buckets where it can be, and from the raw events only at its edges:
 * `rollup` filters the rollup's bucket column, `events` the events' occurred_at (null: nothing to
 * read there). Exact for any bounds, and the raw part is at most two buckets long.
 */
export interface RangeSql {
  readonly rollup: string | null;
  readonly events: string | null;
  readonly params: Readonly<Record<string, number>>;
}

const instant = (name: string) => `fromUnixTimestamp64Milli(toInt64({${name}:Int64}), 'UTC')`;

function within(column: string, from: string | null, to: string | null): string {
  const parts = [
    from === null ? null : `${column} >= ${instant(from)}`,
    to === null ? null : `${column} < ${instant(to)}`,
  ].filter((part) => part !== null);
  return parts.length === 0 ? 'true' : parts.join(' AND ');
}

/** A range as its whole buckets of `grainMs` (null: none) and the partial buckets at its ends. */
export function alignRange(
  range: InstantRange,
  grainMs: number,
): { readonly inner: InstantRange | null; readonly edges: InstantRange[] } {
  const start = range.start === null ? null : Math.ceil(range.start / grainMs) * grainMs;
  const end = range.end === null ? null : Math.floor(range.end / grainMs) * grainMs;
  if (start !== null && end !== null && start >= end) return { inner: null, edges: [range] };
  const edges = [
    range.start !== null && range.start < start! ? { start: range.start, end: start } : null,
    range.end !== null && end! < range.end ? { start: end, end: range.end } : null,
  ].filter((edge) => edge !== null);
  return { inner: { start, end }, edges };
}

/** `prefix` names the parameters, so that several splits can share one statement. */
export function splitRange(
  range: InstantRange,
  grainMs: number,
  bucketColumn: string,
  eventColumn = 'occurred_at',
  prefix = '',
): RangeSql {
  const { inner, edges } = alignRange(range, grainMs);
  const [rangeStart, rangeEnd, innerStartName, innerEndName] = [
    'range_start',
    'range_end',
    'inner_start',
    'inner_end',
  ].map((name) => `${prefix}${name}`) as [string, string, string, string];
  const params: Record<string, number> = {};
  if (range.start !== null) params[rangeStart] = range.start;
  if (range.end !== null) params[rangeEnd] = range.end;
  if (inner === null) return { rollup: null, events: within(eventColumn, rangeStart, rangeEnd), params };
  if (inner.start !== null) params[innerStartName] = inner.start;
  if (inner.end !== null) params[innerEndName] = inner.end;
  const events = edges.map((edge) =>
    edge.start === range.start
      ? within(eventColumn, rangeStart, innerStartName)
      : within(eventColumn, innerEndName, rangeEnd),
  );
  return {
    rollup: within(
      bucketColumn,
      inner.start === null ? null : innerStartName,
      inner.end === null ? null : innerEndName,
    ),
    events: events.length === 0 ? null : events.map((edge) => `(${edge})`).join(' OR '),
    params,
  };
}
