import type { NumberStore } from '../telephony/number-store.ts';
import type {
  AgentNumber,
  AssignOutcome,
  AssignRequest,
  HeldNumber,
  ReleaseOutcome,
} from '../telephony/number-rules.ts';
import type { NumberHistory } from './number-history.ts';

/**
 * Live state first, history second, as for sessions: before the live store decides, what it has
 * lost (an agent's number, or who holds a number) is put back from the latest stored state.
 */
export class HistoryBackedNumberStore implements NumberStore {
  constructor(
    private readonly live: NumberStore,
    private readonly history: NumberHistory,
  ) {}

  async get(agentId: string): Promise<AgentNumber | null> {
    return (await this.live.get(agentId)) ?? this.history.agent(agentId);
  }

  async assign(request: AssignRequest): Promise<AssignOutcome> {
    await this.restoreAgent(request.agent_id);
    const holder = await this.history.holderOf(request.phone_number);
    if (holder !== null && holder.agent_id !== request.agent_id) await this.restoreAgent(holder.agent_id);
    return this.live.assign(request);
  }

  async release(agentId: string): Promise<ReleaseOutcome> {
    const outcome = await this.live.release(agentId);
    if (outcome.kind !== 'agent_unknown') return outcome;
    const stored = await this.history.agent(agentId);
    if (stored === null) return outcome;
    if (stored.phone_number === null) return { kind: 'no_number', detail: 'Agent has no assigned phone number' };
    await this.restoreAgent(agentId);
    return this.live.release(agentId);
  }

  /**
   * Live state first; a number live state does not know is looked up in the history, unless live
   * state holds that agent with another number (then the history is behind it).
   */
  async holder(phoneNumber: string): Promise<string | null> {
    const live = await this.live.holder(phoneNumber);
    if (live !== null) return live;
    const stored = await this.history.holderOf(phoneNumber);
    if (stored === null) return null;
    const current = await this.live.get(stored.agent_id);
    return current === null || current.phone_number === phoneNumber ? stored.agent_id : null;
  }

  /** Live state only: the assignment being undone was refused by the record path, so history never had it. */
  forget(held: HeldNumber): Promise<boolean> {
    return this.live.forget(held);
  }

  private async restoreAgent(agentId: string): Promise<void> {
    if ((await this.live.get(agentId)) !== null) return;
    const stored = await this.history.agent(agentId);
    if (stored?.phone_number == null || stored.provider === null || stored.assigned_at === null) return;
    await this.live.assign({
      agent_id: agentId,
      phone_number: stored.phone_number,
      provider: stored.provider,
      assigned_at: stored.assigned_at,
    });
  }
}
