import type { NumberStore } from './number-store.ts';
import type { AgentNumber, AssignOutcome, AssignRequest, HeldNumber, ReleaseOutcome } from './number-rules.ts';
import { scopeOf } from './number-rules.ts';
import type { NumberHistory } from './number-history.ts';

/** The scope an agent's numbers are unique in ('' for all): the stored records do not carry it. */
export type NumberScopeOf = (agentId: string) => Promise<string>;

/**
 * Live state first, history second, as for sessions: before the live store decides, what it has
 * lost (an agent's number, or who holds a number) is put back from the latest stored state, in the
 * scope `scopeOfAgent` names for its agent (its tenant when numbers are unique per tenant).
 */
export class HistoryBackedNumberStore implements NumberStore {
  constructor(
    private readonly live: NumberStore,
    private readonly history: NumberHistory,
    private readonly scopeOfAgent: NumberScopeOf = async () => '',
  ) {}

  async get(agentId: string): Promise<AgentNumber | null> {
    return (await this.live.get(agentId)) ?? this.history.agent(agentId);
  }

  /** Live state's, and one history read for the agents it does not know (not one query per agent). */
  async getMany(agentIds: readonly string[]): Promise<AgentNumber[]> {
    const live = await this.live.getMany(agentIds);
    const known = new Set(live.map((number) => number.agent_id));
    return [...live, ...(await this.history.agents(agentIds.filter((id) => !known.has(id))))];
  }

  async assign(request: AssignRequest): Promise<AssignOutcome> {
    await this.restoreAgent(request.agent_id);
    const holder = await this.storedHolder(request.phone_number, scopeOf(request));
    if (holder !== null && holder !== request.agent_id) await this.restoreAgent(holder);
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
  async holder(phoneNumber: string, scope = ''): Promise<string | null> {
    return (await this.live.holder(phoneNumber, scope)) ?? this.storedHolder(phoneNumber, scope);
  }

  /** Live state's holders and the history's, less those live state shows with another number. */
  async holders(phoneNumber: string): Promise<string[]> {
    const [live, stored] = await Promise.all([this.live.holders(phoneNumber), this.current(phoneNumber)]);
    return [...new Set([...live, ...stored])];
  }

  /** Live state only: the assignment being undone was refused by the record path, so history never had it. */
  forget(held: HeldNumber): Promise<boolean> {
    return this.live.forget(held);
  }

  private async restoreAgent(agentId: string): Promise<void> {
    if ((await this.live.get(agentId)) !== null) return;
    const stored = await this.history.agent(agentId);
    if (stored?.phone_number == null || stored.provider === null || stored.assigned_at === null) return;
    const scope = await this.scopeOfAgent(agentId);
    await this.live.assign({
      agent_id: agentId,
      phone_number: stored.phone_number,
      provider: stored.provider,
      assigned_at: stored.assigned_at,
      ...(scope === '' ? {} : { scope }),
    });
  }

  /** The history's holder of the number in this scope, unless live state holds that agent with another number. */
  private async storedHolder(phoneNumber: string, scope: string): Promise<string | null> {
    for (const agentId of await this.current(phoneNumber))
      if ((await this.scopeOfAgent(agentId)) === scope) return agentId;
    return null;
  }

  /** The agents whose stored latest state holds the number, less those live state shows with another number. */
  private async current(phoneNumber: string): Promise<string[]> {
    const stored = await this.history.holdersOf(phoneNumber);
    const current = await Promise.all(
      stored.map(async ({ agent_id }) => {
        const live = await this.live.get(agent_id);
        return live === null || live.phone_number === phoneNumber ? agent_id : null;
      }),
    );
    return current.filter((id) => id !== null);
  }
}
