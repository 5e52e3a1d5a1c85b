import { describe, expect, expectTypeOf, it } from 'vitest';
import { compileRequest } from '../compile-request.ts';
import { jsonBody, wireResponse } from '../test-support/wire-bytes.ts';
import {
  usageEventBatchBody,
  usageEventBody,
  type UsageEventBatchBody,
  type UsageEventBody,
} from '../../../../schemas/http/usage-event.ts';

const single = compileRequest({ body: usageEventBody });
const batch = compileRequest({ body: usageEventBatchBody });
const detail = (...items: string[]) => ({ status: 422, body: `{"detail":[${items.join(',')}]}` });
const base = '"session_id":"s1","user_id":"u1","provider":"deepgram","event_type":"stt_minutes"';
const reply = (extra: string) => wireResponse(single, { body: jsonBody(`{${base}${extra}}`) });

describe('POST /api/usage/events body', () => {
  it('accepts the body the workers send today, with usage_data and no costs', () => {
    const body =
      '{"session_id":"s1","user_id":"u1","agent_id":null,"event_type":"llm_tokens","provider":"google","usage_data":{"input_tokens":900,"output_tokens":300}}';
    expect(wireResponse(single, { body: jsonBody(body) })).toEqual({
      status: 200,
      body: '{"session_id":"s1","user_id":"u1","agent_id":null,"provider":"google","event_type":"llm_tokens","usage_data":{"input_tokens":900,"output_tokens":300}}',
    });
  });

  it('keeps money exact as decimal text', () => {
    expect(reply(',"quantity":0.1,"unit_cost":"0.0077","total_cost":7.7e-4').body).toContain(
      '"quantity":"0.1","unit_cost":"0.0077","total_cost":"0.00077"',
    );
  });

  it('reports the decimal errors the old service reported', () => {
    expect(reply(',"quantity":"lots","unit_cost":null,"total_cost":"Infinity"')).toEqual(
      detail(
        '{"type":"decimal_parsing","loc":["body","quantity"],"msg":"Input should be a valid decimal","input":"lots"}',
        '{"type":"decimal_type","loc":["body","unit_cost"],"msg":"Decimal input should be an integer, float, string or Decimal object","input":null}',
        '{"type":"finite_number","loc":["body","total_cost"],"msg":"Input should be a finite number","input":"Infinity"}',
      ),
    );
  });

  it('refuses negative quantities and costs', () => {
    expect(reply(',"quantity":-1')).toEqual(
      detail(
        '{"type":"greater_than_equal","loc":["body","quantity"],"msg":"Input should be greater than or equal to 0","input":-1,"ctx":{"ge":0}}',
      ),
    );
  });

  it('refuses quantities over 10^12 and costs over 10^6, however they are written, without expanding them', () => {
    expect(reply(',"quantity":"1e1000000000"')).toEqual(
      detail(
        '{"type":"less_than_equal","loc":["body","quantity"],"msg":"Input should be less than or equal to 1000000000000","input":"1e1000000000","ctx":{"le":1000000000000}}',
      ),
    );
    expect(reply(',"unit_cost":1000000.5')).toEqual(
      detail(
        '{"type":"less_than_equal","loc":["body","unit_cost"],"msg":"Input should be less than or equal to 1000000","input":1000000.5,"ctx":{"le":1000000}}',
      ),
    );
  });

  it('refuses an empty provider, which could be neither priced nor stored', () => {
    expect(
      wireResponse(single, {
        body: jsonBody('{"session_id":"s1","user_id":"u1","provider":"","event_type":"stt_minutes","quantity":1}'),
      }),
    ).toEqual(
      detail(
        '{"type":"string_too_short","loc":["body","provider"],"msg":"String should have at least 1 character","input":"","ctx":{"min_length":1}}',
      ),
    );
  });

  it('refuses ids, provider and model over 512 characters, and takes 512', () => {
    const fields = ['session_id', 'user_id', 'agent_id', 'provider', 'model'];
    const body = (value: string) =>
      jsonBody(`{${fields.map((field) => `"${field}":"${value}"`).join(',')},"event_type":"stt_minutes","quantity":1}`);
    const long = 'a'.repeat(513);
    expect(wireResponse(single, { body: body(long) })).toEqual(
      detail(
        ...fields.map(
          (field) =>
            `{"type":"string_too_long","loc":["body","${field}"],"msg":"String should have at most 512 characters","input":"${long}","ctx":{"max_length":512}}`,
        ),
      ),
    );
    expect(wireResponse(single, { body: body('😀'.repeat(512)) }).status).toBe(200);
  });

  it('lists the event types as an enum', () => {
    expect(
      wireResponse(single, {
        body: jsonBody('{"session_id":"s1","user_id":"u1","provider":"p","event_type":"minutes"}'),
      }),
    ).toEqual(
      detail(
        `{"type":"enum","loc":["body","event_type"],"msg":"Input should be 'stt_minutes', 'llm_tokens' or 'tts_characters'","input":"minutes","ctx":{"expected":"'stt_minutes', 'llm_tokens' or 'tts_characters'"}}`,
      ),
    );
  });

  it('reports a bad event_id with the uuid texts of pydantic <= 2.12 (row 9)', () => {
    const error =
      'invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1';
    expect(reply(',"event_id":"not-a-uuid"')).toEqual(
      detail(
        `{"type":"uuid_parsing","loc":["body","event_id"],"msg":"Input should be a valid UUID, ${error}","input":"not-a-uuid","ctx":{"error":"${error}"}}`,
      ),
    );
  });

  it('refuses negative token counts', () => {
    expect(reply(',"input_tokens":-1').body).toContain('"type":"greater_than_equal","loc":["body","input_tokens"]');
    expect(reply(',"image_input_tokens":-1').body).toContain(
      '"type":"greater_than_equal","loc":["body","image_input_tokens"]',
    );
  });

  it('takes image token counts and connected seconds, the seconds as exact decimal text', () => {
    const llm = '"session_id":"s1","user_id":"u1","provider":"x-ai","event_type":"llm_tokens"';
    const body = `{${llm},"input_tokens":900,"image_input_tokens":256,"cached_image_input_tokens":128,"session_duration_seconds":12.25}`;
    expect(wireResponse(single, { body: jsonBody(body) })).toEqual({
      status: 200,
      body: `{${llm},"input_tokens":900,"image_input_tokens":256,"cached_image_input_tokens":128,"session_duration_seconds":"12.25"}`,
    });
  });

  it('refuses negative or non-numeric connected seconds as the old service refused a bad decimal', () => {
    expect(reply(',"session_duration_seconds":-0.5')).toEqual(
      detail(
        '{"type":"greater_than_equal","loc":["body","session_duration_seconds"],"msg":"Input should be greater than or equal to 0","input":-0.5,"ctx":{"ge":0}}',
      ),
    );
    expect(reply(',"session_duration_seconds":"a while"')).toEqual(
      detail(
        '{"type":"decimal_parsing","loc":["body","session_duration_seconds"],"msg":"Input should be a valid decimal","input":"a while"}',
      ),
    );
    expect(reply(',"cached_image_input_tokens":1.5').body).toContain('"loc":["body","cached_image_input_tokens"]');
  });
});

