import { currency, eventType, storedComponentSchema } from './cost-responses.ts';
import type { ResponseSchema } from './response-parts.ts';
import {
  arrayOf,
  closedObject,
  dateTime,
  money,
  nullable,
  oneOf,
  signedDecimalText,
  signedMoney,
  text,
  uuid,
} from './response-parts.ts';

/** The media types of an export, by its `format`. */
export const EXPORT_MEDIA_TYPES = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv',
  jsonl: 'application/x-ndjson',
} as const;

/**
 * One stored usage row as exported (an event as sent, or a row of its correction, whose reversal's
 * quantity and cost are negative: the rows of a range sum to what the views show): every column finance and a warehouse need, money and quantities
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
    quantity: signedDecimalText,
    unit_cost: money,
    cost: signedMoney,
    currency,
    cost_source: oneOf(['computed', 'reported', 'unpriced']),
    rate_id: text,
    price_scope: text,
    cost_components: arrayOf(storedComponentSchema),
    occurred_at: dateTime,
    received_at: dateTime,
    weight: { type: 'integer', enum: [1, -1], description: '-1 on a correction’s reversal (docs/corrections.md)' },
    correction_id: { ...nullable(uuid), description: 'the correction this row belongs to; null for usage as sent' },
    correction_kind: nullable(oneOf(['void', 'amend'])),
    correction_of: { ...nullable(uuid), description: 'the event as sent that the correction corrects' },
    reverses: { ...nullable(uuid), description: 'on a reversal, the row it negates' },
    correction_reason: nullable(text),
  },
  { title: 'UsageExportRow' },
);

/** GET /api/export/usage: a file of priced events, one row each. */
export const usageExportResponse = {
  schema: usageExportRowSchema,
  files: Object.values(EXPORT_MEDIA_TYPES),
} as const satisfies ResponseSchema;
