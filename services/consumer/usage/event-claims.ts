import type { Redis } from 'ioredis';

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
  /** Lets go of the claims `token` holds on these events (its round is stored); another token's claim stays. */
  release(eventKeys: readonly string[], token: string): Promise<void>;
}

/**
 * The default of USAGE_CLAIM_TTL_SECONDS: claims are released when their round is stored, so the TTL
 * only bounds what a round left behind (a process killed between its insert and the release, or a
 * release Redis refused). It must outlast the longest wait of a batch between its first try and its
 * replay, or a replay after a partial insert could leave out its own events.
 */
export const CLAIM_TTL_SECONDS = 7 * 24 * 3600;

// KEYS: one claim key per event; ARGV[1]: the token, ARGV[2]: the TTL. Returns 2 (fresh), 1 (kept), 0 (dropped).
const CLAIM_SCRIPT = `
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
return result`;

// KEYS: claim keys; ARGV[1]: the token. Deletes each key that this token holds, returns how many.
const RELEASE_SCRIPT = `
local released = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('UNLINK', key)
    released = released + 1
  end
end
return released`;

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
    const answers = (await this.redis.eval(
      CLAIM_SCRIPT,
      eventKeys.length,
      ...eventKeys.map(this.keyOf),
      token,
      this.ttlSeconds,
    )) as number[];
    eventKeys.forEach((id, i) => {
      if (answers[i]! >= 1) kept.add(id);
      if (answers[i] === 2) fresh.add(id);
    });
    return { kept, fresh };
  }

  async release(eventKeys: readonly string[], token: string): Promise<void> {
    for (let start = 0; start < eventKeys.length; start += KEYS_PER_CALL) {
      const part = eventKeys.slice(start, start + KEYS_PER_CALL);
      await this.redis.eval(RELEASE_SCRIPT, part.length, ...part.map(this.keyOf), token);
    }
  }
}
