import type { webhookDeliverySchema } from '../../../schemas/http/webhooks.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { readDeliveryLog } from '../../shared/clickhouse/tables/webhook-deliveries.ts';

export type DeliveryView = WireOf<typeof webhookDeliverySchema>;

/** The endpoint's newest `limit` messages, each with every attempt, as the delivery log answers them. */
export async function deliveryLog(outbox: ClickHouse, endpointId: string, limit: number): Promise<DeliveryView[]> {
  return (await readDeliveryLog(outbox, endpointId, limit)).map(({ state, attempts }) => ({
    message_id: state.message_id,
    type: state.type as DeliveryView['type'],
    status: state.status,
    created_at: new Date(state.created_ms).toISOString(),
    next_attempt_at: state.next_attempt_ms === null ? null : new Date(state.next_attempt_ms).toISOString(),
    attempts: attempts.map(({ attempt, at_ms, status_code, latency_ms, error, ok }) => ({
      attempt,
      at: new Date(at_ms).toISOString(),
      status_code,
      latency_ms,
      error,
      ok,
    })),
  }));
}
