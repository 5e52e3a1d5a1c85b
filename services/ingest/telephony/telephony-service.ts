import { makeEnvelope } from '../../domain/records/index.ts';
import type { TelephonyNumberRecord } from '../../domain/records/index.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { changeQueue } from '../shared/keyed-queue.ts';
import {
  assignNumber,
  reassignNumber,
  releaseNumber,
  unassignNumber,
  type AssignNumberInput,
  type TelephonyDeps,
} from './number-commands.ts';
import type { HeldNumber } from './number-rules.ts';
import { normalizePhoneNumber } from './phone-number.ts';

export interface TelephonyServiceDeps extends TelephonyDeps {
  readonly sink: RecordSink;
  readonly now?: () => number;
}

/**
 * Assign and release are answered once their record is durable. If the record path refuses it,
 * the change is undone in the live store and at the carrier, and the client gets the 503.
 * A change holds its agent and its number from this process, in that order, from the store's
 * decision to the record (or the undo): nothing here builds on a change that may yet be undone,
 * and an undo finds the state its change left. Two changes in one failed send would otherwise
 * undo each other's undo (release, then assign, of one agent: the undone release re-assigns).
 * An undo restores the agent exactly: the released number with its own assigned_at, and an agent
 * that never held a number unknown again (404, not 200 with nulls).
 */
export function createTelephonyService({ store, provider, sink, now = Date.now }: TelephonyServiceDeps) {
  const inTurn = changeQueue((key) => (key.startsWith('agent:') ? 'agent' : 'number'));
  const holdingAgent = <T>(agentId: string, work: () => Promise<T>) => inTurn.run(`agent:${agentId}`, work);
  const holdingNumber = <T>(phoneNumber: string | null, work: () => Promise<T>) =>
    phoneNumber === null ? work() : inTurn.run(`number:${phoneNumber}`, work);

  // An assigned record's changed_at is the number's own assigned_at: that is what the history
  // reads back as assigned_at once live state has lost the number. version is the publish time.
  // async: a record that fails its schema (makeEnvelope throws) must reject, so the undo still runs.
  const publish = async (number: HeldNumber, status: TelephonyNumberRecord['status']) => {
    const at = now();
    const changedAt = new Date(status === 'assigned' ? number.assigned_at : at);
    const record: TelephonyNumberRecord = {
      agent_id: number.agent_id,
      phone_number: status === 'assigned' ? number.phone_number : null,
      provider: status === 'assigned' ? number.provider : null,
      status,
      changed_at: changedAt.toISOString(),
      version: at,
    };
    return sink.publish([makeEnvelope('telephony_number', number.agent_id, record, changedAt, new Date(at))]);
  };

  async function assign(input: AssignNumberInput): Promise<HeldNumber> {
    const assignment = await assignNumber({ store, provider }, input, now());
    await publish(assignment.held, 'assigned').catch(async (error: unknown) => {
      await unassignNumber({ store, provider }, assignment).catch(() => undefined);
      throw error;
    });
    return assignment.held;
  }

  async function release(agentId: string): Promise<HeldNumber> {
    const released = await releaseNumber({ store, provider }, agentId);
    await publish(released, 'released').catch(async (error: unknown) => {
      await reassignNumber({ store, provider }, released).catch(() => undefined);
      throw error;
    });
    return released;
  }

  return {
    assign(input: AssignNumberInput): Promise<HeldNumber> {
      // An invalid number holds nothing: assignNumber refuses it before touching the store.
      const normalized = normalizePhoneNumber(input.phone_number);
      return holdingAgent(input.agent_id, () =>
        holdingNumber(normalized.ok ? normalized.phone_number : null, () => assign(input)),
      );
    },
    release: (agentId: string): Promise<HeldNumber> =>
      holdingAgent(agentId, async () =>
        holdingNumber((await store.get(agentId))?.phone_number ?? null, () => release(agentId)),
      ),
    get: (agentId: string) => store.get(agentId),
  };
}

export type TelephonyService = ReturnType<typeof createTelephonyService>;
