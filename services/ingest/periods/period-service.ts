import type { PeriodRecord } from '../../../schemas/records/period.ts';
import { AppError } from '../../shared/errors.ts';
import type { Caller } from '../../shared/auth/access.ts';
import { auditEnvelope } from '../../shared/auth/audit.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import { assertPeriod, monthBounds } from '../../shared/validation/billing-period.ts';
import { makeEnvelope, type RecordSink } from '../../domain/records/index.ts';
import type { CorrectionGuard } from '../usage/correction-guard.ts';
import type { ClosedPeriods } from './closed-periods.ts';

export interface PeriodServiceDeps {
  readonly closed: ClosedPeriods;
  readonly sink: RecordSink;
  /** Closes of one tenant's month run one at a time across the ingest processes (the corrections' guard). */
  readonly guard: CorrectionGuard;
  readonly now?: () => number;
}

/**
 * Closing a tenant's month (docs/statements.md): once it has ended, a close is a durable record (and an
 * audit entry) on the record path; from then on its statement holds what was stored by the close.
 */
export function createPeriodService({ closed, sink, guard, now = Date.now }: PeriodServiceDeps) {
  return {
    async close(userId: string, period: string, caller: Caller, tenant: string | null): Promise<PeriodRecord> {
      assertActsFor(tenant, userId, 'close a period');
      assertPeriod(period);
      const { end } = monthBounds(period);
      if (now() < end)
        throw AppError.of(
          'CONFLICT',
          `Period ${period} ends at ${new Date(end).toISOString()}: a month is closed once it has ended`,
        );
      return guard.hold(userId, `period-${period}`, async () => {
        const known = (await closed.fresh(userId)).find((entry) => entry.period === period);
        if (known !== undefined)
          throw AppError.of(
            'CONFLICT',
            `Period ${period} of user ${userId} was closed at ${new Date(known.closed_ms).toISOString()}`,
          );
        const at = new Date(now());
        const record: PeriodRecord = {
          user_id: userId,
          period,
          status: 'closed',
          closed_at: at.toISOString(),
          version: 1,
        };
        const key = `period:${userId}:${period}`;
        await sink.publish([
          makeEnvelope('period', key, record, at, at),
          auditEnvelope(
            {
              action: 'period_closed',
              subject_id: `${userId}/${period}`,
              actor: caller,
              user_id: userId,
              at,
              detail: record,
            },
            key,
          ),
        ]);
        closed.note({ user_id: userId, period, closed_ms: at.getTime(), version: 1 });
        return record;
      });
    },
  };
}

export type PeriodService = ReturnType<typeof createPeriodService>;
