import type { Redis } from 'ioredis';
import { LuaScript } from '../../shared/redis/redis-script.ts';

/**
 * Which events of a batch are new, each named by its eventKey (tenant and event id: an event id
 * deduplicates within its tenant only). An event is claimed by the first batch token that holds it
 * while that batch is unstored; that batch (and any replay of it, which has the same token) keeps it,
 * any other batch drops it as a client retry. Once the batch's round is stored its claims are
 * released: a later copy is then found by the stored-id lookup, so Redis holds the events of the
 * rounds in flight, never the history. `fresh` lists the ids claimed just now, which nobody held.
 */
export interface EventClaims {
  claim(
    eventKeys: readonly string[],
    token: string,
  ): Promise<{ readonly kept: ReadonlySet<string>; readonly fresh: ReadonlySet<string> }>;
  /** Lets go of the claims each token holds on its events (their round is stored); another token's claim stays. */
  release(held: readonly HeldClaims[]): Promise<void>;
}

/** The events whose claims one batch token holds. */
export interface HeldClaims {
  readonly token: string;
  readonly keys: readonly string[];
}

/**
 * The default of USAGE_CLAIM_TTL_SECONDS: claims are released when their round is stored, so the TTL
 * only bounds what a round left behind (a process killed between its insert and the release, or a
 * release Redis refused). It must outlast the longest wait of a batch between its first try and its
 * replay, or a replay after a partial insert could leave out its own events.
 */
export const CLAIM_TTL_SECONDS = 7 * 24 * 3600;

// KEYS: one claim key per event; ARGV[1]: the token, ARGV[2]: the TTL. Returns 2 (fresh), 1 (kept), 0 (dropped).
const claimScript = new LuaScript(
  'claimUsageEvents',
  'each-call',
  `
local result = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'EX', ARGV[2]) then
    result[i] = 2
  elseif redis.call('GET', key) == ARGV[1] then
    result[i] = 1
  else
    result[i] = 0
  end
end
return result`,
);

// KEYS: claim keys; ARGV: token, count pairs, each token holding the next count keys. Deletes each key that
// its token holds (a compare and delete, which Redis 7 has no single command for), returns how many.
const releaseScript = new LuaScript(
  'releaseUsageClaims',
  'each-call',
  `
local released = 0
local k = 0
for t = 1, #ARGV, 2 do
  for _ = 1, tonumber(ARGV[t + 1]) do
    k = k + 1
    if redis.call('GET', KEYS[k]) == ARGV[t] then
      redis.call('UNLINK', KEYS[k])
      released = released + 1
    end
  end
end
return released`,
);

/** How many keys one script call takes: a round may hold tens of thousands of events. */
const KEYS_PER_CALL = 5_000;

export class RedisEventClaims implements EventClaims {
  constructor(
    private readonly redis: Redis,
    private readonly keyOf: (eventKey: string) => string,
    private readonly ttlSeconds: number = CLAIM_TTL_SECONDS,
  ) {}

  async claim(eventKeys: readonly string[], token: string) {
    const kept = new Set<string>();
    const fresh = new Set<string>();
    if (eventKeys.length === 0) return { kept, fresh };
    const answers = (await claimScript.run(this.redis, eventKeys.map(this.keyOf), [
      token,
      this.ttlSeconds,
    ])) as number[];
    eventKeys.forEach((id, i) => {
      if (answers[i]! >= 1) kept.add(id);
      if (answers[i] === 2) fresh.add(id);
    });
    return { kept, fresh };
  }

  /** The claims of every token in one script call (one per KEYS_PER_CALL keys), none for no claims. */
  async release(held: readonly HeldClaims[]): Promise<void> {
    for (const part of callsOf(held)) {
      const keys = part.flatMap(({ keys }) => keys.map(this.keyOf));
      await releaseScript.run(
        this.redis,
        keys,
        part.flatMap(({ token, keys }) => [token, keys.length]),
      );
    }
  }
}

/** The held claims cut into script calls of at most KEYS_PER_CALL keys, a token's keys split where a call ends. */
function callsOf(held: readonly HeldClaims[]): HeldClaims[][] {
  const calls: HeldClaims[][] = [];
  let call: HeldClaims[] = [];
  let size = 0;
  for (const { token, keys } of held) {
    for (let start = 0; start < keys.length;) {
      const part = keys.slice(start, start + KEYS_PER_CALL - size);
      call.push({ token, keys: part });
      start += part.length;
      size += part.length;
      if (size === KEYS_PER_CALL) {
        calls.push(call);
        call = [];
        size = 0;
      }
    }
  }
  if (size > 0) calls.push(call);
  return calls;
}
