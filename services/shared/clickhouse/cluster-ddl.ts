/**
 * The migrations for a ClickHouse cluster (CLICKHOUSE_CLUSTER), made from the single-node ones, so
 * that one set of files describes both: every table becomes its Replicated engine ON CLUSTER (its
 * path in Keeper per shard, the replica from the server's macros), with a Distributed table
 * `<table>_all` beside it through which callmeter reads and writes, sharded by user_id (or, for
 * tables without one, by the first column of their key, so that every version of a row lands on one
 * shard and ReplacingMergeTree still sees them together). Materialized views are made on every node
 * and feed the local tables of the shard the insert reached; plain views read the `_all` tables.
 *
 * Written by hand: no library rewrites ClickHouse DDL, and the statements are our own, of a few
 * fixed shapes, which `clusterStatements` refuses to pass through when it does not recognise one.
 * No ClickHouse server can run where this was written: cluster-ddl.test.ts compares the result with
 * the single-node DDL table by table and column by column; running it on a cluster is checked only by
 * reading (docs/architecture.md, ClickHouse cluster).
 */

export interface ClusterTarget {
  readonly cluster: string;
  readonly database: string;
}

/** The suffix of the Distributed table beside each table. */
export const DISTRIBUTED_SUFFIX = '_all';

const NAME = String.raw`([A-Za-z_][A-Za-z0-9_]*)`;
const CREATE_TABLE = new RegExp(String.raw`^CREATE TABLE IF NOT EXISTS ${NAME}\.${NAME}\s*([\s\S]*)$`);
const ENGINE = /ENGINE\s*=\s*(MergeTree|ReplacingMergeTree|SummingMergeTree|AggregatingMergeTree)(\(([^)]*)\))?/;
const CREATE_AS = new RegExp(String.raw`^AS ${NAME}\.${NAME}\s*([\s\S]*)$`);
const CREATE_MV = new RegExp(String.raw`^CREATE MATERIALIZED VIEW IF NOT EXISTS ${NAME}\.${NAME}(\s[\s\S]*)$`);
const CREATE_VIEW = new RegExp(String.raw`^CREATE VIEW IF NOT EXISTS ${NAME}\.${NAME}(\s[\s\S]*)$`);
const ALTER = new RegExp(String.raw`^ALTER TABLE ${NAME}\.${NAME}(\s[\s\S]*)$`);
const DROP = new RegExp(String.raw`^DROP (TABLE|VIEW) IF EXISTS ${NAME}\.${NAME}\s*$`);
const BACKFILL_SET = new RegExp(String.raw`^CREATE TABLE IF NOT EXISTS ${NAME}\.${NAME}\s+ENGINE = Set AS\s+SELECT\s`);
const COLUMN_CHANGE = /^\s*(ADD|MODIFY|DROP|RENAME|COMMENT) COLUMN/;

