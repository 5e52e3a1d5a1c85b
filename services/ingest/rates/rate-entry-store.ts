import type { RateRecord } from '../../../schemas/records/rate.ts';
import { AppError } from '../../shared/errors.ts';
import type { Redis } from '../../shared/redis/client.ts';

/**
 * The latest version of each tenant rate entry as ingest wrote it, so that any ingest process can end an
 * entry (DELETE writes its next version) without waiting for the store: Redis shared by the ingest
 * processes, or memory in the embedded mode. ClickHouse (rate_entries) stays the durable copy, read when
 * an entry is not here (Redis flushed, or an entry from before this store).
 */
export interface RateEntryStore {
  save(record: RateRecord): Promise<void>;
  find(id: string): Promise<RateRecord | null>;
}

export class MemoryRateEntryStore implements RateEntryStore {
  private readonly entries = new Map<string, RateRecord>();

  async save(record: RateRecord): Promise<void> {
    const known = this.entries.get(record.id);
    if (known === undefined || known.version <= record.version) this.entries.set(record.id, record);
  }

  async find(id: string): Promise<RateRecord | null> {
    return this.entries.get(id) ?? null;
  }
}

/** One string key per entry, no TTL: a tenant has a few negotiated prices, not millions. */
export class RedisRateEntryStore implements RateEntryStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}rate-entry:${id}`;
  }

  async save(record: RateRecord): Promise<void> {
    await unavailable(() => this.redis.set(this.key(record.id), JSON.stringify(record)));
  }

  async find(id: string): Promise<RateRecord | null> {
    const text = await unavailable(() => this.redis.get(this.key(id)));
    return text === null ? null : (JSON.parse(text) as RateRecord);
  }
}

async function unavailable<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Rate store unavailable', { cause: error });
  }
}
