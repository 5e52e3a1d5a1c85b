import { AppError } from '../../shared/errors.ts';
import { jitteredDelay, retry } from '../../shared/retry.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { KeyedQueue } from '../shared/keyed-queue.ts';
import { createIngestRedisKeys, type IngestRedisKeys } from '../shared/redis-keys.ts';
import { LuaScript, unavailableOnError } from '../../shared/redis/redis-script.ts';
import { assertValidAgentRevision, type Agent } from './agent.ts';
import type { AgentMutation, AgentStore, AgentUpdateOutcome } from './agent-store.ts';

// The tenant's set of active agent ids follows each write, in the same script.
const INDEX = `
local function index(tenant_key, id, active)
  if active == '1' then redis.call('SADD', tenant_key, id) else redis.call('SREM', tenant_key, id) end
end`;

/** KEYS agent, tenant's active agents; ARGV version, agent JSON, id, active ('1' or '0'). */
const createScript = new LuaScript(
  'createAgent',
  2,
  `${INDEX}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'agent', ARGV[2])
index(KEYS[2], ARGV[3], ARGV[4])
return 1`,
);

/** KEYS agent, tenant's active agents; ARGV expected version, next version, next agent JSON, id, active ('1' or '0'). */
const compareAndSetScript = new LuaScript(
  'compareAndSetAgent',
  2,
  `${INDEX}
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'agent', ARGV[3])
index(KEYS[2], ARGV[4], ARGV[5])
return 1`,
);

/** KEYS agent, tenant's active agents; ARGV id. Indexes the agent if its stored version is active. */
const indexActiveScript = new LuaScript(
  'indexActiveAgent',
  2,
  `
local json = redis.call('HGET', KEYS[1], 'agent')
if json and cjson.decode(json).is_active == true then redis.call('SADD', KEYS[2], ARGV[1]) end
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
    const keys = [this.keys.agent(agent.id), this.keys.tenantAgents(agent.user_id)];
    const args = [agent.version, JSON.stringify(agent), agent.id, agent.is_active ? '1' : '0'];
    const created = await guard(() => createScript.run(this.redis, keys, args));
    if (created !== 1) throw AppError.of('CONFLICT', `Agent ${agent.id} already exists`);
  }

  async get(id: string): Promise<Agent | null> {
    const json = await guard(() => this.redis.hget(this.keys.agent(id), 'agent'));
    return json === null ? null : (JSON.parse(json) as Agent);
  }

  update(id: string, mutate: AgentMutation): Promise<AgentUpdateOutcome> {
    return this.queue.run(id, () => this.compareAndSet(id, mutate));
  }

  activeIds(userId: string): Promise<string[]> {
    return guard(() => this.redis.smembers(this.keys.tenantAgents(userId)));
  }

  async indexActive(agent: Agent): Promise<void> {
    const keys = [this.keys.agent(agent.id), this.keys.tenantAgents(agent.user_id)];
    await guard(() => indexActiveScript.run(this.redis, keys, [agent.id]));
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
        const keys = [this.keys.agent(id), this.keys.tenantAgents(after.user_id)];
        const args = [before.version, after.version, JSON.stringify(after), id, after.is_active ? '1' : '0'];
        return (await guard(() => compareAndSetScript.run(this.redis, keys, args))) === 1
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
