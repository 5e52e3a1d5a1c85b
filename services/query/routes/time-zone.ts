import { AppError } from '../../shared/errors.ts';
import { isTimeZone } from '../zoned-time.ts';

/** The tz query parameter: an IANA name, UTC when absent; an unknown zone is a 422 at ["query","tz"]. */
export function timeZoneOf(tz: string | undefined): string {
  if (tz === undefined || tz === '') return 'UTC';
  if (isTimeZone(tz)) return tz;
  throw AppError.validation([{ type: 'value_error', loc: ['query', 'tz'], msg: `Value error, unknown time zone '${tz}': use an IANA name such as 'Asia/Kolkata'`, input: tz, ctx: { error: {} } }]);
}
