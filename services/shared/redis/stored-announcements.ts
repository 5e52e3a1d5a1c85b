import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';

/** Which tenants and sessions a stored batch touched: what live cost streams must read again. */
export interface StoredAnnouncement {
  readonly tenants: readonly string[];
  readonly sessions: readonly string[];
}

export type AnnouncementListener = (announcement: StoredAnnouncement) => void;

/**
 * The consumer says what it has just stored to every query process, so that a live stream reads
 * ClickHouse again only when something it shows may have changed. An announcement is a hint, never
 * the data: one lost (Redis down, a process subscribing late) delays a stream's next message until
 * the next batch of that tenant, and changes no cost.
 */
export interface StoredAnnouncements {
  publish(announcement: StoredAnnouncement): Promise<void>;
  subscribe(listener: AnnouncementListener): () => void;
  close(): Promise<void>;
}

export function announcementChannel(prefix: string): string {
  return `${prefix}stored-batches`;
}

/** The embedded mode: the writer and the streams share this process. */
export class MemoryAnnouncements implements StoredAnnouncements {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async publish(announcement: StoredAnnouncement): Promise<void> {
    this.emitter.emit('stored', announcement);
  }

  subscribe(listener: AnnouncementListener): () => void {
    this.emitter.on('stored', listener);
    return () => this.emitter.off('stored', listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/**
 * Redis pub/sub, so that every query process hears every consumer. A subscribed ioredis connection
 * takes no other command, hence its own connection, opened on the first subscriber.
 */
export class RedisAnnouncements implements StoredAnnouncements {
  private readonly local = new MemoryAnnouncements();
  private subscriber: Redis | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  async publish(announcement: StoredAnnouncement): Promise<void> {
    await this.redis.publish(announcementChannel(this.prefix), JSON.stringify(announcement));
  }

  subscribe(listener: AnnouncementListener): () => void {
    if (this.subscriber === null) this.subscriber = this.listen();
    return this.local.subscribe(listener);
  }

  async close(): Promise<void> {
    await this.local.close();
    await this.subscriber?.quit().catch(() => undefined);
    this.subscriber = null;
  }

  private listen(): Redis {
    const subscriber = this.redis.duplicate({ lazyConnect: false });
    const channel = announcementChannel(this.prefix);
    // ioredis subscribes again after a reconnect by itself.
    subscriber
      .subscribe(channel)
      .catch((error: unknown) => this.log.warn({ err: error }, 'announcements_subscribe_failed'));
    subscriber.on('error', (error: unknown) => this.log.warn({ err: error }, 'announcements_connection_error'));
    subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      try {
        void this.local.publish(JSON.parse(message) as StoredAnnouncement);
      } catch (error) {
        this.log.warn({ err: error }, 'announcement_unreadable');
      }
    });
    return subscriber;
  }
}

/** What a batch of stored rows announces: each tenant and session once. */
export function announcementOf(
  rows: readonly { readonly user_id: string; readonly session: string }[],
): StoredAnnouncement {
  return {
    tenants: [...new Set(rows.map((row) => row.user_id))],
    sessions: [...new Set(rows.map((row) => row.session))],
  };
}
