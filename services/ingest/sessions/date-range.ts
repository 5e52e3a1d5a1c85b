const DATE_ONLY = /^\s*\d{4}-\d{2}-\d{2}\s*$/;
const DAY_MS = 86_400_000;

/**
 * The created_at bounds of the session list. The schema has parsed both dates (naive ones as UTC);
 * an end_date given as a bare date covers that whole day, as the dashboard means it.
 */
export function dateRangeMs(
  start: Date | undefined,
  end: Date | undefined,
  endText: unknown,
): { start_ms?: number; end_ms?: number } {
  const range: { start_ms?: number; end_ms?: number } = {};
  if (start !== undefined) range.start_ms = start.getTime();
  if (end !== undefined)
    range.end_ms = end.getTime() + (typeof endText === 'string' && DATE_ONLY.test(endText) ? DAY_MS - 1 : 0);
  return range;
}
