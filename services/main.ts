import { loadConfig, ConfigError } from './shared/config.ts';
import { createHttpApp } from './shared/http/create-app.ts';
import { connectInfrastructure } from './shared/infrastructure.ts';
import { listen, Shutdown } from './shared/lifecycle.ts';
import { createLogger } from './shared/logger.ts';
import { startConsumer } from './consumer/start.ts';

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

  const infra = await connectInfrastructure(config, log, shutdown);
  if (config.services.includes('consumer')) {
    await startConsumer({ infra, log, shutdown, groupId: config.kafka?.groupId ?? 'embedded' });
  }
  const app = createHttpApp({ service, log, routes: [], checks: infra.checks, corsOrigins: config.corsOrigins });
  const http = await listen(app, config.port, config.host);
  shutdown.add('http', http.close);
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
