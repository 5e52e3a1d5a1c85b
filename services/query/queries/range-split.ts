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
  const parts = [from === null ? null : `${column} >= ${instant(from)}`, to === null ? null : `${column} < ${instant(to)}`].filter((part) => part !== null);
  return parts.length === 0 ? 'true' : parts.join(' AND ');
}

/** `prefix` names the parameters, so that several splits can share one statement. */
export function splitRange(range: InstantRange, grainMs: number, bucketColumn: string, eventColumn = 'occurred_at', prefix = ''): RangeSql {
  const innerStart = range.start === null ? null : Math.ceil(range.start / grainMs) * grainMs;
  const innerEnd = range.end === null ? null : Math.floor(range.end / grainMs) * grainMs;
  const [rangeStart, rangeEnd, innerStartName, innerEndName] = ['range_start', 'range_end', 'inner_start', 'inner_end'].map((name) => `${prefix}${name}`) as [string, string, string, string];
  const params: Record<string, number> = {};
  if (range.start !== null) params[rangeStart] = range.start;
  if (range.end !== null) params[rangeEnd] = range.end;
  if (innerStart !== null && innerEnd !== null && innerStart >= innerEnd) {
    return { rollup: null, events: within(eventColumn, rangeStart, rangeEnd), params };
  }
  if (innerStart !== null) params[innerStartName] = innerStart;
  if (innerEnd !== null) params[innerEndName] = innerEnd;
  const edges = [
    range.start !== null && range.start < innerStart! ? within(eventColumn, rangeStart, innerStartName) : null,
    range.end !== null && innerEnd! < range.end ? within(eventColumn, innerEndName, rangeEnd) : null,
  ].filter((edge) => edge !== null);
  return {
    rollup: within(bucketColumn, innerStart === null ? null : innerStartName, innerEnd === null ? null : innerEndName),
    events: edges.length === 0 ? null : edges.map((edge) => `(${edge})`).join(' OR '),
    params,
  };
}
