import { describe, expect, expectTypeOf, it } from 'vitest';
import type { JsonObject } from '../lax-scalars.ts';
import { compileRequest } from '../compile-request.ts';
import { jsonBody, wireResponse } from '../test-support/wire-bytes.ts';
import { sessionCreateBody, type SessionCreateBody } from '../../../../schemas/http/session-create.ts';

const check = compileRequest({ body: sessionCreateBody });
const reply = (text: string, contentType?: string) => wireResponse(check, { body: jsonBody(text, contentType) });
const detail = (...items: string[]) => ({ status: 422, body: `{"detail":[${items.join(',')}]}` });

describe('POST /api/sessions/ body', () => {
  it('reports a missing field with the received object as input (row 1)', () => {
    expect(reply('{"user_id":"u1"}')).toEqual(
      detail('{"type":"missing","loc":["body","room_name"],"msg":"Field required","input":{"user_id":"u1"}}'),
    );
  });

  it('reports every missing field in declaration order (row 1b)', () => {
    expect(reply('{}')).toEqual(
      detail(
        '{"type":"missing","loc":["body","room_name"],"msg":"Field required","input":{}}',
        '{"type":"missing","loc":["body","user_id"],"msg":"Field required","input":{}}',
      ),
    );
  });

  it('reports a body that is not an object as model_attributes_type (row 4)', () => {
    expect(reply('[1,2]')).toEqual(
      detail(
        '{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1,2]}',
      ),
    );
  });

  it('reports an empty or null body as a missing body (row 4b)', () => {
    const missingBody = detail('{"type":"missing","loc":["body"],"msg":"Field required","input":null}');
    expect(reply('')).toEqual(missingBody);
    expect(reply('null')).toEqual(missingBody);
  });

  it('refuses numbers for strings, nullable agent_id included (rows 5, 5b)', () => {
    expect(reply('{"room_name":123,"user_id":"u","agent_id":123}')).toEqual(
      detail(
        '{"type":"string_type","loc":["body","room_name"],"msg":"Input should be a valid string","input":123}',
        '{"type":"string_type","loc":["body","agent_id"],"msg":"Input should be a valid string","input":123}',
      ),
    );
  });

  it('refuses a string for session_data (row 11), under the name the client used', () => {
    expect(reply('{"room_name":"r","user_id":"u","session_data":"abc"}')).toEqual(
      detail(
        '{"type":"dict_type","loc":["body","session_data"],"msg":"Input should be a valid dictionary","input":"abc"}',
      ),
    );
    expect(reply('{"room_name":"r","user_id":"u","metadata":"abc"}')).toEqual(
      detail('{"type":"dict_type","loc":["body","metadata"],"msg":"Input should be a valid dictionary","input":"abc"}'),
    );
  });

  it('accepts only CREATED or ACTIVE as the initial status', () => {
    expect(reply('{"room_name":"r","user_id":"u","status":"COMPLETED"}')).toEqual(
      detail(
        `{"type":"enum","loc":["body","status"],"msg":"Input should be 'CREATED' or 'ACTIVE'","input":"COMPLETED","ctx":{"expected":"'CREATED' or 'ACTIVE'"}}`,
      ),
    );
  });

  it('refuses a room_name over 255 characters instead of failing in storage', () => {
    const long = 'r'.repeat(256);
    expect(reply(`{"room_name":"${long}","user_id":"u"}`)).toEqual(
      detail(
        `{"type":"string_too_long","loc":["body","room_name"],"msg":"String should have at most 255 characters","input":"${long}","ctx":{"max_length":255}}`,
      ),
    );
  });

  it('refuses a user_id or agent_id over 512 characters, each with its own item', () => {
    const long = 'u'.repeat(513);
    const tooLong = (field: string) =>
      `{"type":"string_too_long","loc":["body","${field}"],"msg":"String should have at most 512 characters","input":"${long}","ctx":{"max_length":512}}`;
    expect(reply(`{"room_name":"r","user_id":"${long}","agent_id":"${long}"}`)).toEqual(
      detail(tooLong('user_id'), tooLong('agent_id')),
    );
  });

  it('counts characters as Python does: 512 four-byte characters are within the bound, a null agent_id too', () => {
    const emoji = '😀'.repeat(512);
    expect(reply(`{"room_name":"${'😀'.repeat(255)}","user_id":"${emoji}","agent_id":"${emoji}"}`).status).toBe(200);
    expect(reply(`{"room_name":"r","user_id":"u","agent_id":null}`).status).toBe(200);
    expect(reply(`{"room_name":"r","user_id":"${emoji}😀"}`).body).toContain(
      '"type":"string_too_long","loc":["body","user_id"]',
    );
  });

  it('validates the raw text of a non-JSON body (rows 14, 14b)', () => {
    const item =
      '{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\\"room_name\\":\\"r\\"}"}';
    expect(reply('{"room_name":"r"}', 'text/plain')).toEqual(detail(item));
    expect(wireResponse(check, { body: { contentType: undefined, raw: Buffer.from('{"room_name":"r"}') } })).toEqual(
      detail(item),
    );
  });

  it('reports broken JSON with the Python decoder message (row 3)', () => {
    expect(reply('{some broken json}')).toEqual(
      detail(
        '{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}',
      ),
    );
  });

  it('gives the session fields with defaults, metadata read as session_data, unknown keys dropped', () => {
    expect(wireResponse(check, { body: jsonBody('{"room_name":"r","user_id":"u","metadata":{"a":1},"x":1}') })).toEqual(
      {
        status: 200,
        body: '{"room_name":"r","user_id":"u","session_data":{"a":1},"status":"ACTIVE"}',
      },
    );
  });
});

describe('SessionCreateBody is read off the schema', () => {
  it('has the required and defaulted keys present and agent_id optional and nullable', () => {
    expectTypeOf<SessionCreateBody>().toEqualTypeOf<{
      room_name: string;
      user_id: string;
      agent_id?: string | null;
      session_data: JsonObject;
      status: 'CREATED' | 'ACTIVE';
    }>();
  });
});
