import { AppError } from '../../shared/errors.ts';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;

/**
 * start_date / end_date of the list routes: an ISO date or date-time (UTC unless it names an
 * offset). A date-only end_date covers that whole day. Unparseable: a 422 in pydantic's shape.
 */
export function dateRangeMs(start: string | undefined, end: string | undefined): { start_ms?: number; end_ms?: number } {
  const range: { start_ms?: number; end_ms?: number } = {};
  if (start !== undefined && start !== '') range.start_ms = parseMs(start, 'start_date');
  if (end !== undefined && end !== '') range.end_ms = parseMs(end, 'end_date') + (DATE_ONLY.test(end) ? DAY_MS - 1 : 0);
  return range;
}

function parseMs(text: string, field: string): number {
  const normalized = DATE_ONLY.test(text) ? `${text}T00:00:00Z` : /[zZ]|[+-]\d{2}:?\d{2}$/.test(text) ? text : `${text}Z`;
  const ms = Date.parse(normalized);
  if (Number.isNaN(ms)) {
    throw AppError.validation([{ type: 'datetime_from_date_parsing', loc: ['query', field], msg: 'Input should be a valid datetime or date', input: text }]);
  }
  return ms;
}
