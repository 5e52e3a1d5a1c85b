import { describe, expect, expectTypeOf, it } from 'vitest';
import { compileRequest } from '../compile-request.ts';
import { jsonBody, wireResponse } from '../test-support/wire-bytes.ts';
import { sessionUpdateBody, type SessionUpdateBody } from '../../../../schemas/http/session-update.ts';

const check = compileRequest({ body: sessionUpdateBody });
const reply = (text: string) => wireResponse(check, { body: jsonBody(text) });
const detail = (...items: string[]) => ({ status: 422, body: `{"detail":[${items.join(',')}]}` });
const statusEnum = "'CREATED', 'ACTIVE', 'COMPLETED' or 'FAILED'";

describe('PATCH /api/sessions/{session_id} body', () => {
  it('accepts {} and changes nothing', () => {
    expect(reply('{}')).toEqual({ status: 200, body: '{}' });
  });

  it('lists the status values as Python reprs (row 6), for any wrong value', () => {
    const item = (input: string) =>
      `{"type":"enum","loc":["body","status"],"msg":"Input should be ${statusEnum}","input":${input},"ctx":{"expected":"${statusEnum}"}}`;
    expect(reply('{"status":"DONE"}')).toEqual(detail(item('"DONE"')));
    expect(reply('{"status":1}')).toEqual(detail(item('1')));
    expect(reply('{"status":"completed"}')).toEqual(detail(item('"completed"')));
  });

  it.each(['"abc"', '"1.5"', '""', '"5a"'])('refuses duration %s with int_parsing (row 7)', (input) => {
    expect(reply(`{"duration":${input}}`)).toEqual(
      detail(
        `{"type":"int_parsing","loc":["body","duration"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":${input}}`,
      ),
    );
  });

  it('refuses duration 1.5 with int_from_float (row 7b)', () => {
    expect(reply('{"duration":1.5}')).toEqual(
      detail(
        '{"type":"int_from_float","loc":["body","duration"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5}',
      ),
    );
  });

  it.each(['[]', '{}', 'null'])('refuses duration %s with int_type (row 7c)', (input) => {
    expect(reply(`{"duration":${input}}`)).toEqual(
      detail(`{"type":"int_type","loc":["body","duration"],"msg":"Input should be a valid integer","input":${input}}`),
    );
  });

  it('coerces "42", 2.0 and true to whole seconds', () => {
    expect(reply('{"duration":"42"}').body).toBe('{"duration":42}');
    expect(reply('{"duration":2.0}').body).toBe('{"duration":2}');
    expect(reply('{"duration":true}').body).toBe('{"duration":1}');
  });

  it('refuses a negative or out-of-range duration', () => {
    expect(reply('{"duration":"-5"}')).toEqual(
      detail(
        '{"type":"greater_than_equal","loc":["body","duration"],"msg":"Input should be greater than or equal to 0","input":"-5","ctx":{"ge":0}}',
      ),
    );
    expect(reply('{"duration":2147483648}')).toEqual(
      detail(
        '{"type":"less_than_equal","loc":["body","duration"],"msg":"Input should be less than or equal to 2147483647","input":2147483648,"ctx":{"le":2147483647}}',
      ),
    );
  });

  it('reports a bad ended_at with the date parser text (rows 10, 10c)', () => {
    expect(reply('{"ended_at":"not-a-date"}')).toEqual(
      detail(
        '{"type":"datetime_from_date_parsing","loc":["body","ended_at"],"msg":"Input should be a valid datetime or date, invalid character in year","input":"not-a-date","ctx":{"error":"invalid character in year"}}',
      ),
    );
    expect(reply('{"ended_at":true}')).toEqual(
      detail(
        '{"type":"datetime_type","loc":["body","ended_at"],"msg":"Input should be a valid datetime","input":true}',
      ),
    );
  });

  it('accepts Z, offsets, date-only and unix seconds for ended_at', () => {
    for (const input of [
      '"2026-01-01T00:00:00Z"',
      '"2026-01-01T05:30:00+05:30"',
      '"2026-01-01"',
      '1767225600',
      '"1767225600"',
    ]) {
      expect(check({ body: new Map([['ended_at', JSON.parse(input)]]) })).toMatchObject({
        ok: true,
        value: { body: { ended_at: new Date('2026-01-01T00:00:00Z') } },
      });
    }
  });

  it('lets the call details be null and checks their enums', () => {
    expect(reply('{"call_direction":null,"transfer_timestamp":null,"agent_name":null}').status).toBe(200);
    expect(reply('{"call_status":"X","transfer_type":1}')).toEqual(
      detail(
        `{"type":"enum","loc":["body","call_status"],"msg":"Input should be 'RINGING', 'ANSWERED', 'COMPLETED', 'FAILED' or 'NO_ANSWER'","input":"X","ctx":{"expected":"'RINGING', 'ANSWERED', 'COMPLETED', 'FAILED' or 'NO_ANSWER'"}}`,
        `{"type":"enum","loc":["body","transfer_type"],"msg":"Input should be 'WARM' or 'COLD'","input":1,"ctx":{"expected":"'WARM' or 'COLD'"}}`,
      ),
    );
  });

  it('refuses agent_name, outbound_phone_number and transferred_to over 512 characters, and takes 512', () => {
    const fields = ['agent_name', 'outbound_phone_number', 'transferred_to'];
    const long = 'a'.repeat(513);
    expect(reply(`{${fields.map((field) => `"${field}":"${long}"`).join(',')}}`)).toEqual(
      detail(
        ...fields.map(
          (field) =>
            `{"type":"string_too_long","loc":["body","${field}"],"msg":"String should have at most 512 characters","input":"${long}","ctx":{"max_length":512}}`,
        ),
      ),
    );
    expect(reply(`{${fields.map((field) => `"${field}":"${'😀'.repeat(512)}"`).join(',')}}`).status).toBe(200);
    expect(reply(`{${fields.map((field) => `"${field}":null`).join(',')}}`).status).toBe(200);
  });
});

describe('SessionUpdateBody is read off the schema', () => {
  it('makes every key optional and only the call details nullable', () => {
    expectTypeOf<SessionUpdateBody['status']>().toEqualTypeOf<
      'CREATED' | 'ACTIVE' | 'COMPLETED' | 'FAILED' | undefined
    >();
    expectTypeOf<SessionUpdateBody['call_direction']>().toEqualTypeOf<'INBOUND' | 'OUTBOUND' | null | undefined>();
    expectTypeOf<SessionUpdateBody['transfer_timestamp']>().toEqualTypeOf<Date | null | undefined>();
  });
});
