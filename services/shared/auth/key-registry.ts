import type { ApiKeyRecord } from '../../../schemas/records/api-key.ts';
import type { ClickHouse } from '../clickhouse/client.ts';
import type { Logger } from '../logger.ts';
import { prefixOf, secretMatches } from './api-keys.ts';
import { readStoredKeys } from '../clickhouse/tables/api-keys.ts';

export type KeyLookup =
  | { readonly kind: 'valid'; readonly key: ApiKeyRecord }
  | { readonly kind: 'unknown' | 'revoked' | 'expired' }
  | { readonly kind: 'auth_off'; readonly key: ApiKeyRecord };

/** A key made by the anonymous caller of AUTH_MODE=off: anyone who reached the port may hold its secret. */
export function createdWhileAuthOff(key: Pick<ApiKeyRecord, 'created_by' | 'created_while_auth_off'>): boolean {
  return key.created_while_auth_off ?? key.created_by === 'anonymous';
}

/**
 * Every process's copy of the stored keys: read whole from ClickHouse every `refreshMs` (a few
 * hundred rows for a fleet; a revocation made by any process holds here after the next read), and
 * the keys this process wrote itself at once, so a key works the moment its 201 is sent.
 */
export class KeyRegistry {
  private stored = new Map<string, ApiKeyRecord>();
  private readonly own = new Map<string, ApiKeyRecord>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ch: ClickHouse,
    private readonly refreshMs: number,
    private readonly log: Logger,
  ) {}

  /** Reads once (a failure is thrown: a process does not start unable to check keys), then every refreshMs. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) =>
        this.log.warn({ err: error }, 'api_keys_refresh_failed: checking keys against the copy last read'),
      );
    }, this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    const keys = await readStoredKeys(this.ch);
    this.stored = new Map(keys.map((key) => [key.id, key]));
    for (const [id, key] of this.own) {
      if ((this.stored.get(id)?.version ?? 0) >= key.version) this.own.delete(id);
    }
  }

  /** A key (or a new version of one) this process has just made durable. */
  remember(key: ApiKeyRecord): void {
    if ((this.latest(key.id)?.version ?? 0) < key.version) this.own.set(key.id, key);
  }

  latest(id: string): ApiKeyRecord | null {
    const stored = this.stored.get(id);
    const own = this.own.get(id);
    if (own === undefined) return stored ?? null;
    return stored !== undefined && stored.version >= own.version ? stored : own;
  }

  all(): ApiKeyRecord[] {
    const ids = new Set([...this.stored.keys(), ...this.own.keys()]);
    return [...ids]
      .map((id) => this.latest(id)!)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /** The keys of one tenant (null: the unbound keys) that still open routes: neither revoked nor expired. */
  activeOf(tenant: string | null, nowMs: number): number {
    return this.all().filter(
      (key) =>
        key.user_id === tenant &&
        (key.revoked_at === null || Date.parse(key.revoked_at) > nowMs) &&
        (key.expires_at === null || Date.parse(key.expires_at) > nowMs),
    ).length;
  }

  lookup(secret: string, nowMs: number): KeyLookup {
    const prefix = prefixOf(secret);
    for (const key of this.all()) {
      if (key.prefix !== prefix || !secretMatches(key.salt, key.secret_hash, secret)) continue;
      if (key.revoked_at !== null && Date.parse(key.revoked_at) <= nowMs) return { kind: 'revoked' };
      if (key.expires_at !== null && Date.parse(key.expires_at) <= nowMs) return { kind: 'expired' };
      if (createdWhileAuthOff(key)) return { kind: 'auth_off', key };
      return { kind: 'valid', key };
    }
    return { kind: 'unknown' };
  }
}
