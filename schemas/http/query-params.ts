import { CALL_DIRECTIONS, lowerCase } from '../records/session.ts';
import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

const startDate = {
  'x-py': 'str',
  'x-py-check': 'date-or-datetime',
  description: 'ISO date (that local day in tz) or date-time; inclusive',
} as const;
const endDate = {
  'x-py': 'str',
  'x-py-check': 'date-or-datetime',
  description: 'ISO date (the whole local day in tz is included) or date-time; inclusive',
} as const;
const timeZone = { 'x-py': 'str', 'x-py-check': 'time-zone', description: 'IANA time zone, default UTC' } as const;
const exportFormat = {
  'x-py': 'literal',
  enum: ['json', 'csv'],
  description: 'csv answers text/csv (so does Accept: text/csv)',
} as const;

/** The numbers as they stood at an instant: rows stored later (usage, corrections, repricing) left out (docs/cost-queries.md#as-of). */
export const asOf = {
  'x-py': 'datetime',
  description: 'the numbers as they stood then: what was stored later is left out; not in the future',
} as const;

/**
 * GET /api/costs/timeline — `period` is a `str` with a pattern in the old service, so a bad
 * value (also `period=`) is string_pattern_mismatch, not an enum error.
 */
export const costTimelineQuery = {
  type: 'object',
  properties: {
    period: { 'x-py': 'str', pattern: '^(daily|weekly|monthly)$', default: 'daily' },
    start_date: startDate,
    end_date: endDate,
    tz: timeZone,
    format: exportFormat,
    as_of: asOf,
  },
} as const satisfies ModelSchema;

export type CostTimelineQuery = FromPySchema<typeof costTimelineQuery>;

/** GET /api/costs/by-agent */
export const costByAgentQuery = {
  type: 'object',
  properties: {
    start_date: startDate,
    end_date: endDate,
    tz: timeZone,
    limit: { 'x-py': 'int', minimum: 1, maximum: 1000, default: 50 },
    format: exportFormat,
    as_of: asOf,
  },
} as const satisfies ModelSchema;

export type CostByAgentQuery = FromPySchema<typeof costByAgentQuery>;

/** GET /api/costs/summary */
export const costSummaryQuery = {
  type: 'object',
  properties: {
    tz: timeZone,
    as_of: asOf,
  },
} as const satisfies ModelSchema;

export type CostSummaryQuery = FromPySchema<typeof costSummaryQuery>;

/**
 * GET /api/sessions/ — newest first, `limit` up to 1,000: the old service allowed 10,000, and 10,000 sessions of
 * 64 KiB session_data and analysis each built a response of gigabytes (a documented difference, docs/api.md).
 */
export const sessionListQuery = {
  type: 'object',
  properties: {
    page: { 'x-py': 'int', minimum: 1, maximum: 2147483647, default: 1 },
    limit: { 'x-py': 'int', minimum: 1, maximum: 1000, default: 10 },
    // The dashboard sends `start_date=&end_date=` when no range is picked (compat.md).
    start_date: { 'x-py': 'datetime', 'x-py-empty-absent': true },
    end_date: { 'x-py': 'datetime', 'x-py-empty-absent': true },
    // The old dashboard's call-log filter; the session answers carry it as `direction`.
    direction: { 'x-py': 'literal', enum: lowerCase(CALL_DIRECTIONS) },
  },
} as const satisfies ModelSchema;

export type SessionListQuery = FromPySchema<typeof sessionListQuery>;

/** GET /api/export/usage */
export const usageExportQuery = {
  type: 'object',
  properties: {
    from: { ...startDate, description: 'ISO date (that UTC day) or date-time; inclusive' },
    to: { ...endDate, description: 'ISO date (the whole UTC day is included) or date-time; inclusive' },
    format: {
      'x-py': 'literal',
      enum: ['parquet', 'csv', 'jsonl'],
      default: 'parquet',
      description: 'parquet (application/vnd.apache.parquet), csv (text/csv) or jsonl (application/x-ndjson)',
    },
    user_id: {
      'x-py': 'str',
      description: 'the tenant to export; an unbound admin credential may name any, or leave it out for every tenant',
    },
  },
  required: ['from', 'to'],
} as const satisfies ModelSchema;

export type UsageExportQuery = FromPySchema<typeof usageExportQuery>;

/** GET /api/sessions/{session_id}/cost-breakdown */
export const costBreakdownQuery = {
  type: 'object',
  properties: { as_of: asOf },
} as const satisfies ModelSchema;
