import path from 'node:path';

export const SERVICE_NAMES = ['ingest', 'consumer', 'query'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly services: readonly ServiceName[];
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  readonly shutdownTimeoutMs: number;
  readonly corsOrigins: readonly string[];
  /**
   * TRUST_PROXY (off by default): the client's address is the last X-Forwarded-For entry, which the proxy
   * sets, rather than the socket's peer. Set it only when the services are reachable through the proxy
   * alone: otherwise anyone sends the header and picks the address the per-address limits count.
   */
  readonly trustProxy: boolean;
  /** The rate card file; null: the card shipped in infra/rate-card/rate-card.json. */
  readonly rateCardPath: string | null;
  /** RATE_ENTRIES_PER_TENANT: how many entries not yet ended one tenant may hold (POST /api/rates past it is a 409). */
  readonly rateEntriesPerTenant: number;
  /** Absent: records go straight from ingest to the writer in this process (embedded mode). */
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly groupId: string;
    readonly topicSuffix: string;
  } | null;
  readonly clickhouse: {
    /** Absent: the embedded engine (chdb) with its data under dataDir. */
    readonly url: string | null;
    readonly database: string;
    /** CLICKHOUSE_CLUSTER: the cluster the migrations create their tables on (Replicated, with Distributed tables); null: one server. */
    readonly cluster: string | null;
    readonly username: string | null;
    readonly password: string | null;
    /** Every read (cost queries, history, stored-id lookups) stops past these: a 500, never a stalled or huge answer. */
    readonly readLimits: { readonly maxExecutionTimeS: number; readonly maxResultBytes: number };
    /** CLICKHOUSE_READ_CONNECTIONS: the embedded engine's connections for the cost queries, run side by side. */
    readonly readConnections: number;
    /**
     * The embedded engine's memory, given to it as server settings when it starts (unused over HTTP): what
     * all of it may allocate (CLICKHOUSE_EMBEDDED_MEMORY_MB) and its caches together (CLICKHOUSE_EMBEDDED_CACHE_MB).
     */
    readonly embeddedMemory: { readonly limitBytes: number; readonly cacheBytes: number };
  };
  /** Absent: live state lives in this process's memory. */
  readonly redis: { readonly url: string; readonly keyPrefix: string } | null;
  /** The usage an event may still report: no older than maxAgeMs, nor occurred more than graceAfterEndMs after its session's end. */
  readonly usage: { readonly maxAgeMs: number; readonly graceAfterEndMs: number };
  /** FAULT_INJECTION=1: the consumer serves POST /_faults/clickhouse-inserts (fault tests only; never in production). */
  readonly faultInjection: boolean;
  /** Who may call the /api routes (AUTH_MODE); see services/shared/auth/README.md. */
  readonly auth: AuthConfig;
  /** /readyz of a consumer answers 503 once one batch has failed to store for this long (CONSUMER_STALL_SECONDS). */
  readonly consumerStallMs: number;
  /** /readyz of the embedded mode answers 503 while the journal's disk has less free than this (JOURNAL_MIN_FREE_MB). */
  readonly journalMinFreeBytes: number;
  /** While the embedded writer is busy, rounds start at most every `ms` unless `records` wait or a read waits (JOURNAL_GATHER_MS, JOURNAL_GATHER_RECORDS). */
  readonly journalGather: { readonly ms: number; readonly records: number };
  /**
   * How many members of the consumer group this process runs (CONSUMER_MEMBERS): each is a kafkajs
   * consumer with its own fetch loop and rounds, so that one member's insert runs in ClickHouse while
   * another decodes and prices on the main thread.
   */
  readonly consumerMembers: number;
  /**
   * The expiry of a usage claim a round left behind in Redis (USAGE_CLAIM_TTL_SECONDS): claims are
   * released once their round is stored, so this no longer sizes Redis.
   */
  readonly usageClaimTtlSeconds: number;
  /** The live cost streams (GET /api/costs/live, /api/sessions/{id}/cost-stream). */
  /**
   * The query service's per-tenant answer cache (summary, timeline, by-agent), dropped when the tenant's
   * next batch is stored; null: QUERY_CACHE_SECONDS=0, every answer read afresh.
   */
  readonly queryCache: { readonly maxAgeMs: number; readonly maxBytes: number } | null;
  /**
   * The scheduled Parquet export (EXPORT_DIR, Hive-style day folders), written by the query service
   * every EXPORT_INTERVAL_SECONDS for the last EXPORT_LOOKBACK_DAYS complete days and any day not yet
   * written; null: EXPORT_DIR unset, no files written.
   */
  readonly usageExport: { readonly dir: string; readonly intervalMs: number; readonly lookbackDays: number } | null;
  /**
   * PERIOD_AUTO_CLOSE_DAYS: ingest closes every tenant's month with usage this many days after it ended
   * (docs/statements.md); null: unset, months are closed by hand only.
   */
  readonly periodAutoCloseDays: number | null;
  /** What one tenant may hold, so that none costs the others: past a cap, a 4xx naming it. */
  readonly agentCaps: {
    /** AGENTS_PER_TENANT: active agents (a deleted one no longer counts). */
    readonly agentsPerTenant: number;
    /** NUMBERS_PER_TENANT: phone numbers held by the tenant's agents. */
    readonly numbersPerTenant: number;
  };
  /** Outbound webhooks (docs/webhooks.md), delivered by the process that runs the consumer. */
  readonly webhooks: {
    /** WEBHOOK_ALLOW_PRIVATE=1: loopback, private and link-local addresses are allowed (development and tests only). */
    readonly allowPrivate: boolean;
    /** WEBHOOK_TIMEOUT_MS: one attempt, answer included, ends within this (default 10 s). */
    readonly timeoutMs: number;
    /** WEBHOOK_POLL_MS: how often the delivery looks for due messages besides right after an emit. */
    readonly pollMs: number;
    /** WEBHOOK_RETRY_BASE_MS: the first retry's ceiling; each doubles it, up to 6 h (full jitter below it). */
    readonly retryBaseMs: number;
  };
  readonly liveStreams: {
    /** LIVE_STREAMS_PER_TENANT: open streams one tenant may hold in one process; past it, 429. */
    readonly perTenant: number;
    /**
     * LIVE_STREAMS_PER_CALLER: open streams of one caller that may name any tenant (an unbound key or
     * token by its id; in AUTH_MODE=off the source address) in one process; past it, 429.
     */
    readonly perCaller: number;
    /** LIVE_STREAMS_MAX: open streams of one process, all tenants together; past it, 503. */
    readonly total: number;
    /** LIVE_STREAM_READS: ClickHouse reads the streams of one process run at once (streams of one tenant share one). */
    readonly reads: number;
    /** LIVE_STREAM_HEARTBEAT_SECONDS: a comment line after this long without a message. */
    readonly heartbeatMs: number;
  };
}

