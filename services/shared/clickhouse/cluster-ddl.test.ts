import { describe, expect, it } from 'vitest';
import { clusterMigration, clusterStatements, DISTRIBUTED_SUFFIX } from './cluster-ddl.ts';
import { loadMigrations, MIGRATIONS_DIR } from './migrate.ts';
import { tableName } from './tables.ts';

const TARGET = { cluster: 'callmeter', database: 'callmeter' };

interface Table {
  readonly engine: string;
  readonly columns: readonly string[];
  readonly copyOf: string | null;
  readonly rest: string;
}

/** The tables a list of statements creates: engine, column definitions (in order), or the table it copies. */
function tablesOf(statements: readonly string[]): Map<string, Table> {
  const tables = new Map<string, Table>();
  for (const sql of statements) {
    const match = /^CREATE TABLE IF NOT EXISTS callmeter\.(\w+)(?: ON CLUSTER '\w+')?\s*([\s\S]*)$/.exec(sql);
    if (match === null) continue;
    const body = match[2]!;
    const copy = /^AS callmeter\.(\w+)/.exec(body);
    const block = copy === null ? body.slice(body.indexOf('(') + 1, body.lastIndexOf(')', body.indexOf('ENGINE'))) : '';
    tables.set(match[1]!, {
      engine: /ENGINE\s*=\s*(\w+)/.exec(body)![1]!,
      columns: block
        .split(/,\s*\n/)
        .map((column) => column.trim())
        .filter(Boolean),
      copyOf: copy?.[1] ?? null,
      rest: body.slice(body.indexOf('ENGINE')).replace(/^ENGINE\s*=\s*\w+(\([^)]*\))?/, ''),
    });
  }
  return tables;
}

async function bothMigrations(): Promise<{ single: string[]; cluster: string[] }> {
  const single = (await loadMigrations(MIGRATIONS_DIR, 'callmeter')).flatMap((m) => [...m.statements]);
  return { single, cluster: clusterMigration(single, TARGET, new Map()) };
}

describe('the cluster DDL made from the single-node migrations', () => {
  it('makes every table Replicated with the same columns, key and settings, and a Distributed table beside it', async () => {
    const { single, cluster } = await bothMigrations();
    // A Set a migration fills and drops again (the rows a backfill marks) is not made on a cluster.
    const singleTables = new Map([...tablesOf(single)].filter(([, table]) => table.engine !== 'Set'));
    const clusterTables = tablesOf(cluster);
    expect(singleTables.size).toBeGreaterThan(20);
    for (const [name, table] of singleTables) {
      const replicated = clusterTables.get(name);
      expect(replicated, name).toBeDefined();
      expect(replicated!.engine, name).toBe(`Replicated${table.engine}`);
      expect(replicated!.columns, name).toEqual(table.columns);
      expect(replicated!.copyOf, name).toBe(table.copyOf);
      expect(replicated!.rest, name).toBe(
        table.rest.replace(/non_replicated_deduplication_window/g, 'replicated_deduplication_window'),
      );
      const all = clusterTables.get(`${name}${DISTRIBUTED_SUFFIX}`);
      expect(all?.engine, `${name}_all`).toBe('Distributed');
      expect(all?.copyOf, `${name}_all`).toBe(name);
    }
    expect(clusterTables.size).toBe(singleTables.size * 2);
  });

  it('shards by user_id, or by the first key column of a table without one', async () => {
    const { cluster } = await bothMigrations();
    const key = (table: string) =>
      new RegExp(String.raw`'${table}', (cityHash64\(\w+\))\)$`).exec(
        cluster.find((sql) => sql.includes(`callmeter.${table}${DISTRIBUTED_SUFFIX} ON CLUSTER`))!,
      )?.[1];
    expect(key('usage_events')).toBe('cityHash64(user_id)');
    expect(key('sessions')).toBe('cityHash64(user_id)');
    expect(key('sessions_by_user')).toBe('cityHash64(user_id)');
    expect(key('telephony_numbers')).toBe('cityHash64(agent_id)');
  });

  it('makes every view and materialized view on the cluster, the same query; plain views read the Distributed tables', async () => {
    const { single, cluster } = await bothMigrations();
    const views = (statements: string[], kind: string) =>
      statements
        .filter((sql) => sql.startsWith(`CREATE ${kind} IF NOT EXISTS`))
        .map((sql) => sql.replace(/ ON CLUSTER 'callmeter'/, ''));
    expect(views(cluster, 'MATERIALIZED VIEW')).toEqual(views(single, 'MATERIALIZED VIEW'));
    const plain = views(cluster, 'VIEW');
    expect(plain).toHaveLength(views(single, 'VIEW').length);
    for (const view of plain) expect(view).toMatch(/FROM callmeter\.\w+_all\b/);
  });

  it('alters on the cluster, a changed column on the Distributed table too, and leaves the backfills out', async () => {
    const { single, cluster } = await bothMigrations();
    // A mutation marking the rows stored before a migration is a backfill too.
    const mutation = (sql: string) => /^ALTER TABLE callmeter\.\w+ UPDATE\s/.test(sql);
    const singleAlters = single.filter((sql) => sql.startsWith('ALTER TABLE') && !mutation(sql));
    const clusterAlters = cluster.filter((sql) => sql.startsWith('ALTER TABLE'));
    expect(single.filter(mutation)).not.toEqual([]);
    expect(cluster.filter((sql) => / UPDATE\s/.test(sql))).toEqual([]);
    for (const alter of singleAlters) {
      const [, table, rest] = /^ALTER TABLE callmeter\.(\w+)(\s[\s\S]*)$/.exec(alter)!;
      expect(clusterAlters).toContain(`ALTER TABLE callmeter.${table} ON CLUSTER 'callmeter'${rest}`);
      if (/^\s*(ADD|MODIFY) COLUMN/.test(rest!) && !table!.endsWith('_mv'))
        expect(clusterAlters).toContain(`ALTER TABLE callmeter.${table}_all ON CLUSTER 'callmeter'${rest}`);
    }
    expect(cluster.some((sql) => sql.startsWith('INSERT') || / ENGINE = Set /.test(sql))).toBe(false);
    expect(cluster.every((sql) => sql.includes(" ON CLUSTER 'callmeter'"))).toBe(true);
  });

  it('refuses a statement of a shape it does not know, rather than pass it through unreplicated', () => {
    expect(() =>
      clusterStatements('CREATE DICTIONARY callmeter.d (id UInt64) PRIMARY KEY id', TARGET, new Map()),
    ).toThrow(/does not know/);
    expect(() =>
      clusterStatements('CREATE TABLE IF NOT EXISTS callmeter.t (id UInt64) ENGINE = Log', TARGET, new Map()),
    ).toThrow(/engine/);
  });

  it('has every statement of callmeter name the Distributed tables on a cluster, the views as they are', () => {
    expect(tableName({ database: 'db', cluster: 'callmeter' }, 'usageEvents')).toBe('db.usage_events_all');
    expect(tableName({ database: 'db', cluster: 'callmeter' }, 'sessionsCurrent')).toBe('db.sessions_current');
    expect(tableName({ database: 'db', cluster: null }, 'usageEvents')).toBe('db.usage_events');
  });
});
