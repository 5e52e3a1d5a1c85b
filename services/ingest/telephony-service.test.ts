import { describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.ts';
import { MicroBatcher } from '../shared/micro-batcher.ts';
import type { Envelope } from '../shared/records/envelope.ts';
import type { RecordSink } from '../shared/records/record-sink.ts';
import { createTelephonyService } from './telephony-service.ts';
import { MemoryNumberStore } from './telephony/memory-number-store.ts';
import { RecordingTelephonyProvider } from './telephony/telephony-provider.ts';

const N0 = '+15551230001';
const N1 = '+15551230002';

/** A record sink that micro-batches like the Kafka one; it refuses every flush while `refusing`. */
function makeService() {
  const state = { refusing: false };
  const flushes: Envelope[][] = [];
  const batcher = new MicroBatcher<Envelope>(async (records) => {
    flushes.push(records);
    if (state.refusing) throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable');
  });
  const sink: RecordSink = { publish: (envelopes) => batcher.submit(envelopes) };
  const store = new MemoryNumberStore();
  const service = createTelephonyService({ store, provider: new RecordingTelephonyProvider(), sink });
  return { service, store, state, flushes };
}

const codeOf = (result: PromiseSettledResult<unknown>) => (result.status === 'rejected' ? (result.reason as AppError).code : 'OK');

describe('telephony service', () => {
  it('undoes a refused release of an agent even when its next assign was sent with it', async () => {
    const { service, store, state } = makeService();
    await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    state.refusing = true;
    const results = await Promise.allSettled([service.release('agent-1'), service.assign({ agent_id: 'agent-1', phone_number: N1, provider: 'twilio' })]);
    expect(results.map(codeOf)).toEqual(['DEPENDENCY_UNAVAILABLE', 'BAD_REQUEST']);
    expect((await store.get('agent-1'))?.phone_number).toBe(N0);
  });

  it('undoes a refused release even when another agent took the number in the same send', async () => {
    const { service, store, state } = makeService();
    await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    state.refusing = true;
    const results = await Promise.allSettled([service.release('agent-1'), service.assign({ agent_id: 'agent-2', phone_number: ' +1 555 123 0001', provider: 'twilio' })]);
    expect(results.map(codeOf)).toEqual(['DEPENDENCY_UNAVAILABLE', 'CONFLICT']);
    expect((await store.get('agent-1'))?.phone_number).toBe(N0);
    expect(await store.get('agent-2')).toBeNull();
  });

  it('sends changes of different agents and numbers together', async () => {
    const { service, flushes } = makeService();
    await Promise.all([
      service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' }),
      service.assign({ agent_id: 'agent-2', phone_number: N1, provider: 'twilio' }),
    ]);
    expect(flushes.map((records) => records.length)).toEqual([2]);
    await expect(service.release('agent-1')).resolves.toMatchObject({ phone_number: N0 });
  });
});
