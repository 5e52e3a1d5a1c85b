import type { RateRecord } from '../../../schemas/records/rate.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { LuaScript, unavailableOnError } from '../../shared/redis/redis-script.ts';

/**
 * The latest version of each tenant rate entry as ingest wrote it, so that any ingest process can end an
 * entry (DELETE writes its next version) without waiting for the store, and each tenant's entries not yet
 * ended, so that every ingest process holds a tenant to its cap at once, however fast it creates: Redis
 * shared by the ingest processes, or memory in the embedded mode. ClickHouse (rate_entries) stays the
 * durable copy, read when an entry is not here (Redis flushed, or an entry from before this store).
 */
export interface RateEntryStore {
  save(record: RateRecord): Promise<void>;
  find(id: string): Promise<RateRecord | null>;
  /**
   * Saves a new entry unless its tenant already holds `limit` entries not ended at `nowMs`: the count
   * with it, or null when refused (nothing saved). Checked and saved in one step, so that two creates at
   * once cannot both take the last place.
   */
  admit(record: RateRecord, limit: number, nowMs: number): Promise<number | null>;
  /** Gives back the place of an entry admitted whose record was then not published. */
  release(record: RateRecord): Promise<void>;
}

function endOf(record: RateRecord): number {
  return record.effective_to === null ? Number.POSITIVE_INFINITY : Date.parse(record.effective_to);
}

export class MemoryRateEntryStore implements RateEntryStore {
  private readonly entries = new Map<string, RateRecord>();
  /** Per tenant, each entry's end (epoch ms): those past it are dropped when the tenant is next counted. */
  private readonly ends = new Map<string, Map<string, number>>();

  async save(record: RateRecord): Promise<void> {
    const known = this.entries.get(record.id);
    if (known !== undefined && known.version > record.version) return;
    this.entries.set(record.id, record);
    this.endsOf(record.user_id).set(record.id, endOf(record));
  }

  async find(id: string): Promise<RateRecord | null> {
    return this.entries.get(id) ?? null;
  }

  async admit(record: RateRecord, limit: number, nowMs: number): Promise<number | null> {
    const ends = this.endsOf(record.user_id);
    for (const [id, end] of ends) if (end <= nowMs) ends.delete(id);
    if (!ends.has(record.id) && ends.size >= limit) return null;
    await this.save(record);
    return ends.size;
  }

  async release(record: RateRecord): Promise<void> {
    this.ends.get(record.user_id)?.delete(record.id);
  }

  private endsOf(userId: string): Map<string, number> {
    let ends = this.ends.get(userId);
    if (ends === undefined) this.ends.set(userId, (ends = new Map()));
    return ends;
  }
}

// KEYS: the entry, the tenant's set of entries scored by their end. ARGV: the record, its end, now, the limit, its id.
const ADMIT = new LuaScript(
  'callmeterAdmitRateEntry',
  2,
  `redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if not redis.call('ZSCORE', KEYS[2], ARGV[5]) and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return -1
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('SET', KEYS[1], ARGV[1])
return redis.call('ZCARD', KEYS[2])`,
);

/** One string key per entry and one sorted set per tenant (its entries not ended), no TTL: both bounded by the cap. */
export class RedisRateEntryStore implements RateEntryStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}rate-entry:${id}`;
  }

  private tenantKey(userId: string): string {
    return `${this.prefix}rate-entries-of:${userId}`;
  }

  async save(record: RateRecord): Promise<void> {
    await unavailableOnError('Rate store', () =>
      this.redis
        .multi()
        .set(this.key(record.id), JSON.stringify(record))
        .zadd(this.tenantKey(record.user_id), scoreOf(record), record.id)
        .exec(),
    );
  }

  async find(id: string): Promise<RateRecord | null> {
    const text = await unavailableOnError('Rate store', () => this.redis.get(this.key(id)));
    return text === null ? null : (JSON.parse(text) as RateRecord);
  }

  async admit(record: RateRecord, limit: number, nowMs: number): Promise<number | null> {
    const count = await unavailableOnError('Rate store', () =>
      ADMIT.run(
        this.redis,
        [this.key(record.id), this.tenantKey(record.user_id)],
        [JSON.stringify(record), scoreOf(record), nowMs, limit, record.id],
      ),
    );
    return Number(count) < 0 ? null : Number(count);
  }

  async release(record: RateRecord): Promise<void> {
    await unavailableOnError('Rate store', () => this.redis.zrem(this.tenantKey(record.user_id), record.id));
  }
}

function scoreOf(record: RateRecord): string {
  return record.effective_to === null ? '+inf' : String(Date.parse(record.effective_to));
}
