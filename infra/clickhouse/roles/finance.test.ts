import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const role = readFileSync(path.join(import.meta.dirname, 'finance.sql'), 'utf8');
const migrations = readdirSync(path.join(ROOT, 'infra/clickhouse/migrations'))
  .filter((file) => file.endsWith('.sql'))
  .map((file) => readFileSync(path.join(ROOT, 'infra/clickhouse/migrations', file), 'utf8'))
  .join('\n');
const created = new Set(
  [...migrations.matchAll(/CREATE (?:TABLE|MATERIALIZED VIEW|VIEW) IF NOT EXISTS \{\{database\}\}\.(\w+)/g)].map(
    (match) => match[1]!,
  ),
);
const granted = [...role.matchAll(/^GRANT SELECT ON \{\{database\}\}\.(\w+) TO callmeter_finance;$/gm)].map(
  (match) => match[1]!,
);
const guide = readFileSync(path.join(ROOT, 'docs/finance-sql.md'), 'utf8').split('\n## Tables')[1]!.split('\n## ')[0]!;

// No ClickHouse server runs here (the embedded engine has no users): the role is checked against the
// migrations and the SQL guide by reading, and docs/finance-sql.md says so.
describe('the finance role (infra/clickhouse/roles/finance.sql)', () => {
  it('grants SELECT only, on tables the migrations create, and never on the key hashes', () => {
    expect(granted.length).toBeGreaterThan(10);
    expect(granted.filter((table) => !created.has(table))).toEqual([]);
    expect(granted).not.toContain('api_keys');
    expect(role).not.toMatch(/^GRANT (?!SELECT)/m);
  });

  it('grants every table the SQL guide documents', () => {
    const documented = new Set(
      [...guide.matchAll(/^\| `(\w+)`(?:, `(\w+)`)*/gm)].flatMap((match) =>
        [...match[0].matchAll(/`(\w+)`/g)].map((m) => m[1]!),
      ),
    );
    expect([...documented].filter((table) => !granted.includes(table))).toEqual([]);
    expect(documented.size).toBeGreaterThan(10);
  });

  it('bounds every query: readonly, execution time, memory and result rows', () => {
    for (const setting of ['readonly = 1', 'max_execution_time', 'max_memory_usage', 'max_result_rows'])
      expect(role).toContain(setting);
    expect(role).toContain("CREATE ROLE IF NOT EXISTS callmeter_finance SETTINGS PROFILE 'callmeter_finance_profile'");
  });
});
