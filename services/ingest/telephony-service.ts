import { makeEnvelope } from '../shared/records/envelope.ts';
import type { TelephonyNumberRecord } from '../shared/records/payloads.ts';
import type { RecordSink } from '../shared/records/record-sink.ts';
import { assignNumber, releaseNumber, type AssignNumberInput, type TelephonyDeps } from './telephony/number-commands.ts';
import type { AgentNumber, HeldNumber } from './telephony/number-rules.ts';

export interface TelephonyServiceDeps extends TelephonyDeps {
  readonly sink: RecordSink;
  readonly now?: () => number;
}

/**
 * Assign and release are answered once their record is durable. If the record path refuses it,
 * the change is undone in the live store and at the carrier, and the client gets the 503.
 */
export function createTelephonyService({ store, provider, sink, now = Date.now }: TelephonyServiceDeps) {
  const publish = (number: AgentNumber, status: TelephonyNumberRecord['status']) => {
    const at = now();
    const record: TelephonyNumberRecord = { agent_id: number.agent_id, phone_number: status === 'assigned' ? number.phone_number : null, provider: status === 'assigned' ? number.provider : null, status, changed_at: new Date(at).toISOString(), version: at };
    return sink.publish([makeEnvelope('telephony_number', number.agent_id, record, new Date(at), new Date(at))]);
  };

  return {
    async assign(input: AssignNumberInput): Promise<HeldNumber> {
      const held = await assignNumber({ store, provider }, input, now());
      await publish(held, 'assigned').catch(async (error: unknown) => {
        await releaseNumber({ store, provider }, held.agent_id).catch(() => undefined);
        throw error;
      });
      return held;
    },
    async release(agentId: string): Promise<HeldNumber> {
      const released = await releaseNumber({ store, provider }, agentId);
      await publish(released, 'released').catch(async (error: unknown) => {
        await assignNumber({ store, provider }, released, now()).catch(() => undefined);
        throw error;
      });
      return released;
    },
    get: (agentId: string) => store.get(agentId),
  };
}

export type TelephonyService = ReturnType<typeof createTelephonyService>;
