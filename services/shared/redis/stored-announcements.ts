import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';

/** Which tenants and sessions a stored batch touched: what live cost streams must read again. */
export interface StoredAnnouncement {
  readonly tenants: readonly string[];
  readonly sessions: readonly string[];
  /**
   * The agents whose records the batch stored. Announced only by the embedded path for now
   * (services/main.ts): the consumer announces usage and sessions, so through Kafka this is absent.
   */
  readonly agents?: readonly string[];
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
  /**
   * Whether every batch stored from now on will be announced to this process's listeners: false until
   * the subscription is confirmed and while its connection is down. What is kept on the strength of
   * announcements (the query service's answer cache) holds only while this is true.
   */
  listening(): boolean;
  /** Told each time announcements may have been lost (the subscription's connection closed). */
  onMissed(listener: () => void): () => void;
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

  /** Published and heard in one process: nothing can be lost on the way. */
  listening(): boolean {
    return true;
  }

  onMissed(listener: () => void): () => void {
    this.emitter.on('missed', listener);
    return () => this.emitter.off('missed', listener);
  }

  /** For a transport in front of this one: its listeners are told that announcements may have been lost. */
  missed(): void {
    this.emitter.emit('missed');
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
  private subscribed = false;
  /** This process's mark on what it publishes, so that it does not hear its own announcements twice. */
  private readonly origin = randomUUID();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  async publish(announcement: StoredAnnouncement): Promise<void> {
    // Heard in this process at once, as in the embedded mode: a query service beside the writer drops
    // what the batch changed before the writer goes on (commits, answers), not a Redis round trip later.
    await this.local.publish(announcement);
    await this.redis.publish(
      announcementChannel(this.prefix),
      JSON.stringify({ ...announcement, origin: this.origin } satisfies Sent),
    );
  }

  subscribe(listener: AnnouncementListener): () => void {
    if (this.subscriber === null) this.subscriber = this.listen();
    return this.local.subscribe(listener);
  }

  listening(): boolean {
    return this.subscribed;
  }

  onMissed(listener: () => void): () => void {
    return this.local.onMissed(listener);
  }

  async close(): Promise<void> {
    await this.local.close();
    await this.subscriber?.quit().catch(() => undefined);
    this.subscriber = null;
    this.subscribed = false;
  }

  private listen(): Redis {
    const subscriber = this.redis.duplicate({ lazyConnect: false });
    const channel = announcementChannel(this.prefix);
    // Subscribed on every (re)connection, and listening only once Redis confirmed it: what is published
    // before the confirmation does not reach this connection. (ioredis subscribes again by itself too;
    // a second SUBSCRIBE to the same channel changes nothing.)
    subscriber.on('ready', () => {
      subscriber
        .subscribe(channel)
        .then(() => (this.subscribed = subscriber.status === 'ready' && this.subscriber === subscriber))
        .catch((error: unknown) => this.log.warn({ err: error }, 'announcements_subscribe_failed'));
    });
    // Whatever was published while the connection was down is lost to this process.
    subscriber.on('close', () => {
      if (!this.subscribed) return;
      this.subscribed = false;
      this.local.missed();
    });
    subscriber.on('error', (error: unknown) => this.log.warn({ err: error }, 'announcements_connection_error'));
    subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      try {
        const { origin, ...announcement } = JSON.parse(message) as Sent;
        if (origin !== this.origin) void this.local.publish(announcement);
      } catch (error) {
        this.log.warn({ err: error }, 'announcement_unreadable');
      }
    });
    return subscriber;
  }
}

/** An announcement on the channel, with the process that published it (absent from older publishers). */
interface Sent extends StoredAnnouncement {
  readonly origin?: string;
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

/** The same announcements, with `listener` also told of each one this process publishes (before it is sent). */
export function tapPublished(announcements: StoredAnnouncements, listener: AnnouncementListener): StoredAnnouncements {
  return {
    publish: async (announcement) => {
      listener(announcement);
      await announcements.publish(announcement);
    },
    subscribe: (subscriber) => announcements.subscribe(subscriber),
    listening: () => announcements.listening(),
    onMissed: (missed) => announcements.onMissed(missed),
    close: () => announcements.close(),
  };
}
