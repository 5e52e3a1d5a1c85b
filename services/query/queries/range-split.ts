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

export function splitRange(range: InstantRange, grainMs: number, bucketColumn: string, eventColumn = 'occurred_at'): RangeSql {
  const innerStart = range.start === null ? null : Math.ceil(range.start / grainMs) * grainMs;
  const innerEnd = range.end === null ? null : Math.floor(range.end / grainMs) * grainMs;
  const params: Record<string, number> = {};
  if (range.start !== null) params.range_start = range.start;
  if (range.end !== null) params.range_end = range.end;
  if (innerStart !== null && innerEnd !== null && innerStart >= innerEnd) {
    return { rollup: null, events: within(eventColumn, 'range_start', 'range_end'), params };
  }
  if (innerStart !== null) params.inner_start = innerStart;
  if (innerEnd !== null) params.inner_end = innerEnd;
  const edges = [
    range.start !== null && range.start < innerStart! ? within(eventColumn, 'range_start', 'inner_start') : null,
    range.end !== null && innerEnd! < range.end ? within(eventColumn, 'inner_end', 'range_end') : null,
  ].filter((edge) => edge !== null);
  return {
    rollup: within(bucketColumn, innerStart === null ? null : 'inner_start', innerEnd === null ? null : 'inner_end'),
    events: edges.length === 0 ? null : edges.map((edge) => `(${edge})`).join(' OR '),
    params,
  };
}
