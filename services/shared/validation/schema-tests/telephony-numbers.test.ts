import { describe, expect, it } from 'vitest';
import { compileRequest } from '../compile-request.ts';
import { jsonBody, wireResponse } from '../test-support/wire-bytes.ts';
import { numberAssignBody, numberReleaseBody } from '../../../../schemas/http/telephony-numbers.ts';

const release = compileRequest({ body: numberReleaseBody });
const assign = compileRequest({ body: numberAssignBody });
const detail = (...items: string[]) => ({ status: 422, body: `{"detail":[${items.join(',')}]}` });

describe('POST /api/telephony/numbers/release body (a named model)', () => {
  it('reports a missing agent_id with the received object as input', () => {
    expect(wireResponse(release, { body: jsonBody('{}') })).toEqual(
      detail('{"type":"missing","loc":["body","agent_id"],"msg":"Field required","input":{}}'),
    );
  });

  it('reports a non-object body as model_attributes_type, not as a missing agent_id', () => {
    expect(wireResponse(release, { body: jsonBody('"a1"') })).toEqual(
      detail(
        '{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"a1"}',
      ),
    );
  });

  it('gives the agent id', () => {
    expect(wireResponse(release, { body: jsonBody('{"agent_id":"a1"}') })).toEqual({
      status: 200,
      body: '{"agent_id":"a1"}',
    });
  });
});

describe('POST /api/telephony/numbers/assign body', () => {
  it('requires agent_id and phone_number, not provider', () => {
    expect(wireResponse(assign, { body: jsonBody('{"agent_id":"a1"}') })).toEqual(
      detail('{"type":"missing","loc":["body","phone_number"],"msg":"Field required","input":{"agent_id":"a1"}}'),
    );
    expect(wireResponse(assign, { body: jsonBody('{"agent_id":"a1","phone_number":" 15551230001"}') }).status).toBe(
      200,
    );
  });

  it('takes an agent id of 1 to 512 characters, the bounds of its record', () => {
    expect(wireResponse(assign, { body: jsonBody('{"agent_id":"","phone_number":"15551230001"}') })).toEqual(
      detail(
        '{"type":"string_too_short","loc":["body","agent_id"],"msg":"String should have at least 1 character","input":"","ctx":{"min_length":1}}',
      ),
    );
    expect(
      wireResponse(assign, { body: jsonBody(`{"agent_id":"${'a'.repeat(513)}","phone_number":"15551230001"}`) }).body,
    ).toContain('"type":"string_too_long"');
  });
});
