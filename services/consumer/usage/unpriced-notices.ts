import type { WebhookEventType } from '../../../schemas/records/webhook-endpoint.ts';
import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import type { Logger } from '../../shared/logger.ts';
import type { EmitWebhookEvent, WebhookEndpoints, WebhookEvent } from '../../domain/webhooks/index.ts';

const TYPE: WebhookEventType = 'usage.unpriced';
/** Keys this process knows are in the outbox: past this many it forgets them all and asks the outbox again. */
const EMITTED_KEPT = 100_000;
/**
 * Emits waiting in this process at most: a tenant inventing models by the thousand gets this many
 * queued, and the rest are announced on their kind's next unpriced row, never a backlog without end.
 */
export const MAX_PENDING_EMITS = 1_000;
/** What the receiver can do about it (docs/pricing.md#tenant-rates, docs/corrections.md#repricing). */
export const UNPRICED_HINT =
  'Nothing prices this usage, so it is stored at cost 0. Price it for the tenant with POST /api/rates ' +
  '{"user_id", "provider", "model", "event_type", "price", "per"} (or a rate card entry), then ' +
  'POST /api/rates/reprice prices what was stored before; GET /api/costs/unpriced lists it.';

export type StoredUsage = Pick<
  UsageEventRow,
  'id' | 'user_id' | 'session_id' | 'provider' | 'model' | 'event_type' | 'occurred_at' | 'cost_source' | 'reverses'
>;

/** The idempotency key of a tenant's unpriced provider, model and event type (the tenant is in the webhook-id). */
export const unpricedKey = (row: StoredUsage) =>
  `unpriced:${JSON.stringify([row.provider, row.model, row.event_type])}`;

/**
 * The first of each tenant's unpriced provider, model and event type among stored rows: the one that
 * happened first, the earlier in the list on a tie. A correction's reversal is not new usage.
 */
export function firstUnpriced<R extends StoredUsage>(rows: readonly R[]): R[] {
  const firsts = new Map<string, R>();
  for (const row of rows) {
    if (row.cost_source !== 'unpriced' || row.reverses !== null) continue;
    const key = JSON.stringify([row.user_id, unpricedKey(row)]);
    const first = firsts.get(key);
    if (first === undefined || Date.parse(row.occurred_at) < Date.parse(first.occurred_at)) firsts.set(key, row);
  }
  return [...firsts.values()];
}

/** The `usage.unpriced` webhook of a tenant's first unpriced row of its kind (docs/webhooks.md#event-types). */
export function unpricedEvent(row: StoredUsage): WebhookEvent {
  return {
    type: TYPE,
    user_id: row.user_id,
    idempotency_key: unpricedKey(row),
    data: {
      user_id: row.user_id,
      provider: row.provider,
      model: row.model === '' ? null : row.model,
      event_type: row.event_type,
      session_id: row.session_id,
      event_id: row.id,
      first_seen_at: row.occurred_at,
      hint: UNPRICED_HINT,
    },
  };
}

export interface UnpricedNoticesDeps {
  readonly endpoints: Pick<WebhookEndpoints, 'receiving'>;
  readonly emit: EmitWebhookEvent;
  readonly log: Logger;
}

/**
 * `usage.unpriced` once per tenant, provider, model and event type, ever: the consumer hands over each
 * round's stored rows and goes on (a round never waits for its emits: one tenant's invented models must
 * not hold up every tenant's storing). Only a tenant that an endpoint receives the type for
 * is emitted for (asked in memory, once per tenant and round), and a key this process has emitted is not
 * emitted again, so a tenant without such an endpoint, or whose kinds were all announced, costs no query.
 * The outbox sends a key once (its webhook-id is derived from it): a replay, a restart or another
 * consumer process emitting it again sends nothing more. An emit that fails is logged and tried again on
 * the key's next unpriced row; it never holds the round up.
 */
export class UnpricedNotices {
  private readonly emitted = new Set<string>();
  /** Emits under way, so that two rounds of this process stored at once emit a key once. */
  private readonly emitting = new Map<string, Promise<void>>();
  private pending = 0;

  constructor(private readonly deps: UnpricedNoticesDeps) {}

  async noteStored(rows: readonly StoredUsage[]): Promise<void> {
    const fresh = firstUnpriced(rows).filter((row) => !this.emitted.has(this.keyOf(row)));
    if (fresh.length === 0) return;
    const receiving = new Map<string, boolean>();
    const received = (userId: string) => {
      let known = receiving.get(userId);
      if (known === undefined) receiving.set(userId, (known = this.deps.endpoints.receiving(TYPE, userId).length > 0));
      return known;
    };
    // One after another, as budget alerts are: a flood of made-up models is a flood of queries otherwise.
    const queued = fresh.filter((row) => received(row.user_id)).slice(0, MAX_PENDING_EMITS - this.pending);
    this.pending += queued.length;
    for (const row of queued)
      try {
        await this.emitOnce(row);
      } finally {
        this.pending -= 1;
      }
  }

  private keyOf(row: StoredUsage): string {
    return JSON.stringify([row.user_id, unpricedKey(row)]);
  }

  private emitOnce(row: StoredUsage): Promise<void> {
    const key = this.keyOf(row);
    const running = this.emitting.get(key);
    if (running !== undefined) return running;
    const emitted = this.deps
      .emit(unpricedEvent(row))
      .then(
        ({ duplicate, endpoints }) => {
          // Queued for nobody (the endpoint went in the meantime): the kind's next row is announced.
          if (!duplicate && endpoints === 0) return;
          if (this.emitted.size >= EMITTED_KEPT) this.emitted.clear();
          this.emitted.add(key);
        },
        (error: unknown) =>
          this.deps.log.warn(
            { err: error, provider: row.provider, event_type: row.event_type },
            'usage_unpriced_webhook_not_emitted',
          ),
      )
      .finally(() => this.emitting.delete(key));
    this.emitting.set(key, emitted);
    return emitted;
  }
}
