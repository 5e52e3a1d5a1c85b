import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { PY_CHECKS } from '../../shared/validation/py-checks.ts';
import { parseDateBytes, parseDateTimeBytes } from '../../shared/validation/speedate-timestamp.ts';
import { addDays, localToInstant, startOfLocalDay, utcInstant } from '../../shared/zoned-time.ts';

/** A half-open range of instants [start, end) in epoch milliseconds; null is unbounded. */
export interface InstantRange {
  readonly start: number | null;
  readonly end: number | null;
}

type Bound =
  | { readonly ok: true; readonly from: number; readonly until: number }
  | { readonly ok: false; readonly item: ValidationItem };

/**
 * start_date and end_date of the cost queries, read in the caller's zone: a bare date is that local
 * day (an end_date date includes the whole day), a naive date-time is local wall-clock time, one
 * with an offset or a unix timestamp is that instant (an end_date instant is included). Parsing is
 * pydantic's (speedate), so an unparseable date is the 422 a `datetime` field gives. An empty value
 * counts as absent, as the dashboard sends one when no date is picked. `names` are the parameters'
 * names in the errors (an export's are `from` and `to`).
 */
export function dateRangeOf(
  query: { readonly start_date?: string | undefined; readonly end_date?: string | undefined },
  timeZone: string,
  names: { readonly start: string; readonly end: string } = { start: 'start_date', end: 'end_date' },
): InstantRange {
  const start = boundOf(names.start, query.start_date, timeZone);
  const end = boundOf(names.end, query.end_date, timeZone);
  const items = [start, end].flatMap((bound) => (bound !== null && !bound.ok ? [bound.item] : []));
  if (items.length > 0) throw AppError.validation(items);
  const range = { start: start?.ok ? start.from : null, end: end?.ok ? end.until : null };
  if (range.start !== null && range.end !== null && range.end <= range.start) {
    throw AppError.validation([
      {
        type: 'value_error',
        loc: ['query', names.end],
        msg: `Value error, ${names.end} is before ${names.start}`,
        input: query.end_date,
        ctx: { error: {} },
      },
    ]);
  }
  return range;
}

function boundOf(name: string, text: string | undefined, timeZone: string): Bound | null {
  if (text === undefined || text === '') return null;
  const bytes = Buffer.from(text, 'utf8');
  const dateTime = parseDateTimeBytes(bytes);
  if (dateTime.ok && dateTime.value.year !== 0) {
    const { tzOffset, microsecond, ...wall } = dateTime.value;
    const millisecond = Math.floor(microsecond / 1000);
    const instant =
      tzOffset === null
        ? localToInstant({ ...wall, millisecond }, timeZone)
        : utcInstant(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, millisecond) -
          tzOffset * 1000;
    return { ok: true, from: instant, until: instant + 1 };
  }
  const date = parseDateBytes(bytes);
  if (date.ok && date.value.year !== 0)
    return {
      ok: true,
      from: startOfLocalDay(date.value, timeZone),
      until: startOfLocalDay(addDays(date.value, 1), timeZone),
    };
  // The schema's x-py-check refused this already; its error is the one answered here too.
  const { type, msg, ctx } = PY_CHECKS['date-or-datetime'](text)!;
  return { ok: false, item: { type, loc: ['query', name], msg, input: text, ctx } };
}
