import type { ClickHouse } from '../../shared/clickhouse/client.ts';

/** One read of a combined statement: a SELECT and the values of its placeholders. */
export interface Read {
  readonly sql: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** One read as a statement of its own: its rows, as JSONEachRow gives them. */
export async function readRows<Row>(ch: ClickHouse, { sql, params }: Read): Promise<Row[]> {
  const result = await ch.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  return result.json<Row>();
}

/** The rows of each read, by the read's name. */
export type RowsOf<Rows> = { [Name in keyof Rows]: Rows[Name][] };

/**
 * Several reads answered by one statement. A statement has a cost of its own in the engine, whatever it
 * reads (about 2 ms of CPU for `SELECT 1` on the embedded one, 4 ms for a read of a few rows), which an
 * answer of four statements would pay four times. Each read's rows come back tagged with its name, each row as the
 * JSON object the read alone would have given (`formatRowNoNewline` formats as the statement's own rows
 * would be, quoted decimals included). The order of the rows is not kept: a caller that needs one sorts.
 * Reads that share a placeholder must give it the same value.
 */
export async function readTogether<Rows extends Record<string, object>>(
  ch: ClickHouse,
  reads: { readonly [Name in keyof Rows]: Read },
): Promise<RowsOf<Rows>> {
  const names = Object.keys(reads) as (keyof Rows & string)[];
  const params: Record<string, unknown> = {};
  for (const name of names) {
    for (const [param, value] of Object.entries(reads[name].params ?? {})) {
      if (Object.hasOwn(params, param) && params[param] !== value)
        throw new Error(`query parameter ${param} has two values in one statement`);
      params[param] = value;
    }
  }
  const query = names
    .map((name) => {
      if (!/^\w+$/.test(name)) throw new Error(`read name ${JSON.stringify(name)} is not a word`);
      return `SELECT '${name}' AS read_name, formatRowNoNewline('JSONEachRow', *) AS read_row FROM (${reads[name].sql})`;
    })
    .join(' UNION ALL ');
  const result = await ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
  const rows = Object.fromEntries(names.map((name) => [name, [] as object[]])) as RowsOf<Rows>;
  for (const { read_name, read_row } of await result.json<{ read_name: keyof Rows; read_row: string }>()) {
    rows[read_name].push(JSON.parse(read_row) as Rows[keyof Rows]);
  }
  return rows;
}
