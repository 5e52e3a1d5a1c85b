import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../logger.ts';
import type { ClickHouse } from './client.ts';
import { clusterMigration } from './cluster-ddl.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../infra/clickhouse/migrations/', import.meta.url));
const FILE_NAME = /^(\d{3})_[a-z0-9_]+\.sql$/;

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly checksum: string;
  readonly statements: readonly string[];
}

/**
 * Applies infra/clickhouse/migrations/NNN_*.sql in order and records each applied version.
 * Every statement is idempotent DDL, so two processes starting together, or a crash between a
 * statement and its record, only repeat work that changes nothing.
 */
export async function migrate(ch: ClickHouse, log: Logger, dir = MIGRATIONS_DIR): Promise<number[]> {
  const db = ch.database;
  const cluster = ch.cluster ?? null;
  const onCluster = cluster === null ? '' : ` ON CLUSTER '${cluster}'`;
  await ch.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}${onCluster}` });
  // On a cluster every node is a replica of the one migrations table (its Keeper path has no shard).
  const engine =
    cluster === null
      ? 'ReplacingMergeTree(applied_at)'
      : `ReplicatedReplacingMergeTree('/clickhouse/tables/all/${db}/schema_migrations', '{replica}', applied_at)`;
  await ch.client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations${onCluster}
      (version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3))
      ENGINE = ${engine} ORDER BY version`,
  });
  const applied = await appliedVersions(ch);
  const done: number[] = [];
  // The tables made so far, which the cluster statements of later migrations refer to.
  const clusterTables = new Map<string, string>();
  for (const migration of await loadMigrations(dir, db)) {
    const statements =
      cluster === null
        ? migration.statements
        : clusterMigration(migration.statements, { cluster, database: db }, clusterTables);
    if (applied.has(migration.version)) continue;
    for (const statement of statements) await ch.client.command({ query: statement });
    await ch.client.insert({
      table: `${db}.schema_migrations`,
      values: [{ version: migration.version, name: migration.name, checksum: migration.checksum }],
      format: 'JSONEachRow',
    });
    log.info({ version: migration.version, migration: migration.name }, 'clickhouse_migration_applied');
    done.push(migration.version);
  }
  return done;
}

async function appliedVersions(ch: ClickHouse): Promise<Set<number>> {
  const result = await ch.client.query({
    query: `SELECT DISTINCT version FROM ${ch.database}.schema_migrations`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ version: number }>();
  return new Set(rows.map((row) => Number(row.version)));
}

/** Reads the migration files; `{{database}}` in them becomes the configured (validated) database name. */
export async function loadMigrations(dir: string, database: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => FILE_NAME.test(file)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const text = await readFile(path.join(dir, file), 'utf8');
    const version = Number(FILE_NAME.exec(file)?.[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migrations share version ${version}`);
    migrations.push({
      version,
      name: file,
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: splitStatements(text.replaceAll('{{database}}', database)),
    });
  }
  return migrations;
}

/** Statements end with a semicolon at the end of a line; `--` comment lines are dropped. */
export function splitStatements(sql: string): string[] {
  const lines = sql.split('\n').filter((line) => !line.trimStart().startsWith('--'));
  return lines
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}