export interface AuthConfig {
  /** off: today's bare x-user-id, byte for byte (the default); on: a credential on every /api route. */
  readonly mode: 'off' | 'on';
  /** ADMIN_API_KEY: an admin credential that is not stored, to create the first keys. */
  readonly adminKey: string | null;
  /** User tokens (dashboards): JWTs verified against a JWKS; null when AUTH_JWKS_URL is not set. */
  readonly jwt: {
    readonly jwksUrl: string;
    readonly issuer: string;
    readonly audience: string | null;
    readonly tenantClaim: string;
    readonly clockToleranceS: number;
    /**
     * AUTH_TOKEN_MAX_AGE_SECONDS: a token whose `exp` lies further ahead, or whose `iat` lies further
     * back, is refused: a leaked token is not good for longer than this whatever its issuer wrote.
     */
    readonly maxAgeMs: number;
  } | null;
  /** METRICS_TOKEN: /metrics then needs `Authorization: Bearer <it>`; null: /metrics is open. */
  readonly metricsToken: string | null;
  /** How often each process re-reads the stored keys (a revocation holds everywhere within this and a read). */
  readonly keyRefreshMs: number;
  /** API_KEYS_PER_TENANT: active keys one tenant may hold; past it, creating one is a 409. */
  readonly keysPerTenant: number;
  /**
   * Failed authentications per source address (AUTH_MODE=on): past the burst, refilled at perSecond,
   * a credential that needs more than a key lookup is a 429 before it is checked.
   */
  readonly failedAuth: { readonly name: 'failed-auth'; readonly perSecond: number; readonly burst: number } | null;
  /** Token buckets per credential and per tenant (AUTH_MODE=on only); null: no limit. */
  readonly rateLimits: {
    readonly perKey: { readonly name: 'per-key'; readonly perSecond: number; readonly burst: number } | null;
    readonly perTenant: { readonly name: 'per-tenant'; readonly perSecond: number; readonly burst: number } | null;
  };
}

const MIB = 1_048_576;

/** An admin key or metrics token shorter than this could be guessed (128 bits as base64url or hex, roughly). */
const MIN_SECRET_LENGTH = 32;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads and validates the environment once. Every bad variable is collected and reported
 * in one error, so a deployment fails with the whole list rather than one fix at a time.
 */