describe('POST /api/usage/events/batch body', () => {
  it('locates errors at ["body", index, field]', () => {
    expect(wireResponse(batch, { body: jsonBody(`[{${base}},{${base},"quantity":-1}]`) })).toEqual(
      detail(
        '{"type":"greater_than_equal","loc":["body",1,"quantity"],"msg":"Input should be greater than or equal to 0","input":-1,"ctx":{"ge":0}}',
      ),
    );
  });

  it('refuses more than 1,000 events with too_long', () => {
    const events = Array.from({ length: 1001 }, () => '{}').join(',');
    const reply = wireResponse(batch, { body: jsonBody(`[${events}]`) });
    expect(JSON.parse(reply.body).detail).toEqual([
      {
        type: 'too_long',
        loc: ['body'],
        msg: 'List should have at most 1000 items after validation, not 1001',
        input: Array.from({ length: 1001 }, () => ({})),
        ctx: { field_type: 'List', max_length: 1000, actual_length: 1001 },
      },
    ]);
  });
});

describe('UsageEventBody is read off the schema', () => {
  it('types money as decimal text, timestamps as Date and the batch as a list of events', () => {
    expectTypeOf<UsageEventBody['quantity']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<UsageEventBody['timestamp']>().toEqualTypeOf<Date | undefined>();
    expectTypeOf<UsageEventBody['event_type']>().toEqualTypeOf<'stt_minutes' | 'llm_tokens' | 'tts_characters'>();
    expectTypeOf<UsageEventBody['input_tokens']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<UsageEventBatchBody>().toEqualTypeOf<UsageEventBody[]>();
  });
});
