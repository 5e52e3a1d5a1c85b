import { loadConfig, ConfigError } from './shared/config.ts';
import { createHttpApp } from './shared/http/create-app.ts';
import { connectInfrastructure } from './shared/infrastructure.ts';
import { listen, Shutdown } from './shared/lifecycle.ts';
import { createLogger } from './shared/logger.ts';
import { faultRoutes } from './consumer/fault-routes.ts';
import { startConsumer } from './consumer/start.ts';
import { startIngest } from './ingest/start.ts';
import { startQuery } from './query/start.ts';
import type { Route } from './shared/http/define-route.ts';
import { buildOpenApi } from './shared/http/openapi.ts';
import { directRecordSink, type RecordSink } from './shared/records/record-sink.ts';
import { MemoryLiveUsage, RedisLiveUsage } from './shared/redis/live-usage.ts';

/**
 * The composition root of every deployment: `npm start` runs all three services in one process
 * with the embedded defaults; SERVICES=ingest (or any subset) runs a part of them.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const log = createLogger(config.logLevel);
  const service = config.services.join('+');
  const shutdown = new Shutdown(log, config.shutdownTimeoutMs);
  shutdown.installSignalHandlers();

  if (config.clickhouse.url === null && config.kafka !== null && !config.services.includes('consumer')) {
    // The embedded engine is this process's own: the consumer's database, where sessions and numbers
    // are stored, is not the one read here. Said loudly, as a split deployment needs CLICKHOUSE_URL.
    log.warn({ services: config.services, hint: 'set CLICKHOUSE_URL to read the database the consumer writes' }, 'clickhouse_embedded_without_consumer');
  }
  const infra = await connectInfrastructure(config, log, shutdown);
  // Shared by the consumer (writes) and the cost queries (read) of this process.
  const liveUsage = infra.redis === null ? new MemoryLiveUsage() : new RedisLiveUsage(infra.redis, config.redis?.keyPrefix ?? '');
  let directSink: RecordSink | null = null;
  let consumer: Awaited<ReturnType<typeof startConsumer>> | null = null;
  if (config.services.includes('consumer')) {
    consumer = await startConsumer({
      infra,
      log,
      shutdown,
      groupId: config.kafka?.groupId ?? 'embedded',
      rateCardPath: config.rateCardPath,
      redisKeyPrefix: config.redis?.keyPrefix ?? '',
      liveUsage,
      dataDir: config.dataDir,
      stallAfterMs: config.consumerStallMs,
    });
    const writer = consumer.writer;
    // Embedded mode: no broker between ingest and the writer, records go straight to ClickHouse.
    const direct = directRecordSink(async (envelopes, token) => {
      await writer.storeEnvelopes(envelopes.map((envelope) => ({ envelope, source: { partition: -1, offset: '-1' } })), token);
    });
    shutdown.add('direct-sink', direct.drain);
    directSink = direct;
  }
  const routes: Route[] = [
    ...(config.services.includes('ingest') ? await startIngest({ config, infra, log, shutdown, directSink }) : []),
    ...(config.services.includes('query') ? await startQuery({ infra, liveUsage, log, shutdown, rateCardPath: config.rateCardPath }) : []),
    ...(consumer !== null && config.faultInjection ? await faultRoutes(infra.clickhouse, log) : []),
  ];

  const app = createHttpApp({
    service,
    log,
    routes: routes.map((route) => route.register),
    checks: [...infra.checks, ...(consumer?.checks ?? [])],
    metrics: consumer?.metrics ?? [],
    corsOrigins: config.corsOrigins,
    openapi: buildOpenApi(routes, 'callmeter', '0.1.0'),
  });
  const http = await listen(app, config.port, config.host);
  shutdown.add('http', http.close);
  // Joining the group can take a session timeout after a crash: health is served meanwhile.
  await consumer?.run();
  log.info({ port: config.port, services: config.services, embedded: describeMode(config) }, 'callmeter_started');
}

function describeMode(config: ReturnType<typeof loadConfig>): Record<string, boolean> {
  return { clickhouse: config.clickhouse.url === null, kafka: config.kafka === null, redis: config.redis === null };
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  createLogger('error').fatal({ err: error }, 'startup_failed');
  process.exit(1);
});
