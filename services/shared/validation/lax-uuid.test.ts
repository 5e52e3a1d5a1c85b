import { describe, expect, it } from 'vitest';
import { laxUuid } from './lax-uuid.ts';

const prefix = 'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found';

describe('laxUuid reads the forms pydantic UUID reads', () => {
  it.each([
    '550e8400-e29b-41d4-a716-446655440000',
    '550E8400-E29B-41D4-A716-446655440000',
    '{550e8400-e29b-41d4-a716-446655440000}',
    'urn:uuid:550e8400-e29b-41d4-a716-446655440000',
    '550e8400e29b41d4a716446655440000',
  ])('%s', (input) => {
    expect(laxUuid(input)).toEqual({ ok: true, value: '550e8400-e29b-41d4-a716-446655440000' });
  });
});

describe('laxUuid refuses with the uuid 1.18 texts of pydantic <= 2.12', () => {
  it.each([
    ['not-a-uuid', `${prefix} \`n\` at 1`],
    ['é', `${prefix} \`é\` at 1`],
    ['abc', 'invalid length: expected length 32 for simple format, found 3'],
    ['', 'invalid length: expected length 32 for simple format, found 0'],
    ['550e8400-e29b-41d4-a716', 'invalid group count: expected 5, found 4'],
    ['550e8400-e29b-41d4-a716-44665544000', 'invalid group length in group 4: expected 12, found 11'],
    ['550e840-0e29b-41d4-a716-446655440000', 'invalid group length in group 0: expected 8, found 7'],
    ['{550e8400-e29b-4Zd4-a716-446655440000}', `${prefix} \`Z\` at 16`],
    ['urn:uuid:550,8400-e29b-41d4-ab16-446655440000', `${prefix} \`,\` at 4`],
    // the crate counts the braces into the last group: a quirk pydantic passes on
    ['{550e8400-e29b-41d4-a716-4466554400}', 'invalid group length in group 4: expected 12, found 12'],
  ])('%o: %s', (input, error) => {
    expect(laxUuid(input)).toEqual({
      ok: false,
      error: { type: 'uuid_parsing', msg: `Input should be a valid UUID, ${error}`, ctx: { error } },
    });
  });

  it.each([5n, true, null, [], new Map()])('refuses %o with uuid_type', (input) => {
    expect(laxUuid(input)).toEqual({
      ok: false,
      error: { type: 'uuid_type', msg: 'UUID input should be a string, bytes or UUID object' },
    });
  });
});
