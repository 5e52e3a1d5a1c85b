import type { TableRow } from '../shared/clickhouse/insert-rows.ts';
import { agentRow } from '../shared/clickhouse/tables/agents.ts';
import { apiKeyRow } from '../shared/clickhouse/tables/api-keys.ts';
import { auditRow } from '../shared/clickhouse/tables/audit-log.ts';
import { budgetRow } from '../shared/clickhouse/tables/budgets.ts';
import { periodRow } from '../shared/clickhouse/tables/billing-periods.ts';
import { tenantSettingsRow } from '../shared/clickhouse/tables/tenant-settings.ts';
import { rateEntryRow } from '../shared/clickhouse/tables/rate-entries.ts';
import { sessionRow } from '../shared/clickhouse/tables/sessions.ts';
import { telephonyNumberRow } from '../shared/clickhouse/tables/telephony-numbers.ts';
import { transcriptRow } from '../shared/clickhouse/tables/transcripts.ts';
import { webhookEndpointRow } from '../shared/clickhouse/tables/webhook-endpoints.ts';
import type { RecordSource } from '../shared/clickhouse/tables/usage-events.ts';
import type { Envelope } from '../domain/records/index.ts';
import type { PayloadOf } from '../domain/records/index.ts';

export type { RecordSource };

/** Usage is priced and deduplicated per batch (usage/usage-rows.ts); every other kind maps alone. */
export type SingleRowEnvelope = Envelope & { readonly kind: Exclude<Envelope['kind'], 'usage'> };

/** The ClickHouse row of a validated record: each kind's row is its table module's. */
export function toTableRow(envelope: SingleRowEnvelope, source: RecordSource): TableRow {
  const payload = <K extends SingleRowEnvelope['kind']>(_kind: K) => envelope.payload as unknown as PayloadOf[K];
  switch (envelope.kind) {
    case 'session':
      return { table: 'sessions', row: sessionRow(payload('session'), envelope.id, source) };
    case 'telephony_number':
      return { table: 'telephonyNumbers', row: telephonyNumberRow(payload('telephony_number'), envelope.id) };
    case 'agent':
      return { table: 'agents', row: agentRow(payload('agent'), envelope.id, source) };
    case 'transcript':
      return { table: 'transcripts', row: transcriptRow(payload('transcript'), envelope.id) };
    case 'rate':
      return { table: 'rateEntries', row: rateEntryRow(payload('rate'), envelope.id) };
    case 'api_key':
      return { table: 'apiKeys', row: apiKeyRow(payload('api_key'), envelope.id) };
    case 'audit':
      return { table: 'auditLog', row: auditRow(payload('audit'), envelope.id) };
    case 'period':
      return { table: 'billingPeriods', row: periodRow(payload('period'), envelope.id) };
    case 'budget':
      return { table: 'budgets', row: budgetRow(payload('budget'), envelope.id) };
    case 'tenant_settings':
      return { table: 'tenantSettings', row: tenantSettingsRow(payload('tenant_settings'), envelope.id) };
    case 'webhook_endpoint':
      return { table: 'webhookEndpoints', row: webhookEndpointRow(payload('webhook_endpoint'), envelope.id) };
  }
}
