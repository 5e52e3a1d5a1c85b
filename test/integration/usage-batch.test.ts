import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate } from '../support/harness.ts';

describe('POST /api/usage/events/batch with rejected items on the embedded process', () => {
  let app: CallmeterProcess;
  let session: string;

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('batch').dataDir, LOG_LEVEL: 'warn' });
    session = (await call<{ id: string }>(app.url, 'POST', '/api/sessions/', { room_name: 'batch', user_id: 'tenant-b' })).body.id;
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('echoes Python ints, floats and NaN inputs of rejected items in Python JSON, beside the accepted ones', async () => {
    const id = randomUUID();
    const item = (quantity: string) => `{"session_id":"${session}","user_id":"tenant-b","provider":"resemble","event_type":"tts_characters","quantity":${quantity}}`;
    const body = `[{"event_id":"${id}","session_id":"${session}","user_id":"tenant-b","provider":"resemble","event_type":"tts_characters","quantity":3},${item('-1')},${item('-123456789012345678901234567890')},${item('-2.5')},${item('NaN')}]`;
    const response = await fetch(`${app.url}/api/usage/events/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const ge = (input: string) => `{"type":"greater_than_equal","loc":["body",INDEX,"quantity"],"msg":"Input should be greater than or equal to 0","input":${input},"ctx":{"ge":0}}`;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      `[{"index":0,"id":"${id}","status":"accepted"},` +
        `{"index":1,"id":null,"status":"rejected","errors":[${ge('-1').replace('INDEX', '1')}]},` +
        `{"index":2,"id":null,"status":"rejected","errors":[${ge('-123456789012345678901234567890').replace('INDEX', '2')}]},` +
        `{"index":3,"id":null,"status":"rejected","errors":[${ge('-2.5').replace('INDEX', '3')}]},` +
        `{"index":4,"id":null,"status":"rejected","errors":[{"type":"finite_number","loc":["body",4,"quantity"],"msg":"Input should be a finite number","input":null}]}]`,
    );
    expect((await call<{ event_count: number }>(app.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': 'tenant-b' })).body.event_count).toBe(1);
  });
});
