import { Redis } from 'ioredis';

/** Redis's own figures, in MiB and keys: the live state callmeter keeps outside its processes. */
export interface RedisMemory {
  readonly usedMb: number;
  readonly keys: number;
}

/**
 * The soak's view of the Redis that ingest and the consumer share: its memory and key count at each
 * sample, and at the end how many keys each family holds (key names with their ids left out).
 */
export class RedisWatch {
  private constructor(private readonly redis: Redis) {}

  static connect(url: string): RedisWatch {
    return new RedisWatch(new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 }));
  }

  async memory(): Promise<RedisMemory> {
    const info = await this.redis.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
    return { usedMb: Math.round((used / 2 ** 20) * 10) / 10, keys: await this.redis.dbsize() };
  }

  /** Keys by family: `callmeter:usage-claim:<uuid>:soak` counts as `callmeter:usage-claim:{id}:soak`. */
  async keyFamilies(): Promise<Record<string, number>> {
    const families: Record<string, number> = {};
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'COUNT', 10_000);
      for (const key of keys) {
        const family = key
          .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '{id}')
          .replace(/soak-\d+-\d+/g, '{room}');
        families[family] = (families[family] ?? 0) + 1;
      }
      cursor = next;
    } while (cursor !== '0');
    return families;
  }

  close(): void {
    this.redis.disconnect();
  }
}
