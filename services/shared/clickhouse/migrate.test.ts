import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMigrations, MIGRATIONS_DIR, splitStatements } from './migrate.ts';

describe('migrations', () => {
  it('splits statements at line-ending semicolons and drops comment lines', () => {
    const sql =
      "-- a comment; with a semicolon\nCREATE TABLE a (x String DEFAULT ';')\nENGINE = Memory;\n\nCREATE TABLE b (y UInt8) ENGINE = Memory;\n";
    expect(splitStatements(sql)).toEqual([
      "CREATE TABLE a (x String DEFAULT ';')\nENGINE = Memory",
      'CREATE TABLE b (y UInt8) ENGINE = Memory',
    ]);
  });

  it('loads the project migrations in version order with the database substituted', async () => {
    const migrations = await loadMigrations(MIGRATIONS_DIR, 'tenant_db');
    expect(migrations.map((m) => m.version)).toEqual([...migrations.map((m) => m.version)].sort((a, b) => a - b));
    expect(migrations[0]?.version).toBe(1);
    for (const migration of migrations) {
      expect(migration.statements.join('\n')).not.toContain('{{database}}');
      // Idempotent DDL, or a backfill that only runs while its target is still empty, or one into a
      // ReplacingMergeTree made by the same migration, where a repeated row collapses into one, or a
      // view's MODIFY QUERY, or an UPDATE to a constant, each of which sets the same again when repeated.
      const replacing = new Set(
        migration.statements.flatMap((s) =>
          /ENGINE = ReplacingMergeTree/.test(s) ? [/^CREATE TABLE IF NOT EXISTS ([\w.]+)/.exec(s)?.[1] ?? ''] : [],
        ),
      );
      const target = (s: string) => /^INSERT INTO ([\w.]+)/.exec(s)?.[1];
      const idempotent = (s: string) =>
        /IF NOT EXISTS|IF EXISTS/i.test(s) ||
        /^ALTER TABLE [\w.]+_mv MODIFY QUERY\s/.test(s) ||
        /^ALTER TABLE [\w.]+ UPDATE \w+ = \d+\s/.test(s) ||
        (target(s) !== undefined &&
          (s.includes(`(SELECT count() FROM ${target(s)}) = 0`) || replacing.has(target(s)!)));
      expect(migration.statements.filter((s) => !idempotent(s))).toEqual([]);
    }
    expect(migrations[0]?.statements[0]).toContain('tenant_db.usage_events');
  });

  it('refuses two files with the same version', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
    writeFileSync(path.join(dir, '001_a.sql'), 'SELECT 1;');
    writeFileSync(path.join(dir, '001_b.sql'), 'SELECT 2;');
    await expect(loadMigrations(dir, 'db')).rejects.toThrow(/share version 1/);
  });
});
