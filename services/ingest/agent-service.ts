import { randomUUID } from 'node:crypto';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { RecordSink } from '../shared/records/record-sink.ts';
import { agentEnvelope } from './agent-record.ts';
import { applyAgentUpdate, newAgent, type Agent, type AgentUpdate, type NewAgentInput } from './agents/agent.ts';
import type { AgentStore } from './agents/agent-store.ts';
import type { HistoryBackedAgentStore } from './history/history-backed-agent-store.ts';
import { changeQueue } from './shared/keyed-queue.ts';
import type { NumberStore } from './telephony/number-store.ts';
import { normalizePhoneNumber } from './telephony/phone-number.ts';
import { liveStateRunner } from './shared/live-state.ts';
import { assertActsFor, ownedBy } from '../shared/auth/tenant.ts';

export interface AgentServiceDeps {
  readonly store: AgentStore & Pick<HistoryBackedAgentStore, 'getMany' | 'active'>;
  /** The numbers agents hold: an agent's phone_number is read from here, so it follows assign and release. */
  readonly numbers: Pick<NumberStore, 'get' | 'holder'>;
  readonly sink: RecordSink;
  readonly log: Logger;
  readonly now?: () => number;
}

/** An agent with the number it holds now (null: none). */
export interface AgentView {
  readonly agent: Agent;
  readonly phone_number: string | null;
}

const NOT_FOUND = 'Agent not found';

/**
 * Agents as sessions are kept: a new agent is published before it enters the live store; an update
 * (and DELETE, which only sets is_active false) is applied atomically to the live store, published,
 * and reverted there when the record path refuses it. Changes of one agent from this process run one
 * at a time from apply to publish or revert, so a revert restores exactly what it replaced.
 */
export function createAgentService({ store, numbers, sink, log, now = Date.now }: AgentServiceDeps) {
  const inTurn = changeQueue(() => 'agent');
  const live = liveStateRunner(log, {
    event: 'agent_state_unavailable',
    detail: 'Agent state is unavailable; retry the request.',
  });
  const withNumber = async (agent: Agent): Promise<AgentView> => ({
    agent,
    phone_number: (await live(() => numbers.get(agent.id)))?.phone_number ?? null,
  });

  /** The agent, if `tenant` (when not null) owns it; else the 404 of an unknown agent. */
  async function owned(id: string, tenant: string | null): Promise<Agent> {
    const agent = await live(() => store.get(id));
    if (agent === null) throw AppError.of('NOT_FOUND', NOT_FOUND);
    return ownedBy(agent, tenant, NOT_FOUND);
  }

  async function change(id: string, update: AgentUpdate): Promise<Agent> {
    const at = now();
    const outcome = await live(() => store.update(id, (current) => applyAgentUpdate(current, update, at)));
    if (outcome.kind === 'not_found') throw AppError.of('NOT_FOUND', NOT_FOUND);
    if (outcome.kind === 'unchanged') return outcome.agent;
    const { before, after } = outcome;
    try {
      await sink.publish([agentEnvelope(after, now())]);
      return after;
    } catch (error) {
      await store
        .update(id, (current) =>
          current.version === after.version ? { ...before, version: current.version + 1 } : null,
        )
        .catch((revertError: unknown) => log.error({ err: revertError, agent_id: id }, 'agent_revert_failed'));
      throw error;
    }
  }

  return {
    /** A bound credential (`tenant`) creates for its own tenant only. */
    async create(input: Omit<NewAgentInput, 'id'>, tenant: string | null = null): Promise<AgentView> {
      assertActsFor(tenant, input.user_id, 'create an agent');
      const agent = newAgent({ ...input, id: randomUUID() }, now());
      await sink.publish([agentEnvelope(agent, now())]);
      // Durable from here on: if the live store misses it, reads restore it from the history.
      await store
        .create(agent)
        .catch((error: unknown) => log.warn({ err: error, agent_id: agent.id }, 'agent_live_write_failed'));
      return { agent, phone_number: null };
    },
    /** `tenant` (a bound credential's): another tenant's agent is a 404, as an unknown one; an agent's user never changes. */
    async update(id: string, update: AgentUpdate, tenant: string | null = null): Promise<AgentView> {
      if (tenant !== null) await owned(id, tenant);
      return inTurn.run(id, async () => withNumber(await change(id, update)));
    },
    /** DELETE: a soft delete, as the replaced service did. The agent still reads by id, inactive. */
    remove: async (id: string, tenant: string | null = null): Promise<void> => {
      if (tenant !== null) await owned(id, tenant);
      await inTurn.run(id, () => change(id, { is_active: false }));
    },
    get: async (id: string, tenant: string | null = null): Promise<AgentView> => withNumber(await owned(id, tenant)),
    /** The user's active agents, newest first. */
    list: (userId: string): Promise<AgentView[]> =>
      live(async () => Promise.all((await store.active(userId)).map(withNumber))),
    /** The active agent that holds this number (normalised as assign normalises it). */
    lookup: (rawPhoneNumber: string, tenant: string | null = null): Promise<Agent> =>
      live(async () => {
        const normalized = normalizePhoneNumber(rawPhoneNumber);
        const holder = normalized.ok ? await numbers.holder(normalized.phone_number) : null;
        const agent = holder === null ? null : await store.get(holder);
        if (agent === null || !agent.is_active || (tenant !== null && agent.user_id !== tenant))
          throw AppError.of('NOT_FOUND', 'No agent found for this phone number');
        return agent;
      }),
    /**
     * The names of these agents that exist: what a session that carries no agent_name is named. Best
     * effort: a session write already durable must not answer 503 (its retry would make a second
     * session) because a name could not be read, so an unavailable store names nobody.
     */
    names: async (ids: readonly string[]): Promise<Map<string, string>> => {
      try {
        return new Map((await store.getMany([...new Set(ids)])).map((agent) => [agent.id, agent.name]));
      } catch (error) {
        log.warn({ err: error }, 'agent_names_unavailable');
        return new Map();
      }
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;
