import { AppError } from '../../shared/errors.ts';
import { jitteredDelay, retry } from '../../shared/retry.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { createIngestRedisKeys, type IngestRedisKeys } from '../shared/redis-keys.ts';
import { LuaScript, unavailableOnError } from '../../shared/redis/redis-script.ts';
import { decideAssign, decideRelease, scopeOf } from './number-rules.ts';
import type { AgentNumber, AssignOutcome, AssignRequest, HeldNumber, ReleaseOutcome } from './number-rules.ts';
import { DEFAULT_RELEASED_RETENTION_MS, type NumberStore, type NumberStoreOptions } from './number-store.ts';

// The scripts only write when the agent and the number are still as read, so the rules stay in
// number-rules.ts (shared with the memory store) and a race makes the loser decide again.
// The assign script also checks whether the agent is known at all, as read: an undo of the
// assignment restores exactly that (forget for an agent that never held a number).
/** KEYS agent, number (of its scope), number's holders; ARGV agent_id, expected held number ('' none), expected holder ('' none), number, provider, assigned_at, expected known ('1' or '0'), scope. */
const assignScript = new LuaScript(
  'assignNumber',
  3,
  `
local held = redis.call('HGET', KEYS[1], 'phone_number') or ''
local holder = redis.call('GET', KEYS[2]) or ''
local known = tostring(redis.call('HEXISTS', KEYS[1], 'agent_id'))
if held ~= ARGV[2] or holder ~= ARGV[3] or known ~= ARGV[7] then return 0 end
redis.call('HSET', KEYS[1], 'agent_id', ARGV[1], 'phone_number', ARGV[4], 'provider', ARGV[5], 'assigned_at', ARGV[6], 'scope', ARGV[8])
redis.call('PERSIST', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`,
);

// A held number never expires; an agent that released its number is forgotten a retention later.
/** KEYS agent, number (of its scope), number's holders; ARGV agent_id, expected held number, released retention (ms). */
const releaseScript = new LuaScript(
  'releaseNumber',
  3,
  `
if (redis.call('HGET', KEYS[1], 'phone_number') or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'phone_number', '', 'provider', '', 'assigned_at', '', 'scope', '')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('SREM', KEYS[3], ARGV[1])
return 1`,
);

/** KEYS agent, number (of its scope), number's holders; ARGV agent_id, expected held number. */
const forgetScript = new LuaScript(
  'forgetNumber',
  3,
  `
if (redis.call('HGET', KEYS[1], 'phone_number') or '') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('SREM', KEYS[3], ARGV[1])
return 1`,
);

