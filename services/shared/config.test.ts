import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('takes CLICKHOUSE_CLUSTER with a server only', () => {
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: 'callmeter' }).clickhouse.cluster).toBe(
      'callmeter',
    );
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'callmeter' })).toThrow(/CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL/);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: "a'b" })).toThrow(
      /CLICKHOUSE_CLUSTER/,
    );
  });

  it('runs fully embedded with no variable set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      services: ['ingest', 'consumer', 'query'],
      logLevel: 'info',
      kafka: null,
      redis: null,
    });
    expect(config.clickhouse).toEqual({
      url: null,
      database: 'callmeter',
      cluster: null,
      username: null,
      password: null,
      readLimits: { maxExecutionTimeS: 20, maxResultBytes: 268435456 },
      readConnections: 2,
      embeddedMemory: { limitBytes: 4096 * 1024 * 1024, cacheBytes: 64 * 1024 * 1024 },
    });
    expect(config.queryCache).toEqual({ maxAgeMs: 30_000, maxBytes: 64 * 1024 * 1024 });
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('opens as many embedded read connections as libuv has worker threads for, beside the writer and the ingest reads', () => {
    expect(loadConfig({ CLICKHOUSE_READ_CONNECTIONS: '6', UV_THREADPOOL_SIZE: '8' }).clickhouse.readConnections).toBe(
      6,
    );
    expect(() => loadConfig({ CLICKHOUSE_READ_CONNECTIONS: '4' })).toThrow(
      /CLICKHOUSE_READ_CONNECTIONS: 4 read connections, .* need 6 .* UV_THREADPOOL_SIZE is 4: raise it/,
    );
    // Over HTTP the embedded connections are not opened: nothing to fit.
    expect(
      loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_READ_CONNECTIONS: '16' }).clickhouse.readConnections,
    ).toBe(16);
    expect(() => loadConfig({ CLICKHOUSE_READ_CONNECTIONS: '0' })).toThrow(/CLICKHOUSE_READ_CONNECTIONS/);
  });

  it('sizes the embedded engine for a laptop unless CLICKHOUSE_EMBEDDED_MEMORY_MB and _CACHE_MB say otherwise', () => {
    const mib = 1024 * 1024;
    expect(
      loadConfig({ CLICKHOUSE_EMBEDDED_MEMORY_MB: '16384', CLICKHOUSE_EMBEDDED_CACHE_MB: '4096' }).clickhouse
        .embeddedMemory,
    ).toEqual({ limitBytes: 16_384 * mib, cacheBytes: 4_096 * mib });
    expect(() => loadConfig({ CLICKHOUSE_EMBEDDED_MEMORY_MB: '100' })).toThrow(/CLICKHOUSE_EMBEDDED_MEMORY_MB/);
    expect(() => loadConfig({ CLICKHOUSE_EMBEDDED_MEMORY_MB: '512', CLICKHOUSE_EMBEDDED_CACHE_MB: '300' })).toThrow(
      /CLICKHOUSE_EMBEDDED_CACHE_MB: 300 is more than half of CLICKHOUSE_EMBEDDED_MEMORY_MB \(512\)/,
    );
  });

  it('turns the answer cache off with QUERY_CACHE_SECONDS=0 and bounds it by QUERY_CACHE_MB', () => {
    expect(loadConfig({ QUERY_CACHE_SECONDS: '0' }).queryCache).toBeNull();
    expect(loadConfig({ QUERY_CACHE_SECONDS: '5', QUERY_CACHE_MB: '8' }).queryCache).toEqual({
      maxAgeMs: 5000,
      maxBytes: 8 * 1024 * 1024,
    });
    expect(() => loadConfig({ QUERY_CACHE_SECONDS: 'forever' })).toThrow(/QUERY_CACHE_SECONDS/);
  });

  it('switches each dependency to its real service by its own variable', () => {
    const config = loadConfig({
      KAFKA_BROKERS: 'k1:9092, k2:9092',
      REDIS_URL: 'redis://r:6379',
      CLICKHOUSE_URL: 'http://ch:8123',
      SERVICES: 'consumer,query',
    });
    expect(config.kafka?.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(config.redis?.url).toBe('redis://r:6379');
    expect(config.clickhouse.url).toBe('http://ch:8123');
    expect(config.services).toEqual(['consumer', 'query']);
  });

  it('names every bad variable in one error', () => {
    const bad = {
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      KAFKA_BROKERS: 'nohost',
      CLICKHOUSE_URL: 'ftp://x',
      CLICKHOUSE_DATABASE: 'drop table',
      REDIS_URL: '::',
      SERVICES: 'billing',
    };
    let error: unknown;
    try {
      loadConfig(bad);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const named = (error as ConfigError).problems.map((problem) => problem.split(':')[0]);
    expect(named.sort()).toEqual([
      'CLICKHOUSE_DATABASE',
      'CLICKHOUSE_URL',
      'KAFKA_BROKERS',
      'LOG_LEVEL',
      'PORT',
      'REDIS_URL',
      'SERVICES',
    ]);
  });

  it('never echoes the password of a bad URL', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://user:secret@host' })).toThrow(/\*\*\*@host/);
    expect(() => loadConfig({ REDIS_URL: 'http://user:secret@host' })).not.toThrow(/secret/);
  });

  it("allows the CORS origins of CORS_ORIGINS and of FRONTEND_URL, the replaced service's variable, once each", () => {
    const config = loadConfig({
      CORS_ORIGINS: 'https://a.example',
      FRONTEND_URL: 'http://localhost:3000, https://a.example,',
    });
    expect(config.corsOrigins).toEqual(['https://a.example', 'http://localhost:3000']);
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });

  it('bounds usage to 35 days back and 1 hour after the session ended by default, each configurable', () => {
    expect(loadConfig({}).usage).toEqual({ maxAgeMs: 35 * 86_400_000, graceAfterEndMs: 3_600_000 });
    expect(loadConfig({ USAGE_MAX_AGE_DAYS: '90', USAGE_GRACE_AFTER_END_SECONDS: '0' }).usage).toEqual({
      maxAgeMs: 90 * 86_400_000,
      graceAfterEndMs: 0,
    });
    // Past 3,650 days an instant could leave what the rollups' DateTime buckets hold.
    expect(() => loadConfig({ USAGE_MAX_AGE_DAYS: '20000' })).toThrow(/USAGE_MAX_AGE_DAYS/);
  });

  it('keeps usage claims 7 days by default, configurable from an hour to 30 days', () => {
    expect(loadConfig({}).usageClaimTtlSeconds).toBe(7 * 86_400);
    expect(loadConfig({ USAGE_CLAIM_TTL_SECONDS: '10800' }).usageClaimTtlSeconds).toBe(10_800);
    expect(() => loadConfig({ USAGE_CLAIM_TTL_SECONDS: '60' })).toThrow(/USAGE_CLAIM_TTL_SECONDS/);
  });

  it('bounds tokens to 24 hours, failed authentications to 100 then 10 a second per address, and keys to 100 a tenant by default, each configurable', () => {
    const jwks = { AUTH_JWKS_URL: 'https://idp.example/jwks.json', AUTH_JWT_ISSUER: 'https://idp.example' };
    const auth = loadConfig(jwks).auth;
    expect([auth.jwt?.maxAgeMs, auth.failedAuth, auth.keysPerTenant]).toEqual([
      86_400_000,
      { name: 'failed-auth', perSecond: 10, burst: 100 },
      100,
    ]);
    const set = loadConfig({
      ...jwks,
      AUTH_TOKEN_MAX_AGE_SECONDS: '3600',
      AUTH_FAILURES_PER_SECOND: '0',
      API_KEYS_PER_TENANT: '5',
    }).auth;
    expect([set.jwt?.maxAgeMs, set.failedAuth, set.keysPerTenant]).toEqual([3_600_000, null, 5]);
    expect(() => loadConfig({ ...jwks, AUTH_TOKEN_MAX_AGE_SECONDS: '10' })).toThrow(/AUTH_TOKEN_MAX_AGE_SECONDS/);
    expect(() => loadConfig({ API_KEYS_PER_TENANT: '0' })).toThrow(/API_KEYS_PER_TENANT/);
  });

  it('takes the client address from the socket unless TRUST_PROXY=1', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(true);
    expect(() => loadConfig({ TRUST_PROXY: 'yes' })).toThrow(/TRUST_PROXY/);
  });

  it('returns a frozen object', () => {
    const config = loadConfig({ KAFKA_BROKERS: 'k:1' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.kafka?.brokers)).toBe(true);
  });
});

describe('the configuration table of docs/operations.md', () => {
  it('lists exactly the variables the config reads', async () => {
    const { readFile } = await import('node:fs/promises');
    const source = await readFile(new URL('./config.ts', import.meta.url), 'utf8');
    const page = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/(?:read\.\w+\(|env\.)'?([A-Z][A-Z0-9_]+)/g)].map((match) => match[1]));
    const documented = new Set([...page.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]));
    expect(read.size).toBeGreaterThan(50);
    expect([...documented].sort()).toEqual([...read].sort());
  });
});
