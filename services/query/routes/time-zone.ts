import { AppError } from '../../shared/errors.ts';
import { PY_CHECKS } from '../../shared/validation/py-checks.ts';

/**
 * The tz query parameter: an IANA name, UTC when absent. The schema's `x-py-check` has refused an
 * unknown zone already (422 at ["query","tz"]); the same check answers here for any other caller.
 */
export function timeZoneOf(tz: string | undefined): string {
  if (tz === undefined || tz === '') return 'UTC';
  const error = PY_CHECKS['time-zone'](tz);
  if (error === null) return tz;
  throw AppError.validation([{ type: error.type, loc: ['query', 'tz'], msg: error.msg, input: tz, ctx: error.ctx }]);
}
