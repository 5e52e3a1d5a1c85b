import { copyFile, mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate, MIGRATIONS_DIR } from '../../services/shared/clickhouse/migrate.ts';
import { readStoredKeys } from '../../services/shared/clickhouse/tables/api-keys.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { isolate, testConfig } from '../support/harness.ts';

const OFF_KEY = '11111111-1111-4111-8111-111111111111';
const ADMIN_MADE = '22222222-2222-4222-8222-222222222222';

function storedKey(id: string, createdBy: string, version = 1) {
  return {
    id,
    prefix: 'cm_live_abcdefgh',
    name: null,
    scope: 'admin',
    user_id: null,
    salt: 'a'.repeat(32),
    secret_hash: 'b'.repeat(64),
    created_at: '2026-01-01 00:00:00.000',
    expires_at: null,
    revoked_at: null,
    created_by: createdBy,
    version,
    record_id: id,
  };
}

describe('the mark of API keys made while AUTH_MODE=off, on a database made before it', () => {
  const log = createLogger('warn');
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolate('api-keys-migration')));
  });

  afterAll(async () => {
    await ch?.client.close();
  });

  it('marks the keys stored before the column by their creator, anonymous, and reads the mark of later versions as written', async () => {
    const files = await readdir(MIGRATIONS_DIR);
    const marking = files.find((name) => name.endsWith('_api_keys_auth_off.sql'))!;
    const older = await mkdtemp(path.join(os.tmpdir(), 'callmeter-migrations-'));
    for (const file of files.filter((name) => name < marking))
      await copyFile(path.join(MIGRATIONS_DIR, file), path.join(older, file));
    await migrate(ch, log, older);
    await ch.client.insert({
      table: `${ch.database}.api_keys`,
      values: [storedKey(OFF_KEY, 'anonymous'), storedKey(ADMIN_MADE, 'bootstrap')],
      format: 'JSONEachRow',
    });
    expect(await migrate(ch, log)).toContain(Number(marking.slice(0, 3)));
    const marks = async () =>
      new Map((await readStoredKeys(ch)).map((key) => [key.id, [key.created_while_auth_off, key.version]]));
    expect(await marks()).toEqual(
      new Map([
        [OFF_KEY, [true, 1]],
        [ADMIN_MADE, [false, 1]],
      ]),
    );
    // A new version written with the mark (a revocation keeps it; here one says false) is read as written.
    await ch.client.insert({
      table: `${ch.database}.api_keys`,
      values: [{ ...storedKey(OFF_KEY, 'anonymous', 2), created_while_auth_off: false }],
      format: 'JSONEachRow',
    });
    expect((await marks()).get(OFF_KEY)).toEqual([false, 2]);
    expect(await migrate(ch, log)).toEqual([]);
  });
});
