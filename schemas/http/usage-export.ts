import { costComponentSchema, currency, eventType } from './cost-responses.ts';
import type { ResponseSchema } from './response-parts.ts';
import { arrayOf, closedObject, dateTime, decimalText, money, nullable, oneOf, text, uuid } from './response-parts.ts';

/** The media types of an export, by its `format`. */
export const EXPORT_MEDIA_TYPES = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv',
  jsonl: 'application/x-ndjson',
} as const;

/**
 * One priced usage event as exported: every column finance and a warehouse need, money and quantities
 * exact (Decimal(38, 18) in Parquet, decimal strings in JSON lines and CSV), instants in UTC.
 */
export const usageExportRowSchema = closedObject(
  {
    event_id: uuid,
    user_id: text,
    session_id: uuid,
    agent_id: nullable(text),
    provider: text,
    model: nullable(text),
    service: text,
    event_type: eventType,
    unit: text,
    quantity: decimalText,
    unit_cost: money,
    cost: money,
    currency,
    cost_source: oneOf(['computed', 'reported', 'unpriced']),
    rate_id: text,
    price_scope: text,
    cost_components: arrayOf(costComponentSchema),
    occurred_at: dateTime,
    received_at: dateTime,
  },
  { title: 'UsageExportRow' },
);

/** GET /api/export/usage: a file of priced events, one row each. */
export const usageExportResponse = {
  schema: usageExportRowSchema,
  files: Object.values(EXPORT_MEDIA_TYPES),
} as const satisfies ResponseSchema;
