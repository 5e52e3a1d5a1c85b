import type { Redis } from 'ioredis';

/**
 * Which events of a batch are new, each named by its eventKey (tenant and event id: an event id
 * deduplicates within its tenant only). An event is claimed by the first batch token that holds it;
 * that batch (and any replay of it, which has the same token) keeps it, any other batch drops it as
 * a client retry. The claim is a decision that a replay repeats, so a crash between claiming and
 * storing changes nothing. `fresh` lists the ids claimed just now, which nobody had claimed before.
 */
export interface EventClaims {
  claim(
    eventKeys: readonly string[],
    token: string,
  ): Promise<{ readonly kept: ReadonlySet<string>; readonly fresh: ReadonlySet<string> }>;
}

/**
 * The default of USAGE_CLAIM_TTL_SECONDS: long enough to cover any client retry and any outage during
 * which a batch waits unstored; older duplicates are caught by the stored-id check. Each claim takes
 * about 520 bytes of Redis: size Redis for rate × TTL claims (README, Capacity plan).
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
}
