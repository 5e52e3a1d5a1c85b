import type { Readable } from 'node:stream';
import contentDisposition from 'content-disposition';
import { EXPORT_MEDIA_TYPES } from '../../schemas/http/usage-export.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import { TextBody } from '../shared/http/text-body.ts';
import { csvBody } from './csv.ts';

export type ExportFormat = keyof typeof EXPORT_MEDIA_TYPES;

/** What one export holds: the priced events of [start, end) (epoch ms), of one tenant or of every one (null). */
export interface ExportRange {
  readonly start: number;
  readonly end: number;
  readonly userId: string | null;
}

export const DAY_MS = 24 * 3600 * 1000;

/** The exported columns, in order, as ClickHouse reads them out of usage_events (usage-export.ts's row schema). */
const COLUMNS = [
  ['event_id', 'toString(id)'],
  ['user_id', 'user_id'],
  ['session_id', 'toString(session_id)'],
  ['agent_id', "nullIf(agent_id, '')"],
  ['provider', 'provider'],
  ['model', "nullIf(model, '')"],
  ['service', 'service'],
  ['event_type', 'event_type'],
  ['unit', 'unit'],
  ['quantity', 'quantity'],
  ['unit_cost', 'unit_cost'],
  ['cost', 'cost'],
  ['currency', 'currency'],
  ['cost_source', 'toString(cost_source)'],
  ['rate_id', 'rate_id'],
  ['price_scope', 'price_scope'],
  ['cost_components', 'cost_components'],
  ['occurred_at', 'occurred_at'],
  ['received_at', 'received_at'],
  ['weight', 'weight'],
  ['correction_id', 'toString(correction_id)'],
  ['correction_kind', "nullIf(correction_kind, '')"],
  ['correction_of', 'toString(correction_of)'],
  ['reverses', 'toString(reverses)'],
  ['correction_reason', "nullIf(correction_reason, '')"],
] as const;

/** The statement of an export of `range` (in ClickHouse's `format`, else the client's): every event once, in a stable order. */
function exportStatement(ch: ClickHouse, { userId }: ExportRange, format: string | null): string {
  return `SELECT ${COLUMNS.map(([name, expression]) => `${expression} AS ${name}`).join(', ')}
    FROM ${tableName(ch, 'usageEvents')}
    WHERE occurred_at >= fromUnixTimestamp64Milli({start:Int64}, 'UTC')
      AND occurred_at < fromUnixTimestamp64Milli({end:Int64}, 'UTC')
      ${userId === null ? '' : 'AND user_id = {user:String}'}
    ORDER BY user_id, occurred_at, id${
      format === null
        ? ''
        : `
    FORMAT ${format}`
    }`;
}

const paramsOf = ({ start, end, userId }: ExportRange) => ({
  start,
  end,
  ...(userId === null ? {} : { user: userId }),
});

/** ISO 8601 instants in UTC in the text formats, as every other answer writes them. */
const TEXT_SETTINGS = { date_time_output_format: 'iso', output_format_json_named_tuples_as_objects: 1 } as const;

/**
 * The bytes of a Parquet file of `range`, written by ClickHouse's own Parquet output (Decimal(38, 18)
 * stays an exact decimal column, the instants UTC timestamps). One statement: a Parquet file is
 * whole only with its footer. Over HTTP the file is streamed from the server; the embedded engine
 * holds the answer until it is complete, within the reads' CLICKHOUSE_READ_MAX_RESULT_BYTES.
 */
export async function parquetExport(ch: ClickHouse, range: ExportRange): Promise<Readable> {
  const { stream } = await ch.client.exec({
    query: exportStatement(ch, range, 'Parquet'),
    query_params: paramsOf(range),
  });
  return stream;
}

/**
 * The events of `range` as JSON objects (JSONEachRow), read one UTC day at a time so that a month's
 * export is never one answer in memory; each day's rows come in the export's order.
 */
async function* exportRows(ch: ClickHouse, range: ExportRange): AsyncIterable<Record<string, unknown>> {
  for (let start = range.start, end = range.start; start < range.end; start = end) {
    end = Math.min(range.end, start - (start % DAY_MS) + DAY_MS);
    const day = { ...range, start, end };
    const result = await ch.client.query({
      query: exportStatement(ch, day, null),
      query_params: paramsOf(day),
      format: 'JSONEachRow',
      clickhouse_settings: TEXT_SETTINGS,
    });
    for (const row of await result.json<Record<string, unknown>>()) yield row;
  }
}

/**
 * The export of `range` as the answer of a route: a file named for its tenant and range. A Parquet
 * file's statement is asked before the answer begins, so that its failure (a read limit, ClickHouse
 * down) is an HTTP error rather than a connection cut mid-file; CSV and JSON lines ask day by day.
 */
export async function usageExportBody(ch: ClickHouse, range: ExportRange, format: ExportFormat): Promise<TextBody> {
  const name = `usage-${range.userId ?? 'all'}-${isoDay(range.start)}-${isoDay(range.end - 1)}`.replace(
    /[^\w.-]+/g,
    '_',
  );
  const attachment = (extension: string) => ({ 'Content-Disposition': contentDisposition(`${name}.${extension}`) });
  if (format === 'parquet') {
    const file = await parquetExport(ch, range);
    return new TextBody(
      EXPORT_MEDIA_TYPES.parquet,
      async function* () {
        for await (const part of file) yield part as Buffer;
      },
      attachment('parquet'),
    );
  }
  if (format === 'jsonl')
    return new TextBody(
      `${EXPORT_MEDIA_TYPES.jsonl}; charset=utf-8`,
      async function* () {
        for await (const row of exportRows(ch, range)) yield `${JSON.stringify(row)}\n`;
      },
      attachment('jsonl'),
    );
  const header = COLUMNS.map(([column]) => column);
  return csvBody(
    name,
    header,
    mapRows(exportRows(ch, range), (row) =>
      header.map((column) => {
        const value = row[column];
        if (value === null || value === undefined) return '';
        return typeof value === 'object' ? JSON.stringify(value) : String(value);
      }),
    ),
  );
}

async function* mapRows<T, U>(rows: AsyncIterable<T>, map: (row: T) => U): AsyncIterable<U> {
  for await (const row of rows) yield map(row);
}

/** The UTC day of an instant, as YYYY-MM-DD. */
export const isoDay = (instant: number) => new Date(instant).toISOString().slice(0, 10);
