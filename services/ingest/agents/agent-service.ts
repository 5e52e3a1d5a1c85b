import { randomUUID } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { agentEnvelope } from './agent-record.ts';
import { applyAgentUpdate, newAgent, type Agent, type AgentUpdate, type NewAgentInput } from './agent.ts';
import type { AgentStore } from './agent-store.ts';
import type { HistoryBackedAgentStore } from './history-backed-agent-store.ts';
import { changeQueue } from '../shared/keyed-queue.ts';
import type { NumberStore } from '../telephony/number-store.ts';
import { normalizePhoneNumber } from '../telephony/phone-number.ts';
import { liveStateRunner } from '../shared/live-state.ts';
import { assertActsFor, ownedBy } from '../../shared/auth/tenant.ts';

export interface AgentServiceDeps {
  readonly store: AgentStore & Pick<HistoryBackedAgentStore, 'getMany' | 'active'>;
  /** AGENTS_PER_TENANT (config.agentCaps.agentsPerTenant); absent: no cap. */
  readonly agentsPerTenant?: number;
  /** The numbers agents hold: an agent's phone_number is read from here, so it follows assign and release. */
  readonly numbers: Pick<NumberStore, 'get' | 'getMany' | 'holder' | 'holders'>;
  /** AUTH_MODE=on: a known agent's number is unique among its tenant's only (its scope is the tenant). */
  readonly tenantNumbers?: boolean;
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
export function createAgentService({
  store,
  numbers,
  sink,
  log,
  agentsPerTenant = Infinity,
  tenantNumbers = false,
  now = Date.now,
}: AgentServiceDeps) {
  const inTurn = changeQueue(() => 'agent');
  // A tenant's creates from this process run one at a time, so none passes the cap beside another.
  const tenantTurn = changeQueue(() => 'tenant');
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

  /** A 409 when the tenant holds its most active agents (`becoming`: an agent about to be active again). */
  async function assertUnderCap(userId: string, becoming: string | null): Promise<void> {
    const active = (await live(() => store.activeIds(userId))).filter((id) => id !== becoming);
    if (active.length >= agentsPerTenant)
      throw AppError.of(
        'CONFLICT',
        `This user has ${active.length} active agents, the most one user may hold (AGENTS_PER_TENANT=${agentsPerTenant}); delete one first`,
      );
  }

  /** How many phone numbers the user's active agents hold (NUMBERS_PER_TENANT counts them). */
  async function numbersHeld(userId: string): Promise<number> {
    const active = await live(() => store.activeIds(userId));
    const held = await live(() => numbers.getMany(active));
    return held.filter((number) => number.phone_number !== null).length;
  }

  async function createAgent(input: Omit<NewAgentInput, 'id'>): Promise<AgentView> {
    const agent = newAgent({ ...input, id: randomUUID() }, now());
    await sink.publish([agentEnvelope(agent, now())]);
    // Durable from here on: if the live store misses it, reads restore it from the history.
    await store
      .create(agent)
      .catch((error: unknown) => log.warn({ err: error, agent_id: agent.id }, 'agent_live_write_failed'));
    return { agent, phone_number: null };
  }

  return {
    /**
     * A bound credential (`tenant`) creates for its own tenant only; a tenant holding
     * `agentsPerTenant` active agents gets a 409 until it deletes one.
     */
    async create(input: Omit<NewAgentInput, 'id'>, tenant: string | null = null): Promise<AgentView> {
      assertActsFor(tenant, input.user_id, 'create an agent');
      return tenantTurn.run(input.user_id, async () => {
        await assertUnderCap(input.user_id, null);
        return createAgent(input);
      });
    },
    /**
     * `tenant` (a bound credential's): another tenant's agent is a 404, as an unknown one; an agent's
     * user never changes. Making a deleted agent active again counts against the cap as a create.
     */
    async update(id: string, update: AgentUpdate, tenant: string | null = null): Promise<AgentView> {
      const current = await owned(id, tenant);
      const apply = () => inTurn.run(id, async () => withNumber(await change(id, update)));
      if (update.is_active !== true || current.is_active) return apply();
      return tenantTurn.run(current.user_id, async () => {
        await assertUnderCap(current.user_id, id);
        return apply();
      });
    },
    /** DELETE: a soft delete, as the replaced service did. The agent still reads by id, inactive. */
    remove: async (id: string, tenant: string | null = null): Promise<void> => {
      if (tenant !== null) await owned(id, tenant);
      await inTurn.run(id, () => change(id, { is_active: false }));
    },
    get: async (id: string, tenant: string | null = null): Promise<AgentView> => withNumber(await owned(id, tenant)),
    /** The agent, or null when unknown (another tenant's, for a bound credential, is unknown too). */
    find: async (id: string, tenant: string | null = null): Promise<Agent | null> => {
      const agent = await live(() => store.get(id));
      return agent === null || (tenant !== null && agent.user_id !== tenant) ? null : agent;
    },
    numbersHeld,
    /** The user's active agents, newest first. */
    list: (userId: string): Promise<AgentView[]> =>
      live(async () => Promise.all((await store.active(userId)).map(withNumber))),
    /**
     * The active agent that holds this number (normalised as assign normalises it), of the tenant
     * named (`userId`: a bound credential's, or x-user-id); another tenant's is the same 404. None
     * named: the one active agent that holds it in any tenant, and a 409 asking for the tenant when
     * several tenants' agents hold it (only with tenantNumbers: otherwise a number has one holder).
     */
    lookup: (rawPhoneNumber: string, userId: string | null = null): Promise<Agent> =>
      live(async () => {
        const normalized = normalizePhoneNumber(rawPhoneNumber);
        const notFound = () => AppError.of('NOT_FOUND', 'No agent found for this phone number');
        if (!normalized.ok) throw notFound();
        const number = normalized.phone_number;
        if (userId !== null) {
          const holder =
            (tenantNumbers ? await numbers.holder(number, userId) : null) ?? (await numbers.holder(number));
          const agent = holder === null ? null : await store.get(holder);
          if (agent === null || !agent.is_active || agent.user_id !== userId) throw notFound();
          return agent;
        }
        const ids = tenantNumbers ? await numbers.holders(number) : [await numbers.holder(number)];
        const agents = (await store.getMany(ids.filter((id) => id !== null))).filter((agent) => agent.is_active);
        if (agents.length === 0) throw notFound();
        if (agents.length > 1)
          throw AppError.of(
            'CONFLICT',
            `Agents of several tenants hold ${number}; name the tenant (x-user-id) whose agent to look up`,
          );
        return agents[0]!;
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
