import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import { faultOnResponse, storedTotalsResponse, webhookEmittedResponse } from '../../schemas/http/fault-responses.ts';
import { webhookDeliveryListSchema } from '../../schemas/http/webhooks.ts';
import { WEBHOOK_EVENT_TYPES } from '../../schemas/records/webhook-endpoint.ts';
import { deliveryLog, type EmitWebhookEvent } from '../domain/webhooks/index.ts';
import { defineRoute, type Route } from '../shared/http/define-route.ts';
import type { Logger } from '../shared/logger.ts';
import type { RecordJournal } from '../domain/records/index.ts';
import { storedTotals } from './stored-totals.ts';

/** What budgets will emit, as the emit function takes it. */
const webhookEventBody = {
  type: 'object',
  properties: {
    type: { 'x-py': 'literal', enum: WEBHOOK_EVENT_TYPES },
    user_id: { 'x-py': 'str', minLength: 1, maxLength: 512 },
    data: { 'x-py': 'dict' },
    idempotency_key: { 'x-py': 'str', minLength: 1, maxLength: 512 },
  },
  required: ['type', 'user_id', 'data', 'idempotency_key'],
} as const;

/** Whose delivery log: the log route of ingest reads the outbox of its own ClickHouse, not this process's. */
const deliveriesQuery = {
  type: 'object',
  properties: {
    endpoint_id: { 'x-py': 'uuid' },
    limit: { 'x-py': 'int', minimum: 1, maximum: 500, default: 50, description: 'messages, newest first' },
  },
  required: ['endpoint_id'],
} as const;

const faultQuery = {
  type: 'object',
  properties: { seconds: { 'x-py': 'int', minimum: 1, maximum: 300, default: 10 } },
} as const;

/**
 * Fault injection for the fault suite (FAULT_INJECTION=1 only): ClickHouse itself refuses every
 * insert into usage_events for a while, through a constraint that no row satisfies; or only one
 * materialized view's table refuses (usage_events and the other views store the insert, which then
 * fails); the embedded journal refuses its writes as a full disk would; and what every table fed by
 * usage_events holds, to check each rollup against the raw events afterwards. The embedded engine
 * lives inside this process, so the suite cannot reach it from outside. And an event handed to the
 * webhooks' emit function, for the webhook tests, and an endpoint's delivery log as this process's
 * outbox holds it, for the fault suite, whose ingest process has no view of that outbox.
 */
export async function faultRoutes(
  ch: ClickHouse,
  log: Logger,
  journal: RecordJournal | null = null,
  emitWebhook: EmitWebhookEvent | null = null,
): Promise<Route[]> {
  const table = tableName(ch, 'usageEvents');
  const view = tableName(ch, 'usageTotalsDaily');
  // A process killed while a fault was on left its constraint behind: start clean.
  await ch.client.command({ query: `ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS fault_injected` });
  await ch.client.command({ query: `ALTER TABLE ${view} DROP CONSTRAINT IF EXISTS fault_injected` });
  const refuseFor = async (target: string, seconds: number, fault: string) => {
    await ch.client.command({ query: `ALTER TABLE ${target} ADD CONSTRAINT IF NOT EXISTS fault_injected CHECK 0` });
    log.warn({ seconds, table: target }, `fault_injected_${fault}`);
    setTimeout(() => {
      ch.client
        .command({ query: `ALTER TABLE ${target} DROP CONSTRAINT IF EXISTS fault_injected` })
        .then(() => log.warn(`fault_cleared_${fault}`))
        .catch((error: unknown) => log.error({ err: error }, 'fault_clear_failed'));
    }, seconds * 1000).unref();
    return { status: 'failing', seconds } as const;
  };
  const journalRoutes =
    journal === null
      ? []
      : [
          defineRoute({
            method: 'POST',
            path: '/_faults/journal-writes',
            access: 'admin',
            summary: 'Make the embedded journal refuse its writes as a full disk would, for a while (fault tests only)',
            tags: ['faults'],
            request: { query: faultQuery },
            response: faultOnResponse,
            handle: async ({ query }) => {
              journal.refuseWritesFor(query.seconds * 1000);
              log.warn({ seconds: query.seconds }, 'fault_injected_journal_writes');
              return { status: 'failing', seconds: query.seconds };
            },
          }),
        ];
  const webhookRoutes =
    emitWebhook === null
      ? []
      : [
          defineRoute({
            method: 'POST',
            path: '/_faults/webhook-events',
            access: 'admin',
            summary: 'Emit a webhook event through the emit function budgets call (fault and webhook tests only)',
            tags: ['faults'],
            request: { body: webhookEventBody },
            response: webhookEmittedResponse,
            handle: async ({ body }) => emitWebhook(body),
          }),
          defineRoute({
            method: 'GET',
            path: '/_faults/webhook-deliveries',
            access: 'admin',
            summary:
              "An endpoint's delivery log in this process's outbox, each message with its attempts (fault tests only)",
            tags: ['faults'],
            request: { query: deliveriesQuery },
            response: { schema: webhookDeliveryListSchema },
            handle: async ({ query }) => deliveryLog(ch, query.endpoint_id, query.limit),
          }),
        ];
  return [
    ...journalRoutes,
    ...webhookRoutes,
    defineRoute({
      method: 'POST',
      path: '/_faults/clickhouse-views',
      access: 'admin',
      summary: "Make one materialized view's table refuse inserts for a while (fault tests only)",
      tags: ['faults'],
      request: { query: faultQuery },
      response: faultOnResponse,
      handle: async ({ query }) => refuseFor(view, query.seconds, 'clickhouse_views'),
    }),
    defineRoute({
      method: 'POST',
      path: '/_faults/clickhouse-inserts',
      access: 'admin',
      summary: 'Make ClickHouse refuse usage inserts for a while (fault tests only)',
      tags: ['faults'],
      request: { query: faultQuery },
      response: faultOnResponse,
      handle: async ({ query }) => refuseFor(table, query.seconds, 'clickhouse_inserts'),
    }),
    defineRoute({
      method: 'GET',
      path: '/_faults/stored-totals',
      access: 'admin',
      summary:
        'Event count and cost of usage_events, of every rollup and of usage_event_ids_by_user, of one tenant with user_id (fault tests only)',
      tags: ['faults'],
      request: { query: { type: 'object', properties: { user_id: { 'x-py': 'str', minLength: 1 } } } as const },
      response: storedTotalsResponse,
      handle: async ({ query }) => storedTotals(ch, query.user_id ?? null),
    }),
  ];
}
