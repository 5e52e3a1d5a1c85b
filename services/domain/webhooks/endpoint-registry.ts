import type { WebhookEndpointRecord, WebhookEventType } from '../../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { readWebhookEndpoints } from '../../shared/clickhouse/tables/webhook-endpoints.ts';
import type { Logger } from '../../shared/logger.ts';
import { refreshEvery } from '../../shared/refresh-every.ts';

/** How often each process reads the endpoints again: another process's change reaches it this late at most. */
export const ENDPOINTS_REFRESH_MS = 2_000;

/**
 * The webhook endpoints as this process knows them: read from webhook_endpoints every
 * ENDPOINTS_REFRESH_MS, and at once for a change made here (which the store may not show yet). One
 * instance per process, shared by the routes, the emitter and the delivery.
 */
export class WebhookEndpoints {
  private stored = new Map<string, WebhookEndpointRecord>();
  private readonly noted = new Map<string, WebhookEndpointRecord>();

  constructor(
    private readonly ch: ClickHouse,
    private readonly log: Logger,
  ) {}

  async start(): Promise<() => void> {
    await this.refresh();
    return refreshEvery(ENDPOINTS_REFRESH_MS, () => this.refresh(), this.log, 'webhook_endpoints_refresh_failed');
  }

  async refresh(): Promise<void> {
    this.stored = new Map((await readWebhookEndpoints(this.ch)).map((endpoint) => [endpoint.id, endpoint]));
  }

  note(endpoint: WebhookEndpointRecord): void {
    this.noted.set(endpoint.id, endpoint);
  }

  /** The latest version of an endpoint (deleted ones included), or null. */
  latest(id: string): WebhookEndpointRecord | null {
    const stored = this.stored.get(id);
    const noted = this.noted.get(id);
    if (noted === undefined) return stored ?? null;
    if (stored !== undefined && stored.version >= noted.version) {
      this.noted.delete(id);
      return stored;
    }
    return noted;
  }

  /** Every endpoint not deleted, oldest first. */
  all(): WebhookEndpointRecord[] {
    const ids = new Set([...this.stored.keys(), ...this.noted.keys()]);
    return [...ids]
      .map((id) => this.latest(id)!)
      .filter((endpoint) => endpoint.deleted_at === null)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /** The endpoints that receive an event of this type and tenant now: subscribed, neither disabled nor deleted. */
  receiving(type: WebhookEventType, userId: string): WebhookEndpointRecord[] {
    return this.active().filter(
      (endpoint) => endpoint.events.includes(type) && (endpoint.user_id === null || endpoint.user_id === userId),
    );
  }

  /** The endpoints delivered to: neither disabled nor deleted. */
  active(): WebhookEndpointRecord[] {
    return this.all().filter((endpoint) => endpoint.disabled_at === null);
  }
}