/** Numbers shared by every ingest process: agent hash + number -> agent pointer, written by compare-and-set. */
export class RedisNumberStore implements NumberStore {
  private readonly keys: IngestRedisKeys;
  private readonly releasedRetentionMs: number;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    options: NumberStoreOptions = {},
    private readonly maxAttempts = 20,
  ) {
    this.keys = createIngestRedisKeys(keyPrefix);
    this.releasedRetentionMs = options.releasedRetentionMs ?? DEFAULT_RELEASED_RETENTION_MS;
  }

  assign(request: AssignRequest): Promise<AssignOutcome> {
    const keys = [
      this.keys.telephonyAgent(request.agent_id),
      this.numberKey(scopeOf(request), request.phone_number),
      this.keys.numberHolders(request.phone_number),
    ];
    return this.retry(async () => {
      // One MULTI reads both keys at one instant, so a refusal is decided on a consistent snapshot.
      const [agent, holder] = await this.snapshot(request.agent_id, keys[1]!);
      const outcome = decideAssign(agent, holder, request);
      if (outcome.kind !== 'assigned') return outcome;
      const args = [
        request.agent_id,
        agent?.phone_number ?? '',
        holder ?? '',
        request.phone_number,
        request.provider,
        request.assigned_at,
        agent === null ? '0' : '1',
        scopeOf(request),
      ];
      return (await guard(() => assignScript.run(this.redis, keys, args))) === 1 ? outcome : null;
    });
  }

  release(agentId: string): Promise<ReleaseOutcome> {
    return this.retry(async () => {
      const outcome = decideRelease(await this.get(agentId));
      if (outcome.kind !== 'released') return outcome;
      const { released } = outcome;
      const keys = [
        this.keys.telephonyAgent(agentId),
        this.numberKey(scopeOf(released), released.phone_number),
        this.keys.numberHolders(released.phone_number),
      ];
      return (await guard(() =>
        releaseScript.run(this.redis, keys, [agentId, outcome.released.phone_number, this.releasedRetentionMs]),
      )) === 1
        ? outcome
        : null;
    });
  }

  async forget(held: HeldNumber): Promise<boolean> {
    const keys = [
      this.keys.telephonyAgent(held.agent_id),
      this.numberKey(scopeOf(held), held.phone_number),
      this.keys.numberHolders(held.phone_number),
    ];
    return (await guard(() => forgetScript.run(this.redis, keys, [held.agent_id, held.phone_number]))) === 1;
  }

  async getMany(agentIds: readonly string[]): Promise<AgentNumber[]> {
    return (await Promise.all(agentIds.map((id) => this.get(id)))).filter((number) => number !== null);
  }

  async get(agentId: string): Promise<AgentNumber | null> {
    return toAgentNumber(await guard(() => this.redis.hgetall(this.keys.telephonyAgent(agentId))));
  }

  holder(phoneNumber: string, scope = ''): Promise<string | null> {
    return guard(() => this.redis.get(this.numberKey(scope, phoneNumber)));
  }

  /**
   * The holders' set, and the unscoped pointer: a number assigned before numbers had scopes has the
   * pointer only (an in-place upgrade keeps it, and its release takes both).
   */
  async holders(phoneNumber: string): Promise<string[]> {
    const [members, unscoped] = await Promise.all([
      guard(() => this.redis.smembers(this.keys.numberHolders(phoneNumber))),
      this.holder(phoneNumber),
    ]);
    return [...new Set(unscoped === null ? members : [...members, unscoped])];
  }

  private numberKey(scope: string, phoneNumber: string): string {
    return scope === '' ? this.keys.telephonyNumber(phoneNumber) : this.keys.tenantNumber(scope, phoneNumber);
  }

  private async snapshot(agentId: string, numberKey: string): Promise<[AgentNumber | null, string | null]> {
    const replies = await guard(() =>
      this.redis.multi().hgetall(this.keys.telephonyAgent(agentId)).get(numberKey).exec(),
    );
    const failed = replies?.find(([error]) => error !== null);
    if (!replies || failed)
      throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Number store unavailable', { cause: failed?.[0] });
    return [toAgentNumber(replies[0]![1] as Record<string, string>), replies[1]![1] as string | null];
  }

  /** `attempt` returns null when its write lost a race; it then decides again on fresh state. */
  private async retry<T>(attempt: () => Promise<T | null>): Promise<T> {
    const outcome = await retry(attempt, { attempts: this.maxAttempts, delayMs: jitteredDelay });
    if (outcome === null) throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Number store is busy, try again');
    return outcome;
  }
}

function toAgentNumber(hash: Record<string, string>): AgentNumber | null {
  if (hash.agent_id === undefined) return null;
  const held = hash.phone_number !== undefined && hash.phone_number !== '';
  return {
    agent_id: hash.agent_id,
    phone_number: held ? hash.phone_number! : null,
    provider: held ? (hash.provider ?? null) : null,
    assigned_at: held && hash.assigned_at ? Number(hash.assigned_at) : null,
    ...(held && hash.scope ? { scope: hash.scope } : {}),
  };
}

function guard<T>(call: () => Promise<T>): Promise<T> {
  return unavailableOnError('Number store', call);
}
