import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { T0 } from './session.fixtures.ts';
import { assertInstantsInWindow } from './session-instants.ts';

const DAY_MS = 86_400_000;
const window = { nowMs: T0, maxAgeMs: 35 * DAY_MS };

function itemsOf(run: () => void) {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION') return error.detail;
    throw error;
  }
  return [];
}

describe('assertInstantsInWindow', () => {
  it('takes reported instants from the window’s start to 5 minutes ahead, and an update without any', () => {
    expect(itemsOf(() => assertInstantsInWindow({ ended_at: T0 - 35 * DAY_MS }, window))).toEqual([]);
    expect(itemsOf(() => assertInstantsInWindow({ ended_at: T0 + 5 * 60_000 }, window))).toEqual([]);
    expect(itemsOf(() => assertInstantsInWindow({ transfer_timestamp: null, status: 'COMPLETED' }, window))).toEqual(
      [],
    );
  });

  it('refuses an end in the year 9999 and a transfer before the window, each at its field', () => {
    const far = Date.parse('9999-12-31T00:00:00Z');
    const old = T0 - 35 * DAY_MS - 1;
    expect(itemsOf(() => assertInstantsInWindow({ ended_at: far, transfer_timestamp: old }, window))).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'ended_at'],
        msg: 'Value error, ended_at is more than 5 minutes in the future',
        input: '9999-12-31T00:00:00.000Z',
        ctx: { error: {} },
      },
      {
        type: 'value_error',
        loc: ['body', 'transfer_timestamp'],
        msg: 'Value error, transfer_timestamp is more than 35 days in the past',
        input: new Date(old).toISOString(),
        ctx: { error: {} },
      },
    ]);
  });

  it('gives an instant sent without an offset (a local datetime or date) up to 14 hours more ahead, and no more', () => {
    const offsetless = new Set(['ended_at']);
    // A worker at UTC+14 sends its local date: midnight of it is 14 hours ahead of UTC's now at most.
    const tomorrow = Date.UTC(2026, 10, 23);
    const atTenUtc = Date.UTC(2026, 10, 22, 10, 0);
    expect(itemsOf(() => assertInstantsInWindow({ ended_at: tomorrow }, { ...window, nowMs: atTenUtc }))).toHaveLength(
      1,
    );
    expect(
      itemsOf(() => assertInstantsInWindow({ ended_at: tomorrow }, { ...window, nowMs: atTenUtc }, offsetless)),
    ).toEqual([]);
    const beyond = T0 + 14 * 3_600_000 + 5 * 60_000 + 1;
    expect(itemsOf(() => assertInstantsInWindow({ ended_at: beyond }, window, offsetless))).toHaveLength(1);
    expect(itemsOf(() => assertInstantsInWindow({ transfer_timestamp: beyond - 1 }, window, offsetless))).toHaveLength(
      1,
    );
  });
});
