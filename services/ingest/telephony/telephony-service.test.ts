import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { MicroBatcher } from '../../shared/micro-batcher.ts';
import type { Envelope } from '../../domain/records/index.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { createTelephonyService } from './telephony-service.ts';
import { MemoryNumberStore } from './memory-number-store.ts';
import { RecordingTelephonyProvider } from './telephony-provider.ts';

const N0 = '+15551230001';
const N1 = '+15551230002';

/** A record sink that micro-batches like the Kafka one; it refuses every flush while `refusing`. A clock that moves 1 ms a read. */
function makeService() {
  const state = { refusing: false };
  const flushes: Envelope[][] = [];
  const batcher = new MicroBatcher<Envelope>(async (records) => {
    flushes.push(records);
    if (state.refusing) throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable');
  });
  const sink: RecordSink = { publish: (envelopes) => batcher.submit(envelopes) };
  const store = new MemoryNumberStore();
  let clock = Date.UTC(2026, 10, 22);
  const provider = new RecordingTelephonyProvider();
  const service = createTelephonyService({ store, provider, sink, now: () => (clock += 1) });
  return { service, store, provider, state, flushes };
}

const codeOf = (result: PromiseSettledResult<unknown>) =>
  result.status === 'rejected' ? (result.reason as AppError).code : 'OK';

describe('telephony service', () => {
  it('undoes a refused release of an agent even when its next assign was sent with it', async () => {
    const { service, store, state } = makeService();
    await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    state.refusing = true;
    const results = await Promise.allSettled([
      service.release('agent-1'),
      service.assign({ agent_id: 'agent-1', phone_number: N1, provider: 'twilio' }),
    ]);
    expect(results.map(codeOf)).toEqual(['DEPENDENCY_UNAVAILABLE', 'BAD_REQUEST']);
    expect((await store.get('agent-1'))?.phone_number).toBe(N0);
  });

  it('undoes a refused release even when another agent took the number in the same send', async () => {
    const { service, store, state } = makeService();
    await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    state.refusing = true;
    const results = await Promise.allSettled([
      service.release('agent-1'),
      service.assign({ agent_id: 'agent-2', phone_number: ' +1 555 123 0001', provider: 'twilio' }),
    ]);
    expect(results.map(codeOf)).toEqual(['DEPENDENCY_UNAVAILABLE', 'CONFLICT']);
    expect((await store.get('agent-1'))?.phone_number).toBe(N0);
    expect(await store.get('agent-2')).toBeNull();
  });

  it('undoes an assign whose record its schema refuses, so the number is not left held', async () => {
    const { service, store, flushes } = makeService();
    await expect(service.assign({ agent_id: 'a'.repeat(600), phone_number: N0, provider: 'twilio' })).rejects.toThrow(
      /refusing to publish an invalid telephony_number record/,
    );
    expect(await store.get('a'.repeat(600))).toBeNull();
    expect(flushes).toEqual([]);
    await expect(service.assign({ agent_id: 'agent-2', phone_number: N0, provider: 'twilio' })).resolves.toMatchObject({
      phone_number: N0,
    });
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

  it('publishes an assigned number with its own assigned_at as changed_at, which is what history reads back', async () => {
    const { service, flushes } = makeService();
    const held = await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    expect(flushes.flat().map((record) => record.payload)).toMatchObject([
      { status: 'assigned', phone_number: N0, changed_at: new Date(held.assigned_at).toISOString() },
    ]);
  });

  it('a refused release leaves the number exactly as held, with its own assigned_at', async () => {
    const { service, store, state } = makeService();
    const held = await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    state.refusing = true;
    await expect(service.release('agent-1')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(await store.get('agent-1')).toEqual(held);
  });

  it('a refused assign of an agent that never held a number leaves it unknown and the number free', async () => {
    const { service, store, provider, state } = makeService();
    state.refusing = true;
    await expect(service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' })).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
    expect(await store.get('agent-1')).toBeNull();
    await expect(service.release('agent-1')).rejects.toMatchObject({ code: 'NOT_FOUND', detail: 'Agent not found' });
    expect(provider.calls.map((call) => call.operation)).toEqual(['assign', 'release']);
    state.refusing = false;
    await expect(service.assign({ agent_id: 'agent-2', phone_number: N0, provider: 'twilio' })).resolves.toMatchObject({
      agent_id: 'agent-2',
    });
  });

  it('a refused assign of an agent that released its number leaves it known with no number', async () => {
    const { service, store, state } = makeService();
    await service.assign({ agent_id: 'agent-1', phone_number: N0, provider: 'twilio' });
    await service.release('agent-1');
    state.refusing = true;
    await expect(service.assign({ agent_id: 'agent-1', phone_number: N1, provider: 'twilio' })).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
    expect(await store.get('agent-1')).toEqual({
      agent_id: 'agent-1',
      phone_number: null,
      provider: null,
      assigned_at: null,
    });
    await expect(service.release('agent-1')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