/** The first column of a table's ORDER BY, when it has no user_id. */
function shardingKey(body: string): string {
  if (/^\s*\(?\s*user_id\s/m.test(body) || /\n\s*user_id\s/.test(body)) return 'cityHash64(user_id)';
  const order = /ORDER BY\s*\(?\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(body);
  if (order === null) throw new Error('a table without user_id or ORDER BY cannot be sharded');
  return `cityHash64(${order[1]})`;
}

/** The Replicated engine of a single-node one: Keeper path per shard and table, replica from macros. */
function replicated(body: string, database: string, table: string): string {
  const engine = ENGINE.exec(body);
  if (engine === null) throw new Error(`${database}.${table}: an engine this generator does not know`);
  const args = engine[3]?.trim() ?? '';
  const path = `'/clickhouse/tables/{shard}/${database}/${table}', '{replica}'`;
  return body
    .replace(ENGINE, `ENGINE = Replicated${engine[1]}(${args === '' ? path : `${path}, ${args}`})`)
    .replace(/non_replicated_deduplication_window/g, 'replicated_deduplication_window');
}

function distributed(target: ClusterTarget, table: string, key: string): string {
  const { cluster, database } = target;
  return (
    `CREATE TABLE IF NOT EXISTS ${database}.${table}${DISTRIBUTED_SUFFIX} ON CLUSTER '${cluster}' ` +
    `AS ${database}.${table} ENGINE = Distributed('${cluster}', '${database}', '${table}', ${key})`
  );
}

/**
 * One single-node statement as the statements of a cluster. `tables` collects the tables made so
 * far (name -> sharding key), which ALTERs and views of later statements need.
 */
export function clusterStatements(statement: string, target: ClusterTarget, tables: Map<string, string>): string[] {
  const on = `ON CLUSTER '${target.cluster}'`;
  const sql = statement.trim();
  let match: RegExpExecArray | null;
  // A backfill of a database made before a migration (a Set of the rows to mark, the mutation that
  // marks them): a cluster starts from the migrations, so its tables are empty and there is nothing to mark.
  if (BACKFILL_SET.test(sql) || ((match = ALTER.exec(sql)) !== null && /^\s*UPDATE\s/.test(match[3]!))) return [];
  if ((match = CREATE_TABLE.exec(sql)) !== null) {
    const [, database, table, rest] = match as unknown as [string, string, string, string];
    const body = replicated(rest, database, table);
    const copy = CREATE_AS.exec(rest);
    // `CREATE TABLE x AS y ENGINE = …`: the columns are y's, the key the same as y's.
    const key = copy === null ? shardingKey(rest) : (tables.get(copy[2]!) ?? shardingKey(copy[3]!));
    tables.set(table, key);
    return [`CREATE TABLE IF NOT EXISTS ${database}.${table} ${on} ${body}`, distributed(target, table, key)];
  }
  if ((match = CREATE_MV.exec(sql)) !== null)
    return [`CREATE MATERIALIZED VIEW IF NOT EXISTS ${match[1]}.${match[2]} ${on}${match[3]}`];
  if ((match = CREATE_VIEW.exec(sql)) !== null) {
    const [, database, view, rest] = match as unknown as [string, string, string, string];
    const reading = rest.replace(new RegExp(String.raw`\b${database}\.${NAME}\b`, 'g'), (whole, table: string) =>
      tables.has(table) ? `${database}.${table}${DISTRIBUTED_SUFFIX}` : whole,
    );
    return [`CREATE VIEW IF NOT EXISTS ${database}.${view} ${on}${reading}`];
  }
  if ((match = ALTER.exec(sql)) !== null) {
    const [, database, table, rest] = match as unknown as [string, string, string, string];
    const alters = [`ALTER TABLE ${database}.${table} ${on}${rest}`];
    // The Distributed table must show a changed column too: it reads the shards by its own columns.
    if (tables.has(table) && COLUMN_CHANGE.test(rest))
      alters.push(`ALTER TABLE ${database}.${table}${DISTRIBUTED_SUFFIX} ${on}${rest}`);
    return alters;
  }
  if ((match = DROP.exec(sql)) !== null) {
    const [, kind, database, name] = match as unknown as [string, string, string, string];
    const drops = [`DROP ${kind} IF EXISTS ${database}.${name} ${on}`];
    if (kind === 'TABLE') drops.unshift(`DROP TABLE IF EXISTS ${database}.${name}${DISTRIBUTED_SUFFIX} ${on}`);
    tables.delete(name);
    return drops;
  }
  // A backfill of a database made before a migration: a cluster starts from the migrations, so its
  // tables are empty when they are made, and there is nothing to fill.
  if (/^INSERT INTO /.test(sql)) return [];
  throw new Error(`a migration statement the cluster generator does not know: ${sql.slice(0, 80)}`);
}

/** Every migration's statements for the cluster, in order. */
export function clusterMigration(
  statements: readonly string[],
  target: ClusterTarget,
  tables: Map<string, string>,
): string[] {
  return statements.flatMap((statement) => clusterStatements(statement, target, tables));
}
