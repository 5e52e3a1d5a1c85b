import { AppError } from '../../shared/errors.ts';
import { jitteredDelay, retry } from '../../shared/retry.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { KeyedQueue } from '../shared/keyed-queue.ts';
import { createIngestRedisKeys, type IngestRedisKeys } from '../shared/redis-keys.ts';
import { LuaScript, unavailableOnError } from '../../shared/redis/redis-script.ts';
import { assertValidAgentRevision, type Agent } from './agent.ts';
import type { AgentMutation, AgentStore, AgentUpdateOutcome } from './agent-store.ts';

/** KEYS agent; ARGV version, agent JSON. */
const createScript = new LuaScript(
  'createAgent',
  1,
  `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'agent', ARGV[2])
return 1`,
);

/** KEYS agent; ARGV expected version, next version, next agent JSON. */
const compareAndSetScript = new LuaScript(
  'compareAndSetAgent',
  1,
  `
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'agent', ARGV[3])
return 1`,
);

/**
 * Agents shared by every ingest process: one hash { version, agent JSON } per agent, no TTL. An
 * update applies the mutation in this process and writes with a Lua compare-and-set on `version`,
 * deciding again when another process wrote first (at most 20 times, then DEPENDENCY_UNAVAILABLE).
 */
export class RedisAgentStore implements AgentStore {
  private readonly keys: IngestRedisKeys;
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    private readonly maxAttempts = 20,
  ) {
    this.keys = createIngestRedisKeys(keyPrefix);
  }

  async create(agent: Agent): Promise<void> {
    const created = await guard(() =>
      createScript.run(this.redis, [this.keys.agent(agent.id)], [agent.version, JSON.stringify(agent)]),
    );
    if (created !== 1) throw AppError.of('CONFLICT', `Agent ${agent.id} already exists`);
  }

  async get(id: string): Promise<Agent | null> {
    const json = await guard(() => this.redis.hget(this.keys.agent(id), 'agent'));
    return json === null ? null : (JSON.parse(json) as Agent);
  }

  update(id: string, mutate: AgentMutation): Promise<AgentUpdateOutcome> {
    return this.queue.run(id, () => this.compareAndSet(id, mutate));
  }

  private async compareAndSet(id: string, mutate: AgentMutation): Promise<AgentUpdateOutcome> {
    // null: another process wrote first, so the mutation is decided again on what it wrote.
    const outcome = await retry<AgentUpdateOutcome>(
      async () => {
        const before = await this.get(id);
        if (before === null) return { kind: 'not_found' };
        const after = mutate(before);
        if (after === null) return { kind: 'unchanged', agent: before };
        assertValidAgentRevision(before, after);
        const args = [before.version, after.version, JSON.stringify(after)];
        return (await guard(() => compareAndSetScript.run(this.redis, [this.keys.agent(id)], args))) === 1
          ? { kind: 'changed', before, after }
          : null;
      },
      { attempts: this.maxAttempts, delayMs: jitteredDelay },
    );
    if (outcome === null) throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Agent store is busy, try again');
    return outcome;
  }
}

function guard<T>(call: () => Promise<T>): Promise<T> {
  return unavailableOnError('Agent store', call);
}
