import { describe, expect, it } from 'vitest';
import { normalizePhoneNumber } from './phone-number.ts';

describe('normalizePhoneNumber', () => {
  it.each([
    ['+15551230001', '+15551230001'],
    ['15551230001', '+15551230001'],
    ['  +1 (555) 123-0001 ', '+15551230001'],
    ['+44 20.7946.0958', '+442079460958'],
    ['12345678', '+12345678'],
    ['+123456789012345', '+123456789012345'],
  ])('writes %j as %s', (raw, expected) => {
    expect(normalizePhoneNumber(raw)).toEqual({ ok: true, phone_number: expected });
  });

  it.each([
    '',
    '   ',
    '+',
    '1234567',
    '+1234567890123456',
    '++15551230001',
    '+1555abc0001',
    '1555+1230001',
    '+1_555_123_0001',
  ])('refuses %j', (raw) => {
    expect(normalizePhoneNumber(raw)).toMatchObject({ ok: false, reason: expect.stringContaining('E.164') });
  });
});