export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const read = new EnvReader(env, problems);

  const port = read.integer('PORT', 8080, 0, 65535);
  const host = read.string('HOST', '0.0.0.0');
  const listed = read.list('SERVICES', [...SERVICE_NAMES]);
  const services = listed.filter((name): name is ServiceName => (SERVICE_NAMES as readonly string[]).includes(name));
  if (services.length !== listed.length || services.length === 0) {
    problems.push(`SERVICES: "${listed.join(',')}" must name some of ${SERVICE_NAMES.join(', ')}`);
  }
  const dataDir = path.resolve(read.string('DATA_DIR', './data'));
  const logLevel = read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info');
  const shutdownTimeoutMs = read.integer('SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000);
  // FRONTEND_URL is the replaced service's name for the same list; its deployments set only that.
  const corsOrigins = [...new Set([...read.list('CORS_ORIGINS', []), ...read.list('FRONTEND_URL', [])])];
  const trustProxy = read.oneOf('TRUST_PROXY', ['0', '1'], '0') === '1';
  const rateCard = read.string('RATE_CARD_PATH', '');
  const rateCardPath = rateCard === '' ? null : path.resolve(rateCard);
  const rateEntriesPerTenant = read.integer('RATE_ENTRIES_PER_TENANT', 1_000, 1, 100_000);

  const brokers = read.list('KAFKA_BROKERS', []);
  for (const broker of brokers) {
    if (!/^[^\s:/]+:\d{1,5}$/.test(broker)) problems.push(`KAFKA_BROKERS: "${broker}" is not host:port`);
  }
  const kafka =
    brokers.length === 0
      ? null
      : {
          brokers,
          clientId: read.string('KAFKA_CLIENT_ID', 'callmeter'),
          groupId: read.string('KAFKA_GROUP_ID', 'callmeter-consumer'),
          topicSuffix: read.identifier('KAFKA_TOPIC_SUFFIX', '', /^[A-Za-z0-9._-]*$/),
        };

  const clickhouseUrl = read.optionalUrl('CLICKHOUSE_URL', ['http:', 'https:']);
  const clickhouse = {
    url: clickhouseUrl,
    database: read.identifier('CLICKHOUSE_DATABASE', 'callmeter', /^[A-Za-z_][A-Za-z0-9_]{0,62}$/),
    cluster: read.identifier('CLICKHOUSE_CLUSTER', '', /^([A-Za-z_][A-Za-z0-9_]{0,62})?$/) || null,
    username: env.CLICKHOUSE_USER ?? null,
    password: env.CLICKHOUSE_PASSWORD ?? null,
    readLimits: {
      // Below the HTTP client's 30 s request timeout, so that the server stops the statement itself.
      maxExecutionTimeS: read.integer('CLICKHOUSE_READ_MAX_EXECUTION_TIME_S', 20, 1, 29),
      maxResultBytes: read.integer('CLICKHOUSE_READ_MAX_RESULT_BYTES', 256 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
    },
    readConnections: read.integer('CLICKHOUSE_READ_CONNECTIONS', 2, 1, 64),
    // A laptop's share by default; ClickHouse's own defaults (90 % of the RAM, caches of 5 GiB each) are a server's.
    embeddedMemory: {
      limitBytes: read.integer('CLICKHOUSE_EMBEDDED_MEMORY_MB', 4_096, 256, 1_048_576) * MIB,
      cacheBytes: read.integer('CLICKHOUSE_EMBEDDED_CACHE_MB', 64, 0, 524_288) * MIB,
    },
  };
  // The caches count against the limit: at most half of it, so that statements keep the rest.
  if (clickhouse.embeddedMemory.cacheBytes * 2 > clickhouse.embeddedMemory.limitBytes)
    problems.push(
      `CLICKHOUSE_EMBEDDED_CACHE_MB: ${clickhouse.embeddedMemory.cacheBytes / MIB} is more than half of CLICKHOUSE_EMBEDDED_MEMORY_MB (${clickhouse.embeddedMemory.limitBytes / MIB})`,
    );
  if (clickhouse.cluster !== null && clickhouse.url === null)
    problems.push('CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL (the embedded engine is one server)');
  // Each running embedded statement holds one of libuv's worker threads (Node's default is 4): the read
  // connections, the writer's and the ingest reads' must all fit, or reads would wait for a thread.
  const workerThreads = read.integer('UV_THREADPOOL_SIZE', 4, 1, 1024);
  if (clickhouse.url === null && clickhouse.readConnections + 2 > workerThreads)
    problems.push(
      `CLICKHOUSE_READ_CONNECTIONS: ${clickhouse.readConnections} read connections, the writer's and the ingest reads' need ${clickhouse.readConnections + 2} of libuv's worker threads, and UV_THREADPOOL_SIZE is ${workerThreads}: raise it`,
    );

  const redisUrl = read.optionalUrl('REDIS_URL', ['redis:', 'rediss:']);
  const redis = redisUrl === null ? null : { url: redisUrl, keyPrefix: read.string('REDIS_KEY_PREFIX', 'callmeter:') };

  // 35 days: a month's bill stays open for a few days after the month; 3,650 keeps every instant a
  // DateTime bucket of the rollups can hold (1970..2106).
  const usage = {
    maxAgeMs: read.integer('USAGE_MAX_AGE_DAYS', 35, 1, 3650) * 86_400_000,
    graceAfterEndMs: read.integer('USAGE_GRACE_AFTER_END_SECONDS', 3600, 0, 30 * 86_400) * 1000,
  };

  const auth = readAuth(read, problems);
  const consumerStallMs = read.integer('CONSUMER_STALL_SECONDS', 60, 1, 86_400) * 1000;
  // Room for the backlog the journal may hold (JOURNAL_BACKLOG_LIMIT records of about 1 KB) and the engine's parts.
  const journalMinFreeBytes = read.integer('JOURNAL_MIN_FREE_MB', 64, 0, 1_048_576) * 1_048_576;
  const journalGather = {
    ms: read.integer('JOURNAL_GATHER_MS', 200, 0, 10_000),
    records: read.integer('JOURNAL_GATHER_RECORDS', 500, 1, 10_000),
  };
  const consumerMembers = read.integer('CONSUMER_MEMBERS', 3, 1, 16);
  const usageClaimTtlSeconds = read.integer('USAGE_CLAIM_TTL_SECONDS', 7 * 86_400, 3_600, 30 * 86_400);
  const cacheSeconds = read.integer('QUERY_CACHE_SECONDS', 30, 0, 3_600);
  const queryCache =
    cacheSeconds === 0
      ? null
      : { maxAgeMs: cacheSeconds * 1000, maxBytes: read.integer('QUERY_CACHE_MB', 64, 1, 65_536) * 1024 * 1024 };
  const exportDir = read.string('EXPORT_DIR', '');
  const usageExport =
    exportDir === ''
      ? null
      : {
          dir: path.resolve(exportDir),
          intervalMs: read.integer('EXPORT_INTERVAL_SECONDS', 3_600, 10, 86_400) * 1000,
          lookbackDays: read.integer('EXPORT_LOOKBACK_DAYS', 3, 1, 366),
        };
  const autoClose = read.string('PERIOD_AUTO_CLOSE_DAYS', '');
  const periodAutoCloseDays = autoClose === '' ? null : read.integer('PERIOD_AUTO_CLOSE_DAYS', 5, 0, 365);
  // The list of a tenant's agents shows at most 1,000: a cap above it would hide agents from their owner.
  const agentCaps = {
    agentsPerTenant: read.integer('AGENTS_PER_TENANT', 1_000, 1, 1_000),
    numbersPerTenant: read.integer('NUMBERS_PER_TENANT', 1_000, 1, 1_000),
  };
  const liveStreams = {
    perTenant: read.integer('LIVE_STREAMS_PER_TENANT', 20, 1, 10_000),
    perCaller: read.integer('LIVE_STREAMS_PER_CALLER', 100, 1, 100_000),
    total: read.integer('LIVE_STREAMS_MAX', 1_000, 1, 100_000),
    reads: read.integer('LIVE_STREAM_READS', 1, 1, 64),
    heartbeatMs: read.integer('LIVE_STREAM_HEARTBEAT_SECONDS', 15, 1, 3_600) * 1000,
  };
  const webhooks = {
    allowPrivate: read.oneOf('WEBHOOK_ALLOW_PRIVATE', ['0', '1'], '0') === '1',
    timeoutMs: read.integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    pollMs: read.integer('WEBHOOK_POLL_MS', 1_000, 50, 60_000),
    retryBaseMs: read.integer('WEBHOOK_RETRY_BASE_MS', 10_000, 10, 3_600_000),
  };
  // FAULT_ROUTES is the name in use; FAULT_INJECTION the earlier one, which the fault tests still set. Either mounts /_faults/*.
  const faultInjection =
    read.oneOf('FAULT_ROUTES', ['0', '1'], '0') === '1' || read.oneOf('FAULT_INJECTION', ['0', '1'], '0') === '1';

  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze({
    port,
    host,
    services,
    dataDir,
    logLevel,
    shutdownTimeoutMs,
    corsOrigins,
    trustProxy,
    rateCardPath,
    rateEntriesPerTenant,
    kafka,
    clickhouse,
    redis,
    usage,
    faultInjection,
    consumerStallMs,
    journalMinFreeBytes,
    journalGather,
    consumerMembers,
    usageClaimTtlSeconds,
    queryCache,
    usageExport,
    periodAutoCloseDays,
    liveStreams,
    webhooks,
    agentCaps,
    auth,
  });
}

function readAuth(read: EnvReader, problems: string[]): AuthConfig {
  const mode = read.oneOf('AUTH_MODE', ['off', 'on'] as const, 'off');
  const secret = (name: string, value: string): string | null => {
    if (value === '') return null;
    if (value.length < MIN_SECRET_LENGTH) problems.push(`${name}: must be at least ${MIN_SECRET_LENGTH} characters`);
    return value;
  };
  const jwksUrl = read.optionalUrl('AUTH_JWKS_URL', ['http:', 'https:']);
  const issuer = read.string('AUTH_JWT_ISSUER', '');
  if (jwksUrl !== null && issuer === '')
    problems.push('AUTH_JWT_ISSUER: required with AUTH_JWKS_URL (a token is checked against its issuer)');
  const audience = read.string('AUTH_JWT_AUDIENCE', '');
  return {
    mode,
    adminKey: secret('ADMIN_API_KEY', read.string('ADMIN_API_KEY', '')),
    jwt:
      jwksUrl === null
        ? null
        : {
            jwksUrl,
            issuer,
            audience: audience === '' ? null : audience,
            tenantClaim: read.string('AUTH_JWT_TENANT_CLAIM', 'sub'),
            clockToleranceS: read.integer('AUTH_JWT_CLOCK_SKEW_SECONDS', 30, 0, 600),
            maxAgeMs: read.integer('AUTH_TOKEN_MAX_AGE_SECONDS', 86_400, 60, 30 * 86_400) * 1000,
          },
    metricsToken: secret('METRICS_TOKEN', read.string('METRICS_TOKEN', '')),
    keyRefreshMs: read.integer('AUTH_KEY_REFRESH_MS', 2_000, 100, 60_000),
    keysPerTenant: read.integer('API_KEYS_PER_TENANT', 100, 1, 100_000),
    failedAuth: bucket(
      'failed-auth',
      read.integer('AUTH_FAILURES_PER_SECOND', 10, 0, 1_000_000),
      read.integer('AUTH_FAILURES_BURST', 100, 1, 10_000_000),
    ),
    rateLimits: {
      perKey: bucket(
        'per-key',
        read.integer('RATE_LIMIT_KEY_PER_SECOND', 1_000, 0, 1_000_000),
        read.integer('RATE_LIMIT_KEY_BURST', 2_000, 1, 10_000_000),
      ),
      perTenant: bucket(
        'per-tenant',
        read.integer('RATE_LIMIT_TENANT_PER_SECOND', 2_000, 0, 1_000_000),
        read.integer('RATE_LIMIT_TENANT_BURST', 4_000, 1, 10_000_000),
      ),
    },
  };
}

/** A rate of 0 turns the limit off. */
function bucket<N extends string>(
  name: N,
  perSecond: number,
  burst: number,
): { name: N; perSecond: number; burst: number } | null {
  return perSecond === 0 ? null : { name, perSecond, burst: Math.max(1, burst) };
}

class EnvReader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
      this.problems.push(`${name}: "${value}" is not an integer between ${min} and ${max}`);
      return fallback;
    }
    return parsed;
  }

  list(name: string, fallback: string[]): string[] {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}: "${value}" is not one of ${allowed.join(', ')}`);
    return fallback;
  }

  identifier(name: string, fallback: string, pattern: RegExp): string {
    const value = this.raw(name) ?? fallback;
    if (!pattern.test(value)) this.problems.push(`${name}: "${value}" does not match ${pattern.source}`);
    return value;
  }

  optionalUrl(name: string, protocols: readonly string[]): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    try {
      const url = new URL(value);
      if (protocols.includes(url.protocol)) return value;
    } catch {
      // reported below
    }
    this.problems.push(`${name}: "${redact(value)}" is not a ${protocols.join(' or ')} URL`);
    return null;
  }
}

function redact(value: string): string {
  return value.replace(/\/\/[^@/]*@/, '//***@');
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
