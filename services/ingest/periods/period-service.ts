import type { PeriodRecord } from '../../../schemas/records/period.ts';
import type { TenantSettingsRecord } from '../../../schemas/records/tenant-settings.ts';
import { DEFAULT_BILLING_TIME_ZONE } from '../../shared/clickhouse/tables/tenant-settings.ts';
import { AppError } from '../../shared/errors.ts';
import type { Caller } from '../../shared/auth/access.ts';
import { auditEnvelope } from '../../shared/auth/audit.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import { assertPeriod, assertTenantPath, monthBounds } from '../../shared/validation/billing-period.ts';
import { makeEnvelope, type RecordSink } from '../../domain/records/index.ts';
import type { CorrectionGuard } from '../usage/correction-guard.ts';
import type { ClosedPeriods } from './closed-periods.ts';

export interface PeriodServiceDeps {
  /** The months' versions as stored, with this process's changes the store does not show yet. */
  readonly closed: ClosedPeriods;
  readonly sink: RecordSink;
  /** Changes of one tenant's month run one at a time across the ingest processes (the corrections' guard). */
  readonly guard: CorrectionGuard;
  readonly now?: () => number;
}

/** A month's state as the routes answer it. */
export interface PeriodAnswer {
  readonly user_id: string;
  readonly period: string;
  readonly status: 'open' | 'closed';
  readonly version: number;
  readonly closed_at: string;
  readonly reopened_at: string | null;
}

/** A tenant's billing settings as the routes answer them. */
export interface PeriodSettingsAnswer {
  readonly user_id: string;
  readonly time_zone: string;
  /** When they were last set; null while never set (UTC). */
  readonly updated_at: string | null;
}

/** The one guard key of a tenant's period changes: closes, reopens and its time zone change one at a time. */
const PERIODS_KEY = 'periods';

/**
 * Closing and reopening a tenant's month (docs/statements.md): each close, once the month has ended, is
 * a new version, a durable record (and an audit entry) on the record path; a reopen ends the latest
 * close (a new revision of that version). Every version's statement stays readable as it was closed.
 */
export function createPeriodService({ closed, sink, guard, now = Date.now }: PeriodServiceDeps) {
  /** The month's latest version as stored now (null: never closed), one change at a time. */
  async function change(
    userId: string,
    period: string,
    caller: Caller,
    tenant: string | null,
    decide: (latest: PeriodAnswer | null, at: Date) => PeriodRecord | Promise<PeriodRecord>,
  ): Promise<PeriodAnswer> {
    assertTenantPath(userId);
    assertActsFor(tenant, userId, 'close or reopen a period');
    assertPeriod(period);
    return guard.hold(userId, PERIODS_KEY, async () => {
      // The store's, or this process's change that the store does not show yet.
      const latest = await closed.latestOf(userId, period);
      const at = new Date(now());
      const record = await decide(latest === null ? null : answerOf(latest), at);
      const key = `period:${userId}:${period}`;
      const action = record.reopened_at === null ? 'period_closed' : 'period_reopened';
      await sink.publish([
        makeEnvelope('period', key, record, at, at),
        auditEnvelope(
          { action, subject_id: `${userId}/${period}`, actor: caller, user_id: userId, at, detail: record },
          key,
        ),
      ]);
      const version = {
        user_id: userId,
        period,
        version: record.version,
        closed_ms: Date.parse(record.closed_at),
        reopened_ms: record.reopened_at === null ? null : Date.parse(record.reopened_at),
      };
      closed.note(version);
      return answerOf(version);
    });
  }

  return {
    settings: async (userId: string, tenant: string | null): Promise<PeriodSettingsAnswer> => {
      assertActsFor(tenant, userId, 'read billing settings');
      return settingsAnswer(userId, await closed.freshSettings(userId));
    },
    /**
     * Sets the time zone of the tenant's months. Only before its first close: a month once closed keeps
     * the instants it was closed with, and so do every later one's edges (a 409 after it).
     */
    setTimeZone: (userId: string, timeZone: string, caller: Caller, tenant: string | null) => {
      assertTenantPath(userId);
      assertActsFor(tenant, userId, 'set billing settings');
      return guard.hold(userId, PERIODS_KEY, async () => {
        const first = await closed.firstClose(userId);
        const current = await closed.freshSettings(userId);
        if (first !== null && (current?.time_zone ?? DEFAULT_BILLING_TIME_ZONE) !== timeZone)
          throw AppError.of(
            'CONFLICT',
            `User ${userId} closed period ${first.period} at ${new Date(first.closed_ms).toISOString()}: the time zone of its months is fixed once a month was closed`,
          );
        if (current?.time_zone === timeZone) return settingsAnswer(userId, current);
        const at = new Date(Math.max(now(), (current?.updated_ms ?? 0) + 1));
        const record: TenantSettingsRecord = { user_id: userId, time_zone: timeZone, updated_at: at.toISOString() };
        const key = `tenant-settings:${userId}`;
        await sink.publish([
          makeEnvelope('tenant_settings', key, record, at, at),
          auditEnvelope(
            { action: 'time_zone_set', subject_id: userId, actor: caller, user_id: userId, at, detail: record },
            key,
          ),
        ]);
        const settings = { user_id: userId, time_zone: timeZone, updated_ms: at.getTime() };
        closed.noteTimeZone(settings);
        return settingsAnswer(userId, settings);
      });
    },
    close: (userId: string, period: string, caller: Caller, tenant: string | null) =>
      change(userId, period, caller, tenant, async (latest, at) => {
        const { end } = monthBounds(period, await closed.freshTimeZone(userId));
        if (at.getTime() < end)
          throw AppError.of(
            'CONFLICT',
            `Period ${period} ends at ${new Date(end).toISOString()}: a month is closed once it has ended`,
          );
        if (latest?.status === 'closed')
          throw AppError.of('CONFLICT', `Period ${period} of user ${userId} was closed at ${latest.closed_at}`);
        const version = (latest?.version ?? 0) + 1;
        return { user_id: userId, period, version, closed_at: at.toISOString(), reopened_at: null, revision: 1 };
      }),
    reopen: (userId: string, period: string, caller: Caller, tenant: string | null) =>
      change(userId, period, caller, tenant, (latest, at) => {
        if (latest === null || latest.status === 'open')
          throw AppError.of('CONFLICT', `Period ${period} of user ${userId} is open: only a closed month is reopened`);
        return {
          user_id: userId,
          period,
          version: latest.version,
          closed_at: latest.closed_at,
          reopened_at: at.toISOString(),
          revision: 2,
        };
      }),
  };
}

export type PeriodService = ReturnType<typeof createPeriodService>;

function settingsAnswer(
  userId: string,
  settings: { readonly time_zone: string; readonly updated_ms: number } | null,
): PeriodSettingsAnswer {
  return {
    user_id: userId,
    time_zone: settings?.time_zone ?? DEFAULT_BILLING_TIME_ZONE,
    updated_at: settings === null ? null : new Date(settings.updated_ms).toISOString(),
  };
}

function answerOf(version: {
  user_id: string;
  period: string;
  version: number;
  closed_ms: number;
  reopened_ms: number | null;
}): PeriodAnswer {
  return {
    user_id: version.user_id,
    period: version.period,
    status: version.reopened_ms === null ? 'closed' : 'open',
    version: version.version,
    closed_at: new Date(version.closed_ms).toISOString(),
    reopened_at: version.reopened_ms === null ? null : new Date(version.reopened_ms).toISOString(),
  };
}
