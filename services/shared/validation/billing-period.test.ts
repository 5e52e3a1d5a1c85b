import { describe, expect, it } from 'vitest';
import { makeEnvelope } from '../../domain/records/index.ts';
import { ANONYMOUS } from '../auth/access.ts';
import { auditEnvelope } from '../auth/audit.ts';
import { AppError } from '../errors.ts';
import { assertPeriod, assertTenantPath, MAX_TENANT_ID_LENGTH, monthBounds } from './billing-period.ts';

describe('billing periods', () => {
  it('takes a tenant id of 512 characters in a path, and refuses one longer as pydantic does', () => {
    const longest = 'é'.repeat(MAX_TENANT_ID_LENGTH);
    expect(() => assertTenantPath(longest)).not.toThrow();
    const refused = (() => {
      try {
        assertTenantPath(`${longest}u`);
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).detail).toEqual([
      {
        type: 'string_too_long',
        loc: ['path', 'user_id'],
        msg: 'String should have at most 512 characters',
        input: `${longest}u`,
        ctx: { max_length: 512 },
      },
    ]);
  });

  it('keys the records of a 512-character tenant: its period and its settings', () => {
    const user = 'u'.repeat(MAX_TENANT_ID_LENGTH);
    const at = new Date('2026-11-02T09:00:00.000Z');
    const period = {
      user_id: user,
      period: '2026-10',
      version: 1,
      closed_at: at.toISOString(),
      reopened_at: null,
      revision: 1,
    };
    const settings = { user_id: user, time_zone: 'UTC', updated_at: at.toISOString() };
    expect(() => makeEnvelope('period', `period:${user}:2026-10`, period, at, at)).not.toThrow();
    expect(() => makeEnvelope('tenant_settings', `tenant-settings:${user}`, settings, at, at)).not.toThrow();
    const audited = { actor: ANONYMOUS, user_id: user, at } as const;
    expect(() =>
      auditEnvelope({ ...audited, action: 'period_closed', subject_id: `${user}/2026-10`, detail: period }, 'k'),
    ).not.toThrow();
    expect(() =>
      auditEnvelope({ ...audited, action: 'time_zone_set', subject_id: user, detail: settings }, 'k'),
    ).not.toThrow();
  });

  it('bounds a month of the first century in its own year', () => {
    const { start, end } = monthBounds('0046-07');
    expect([new Date(start).toISOString(), new Date(end).toISOString()]).toEqual([
      '0046-07-01T00:00:00.000Z',
      '0046-08-01T00:00:00.000Z',
    ]);
  });

  it('takes the months of the years 0002 to 9998, whose bounds in every zone are date-times', () => {
    for (const period of ['0002-01', '2026-10', '9998-12']) expect(() => assertPeriod(period)).not.toThrow();
    for (const period of ['0000-01', '0001-01', '9999-12', '2026-13', '2026-00', '26-10'])
      expect(() => assertPeriod(period), period).toThrow('1 validation error(s)');
  });
});
