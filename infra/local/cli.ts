import path from 'node:path';
import { LocalKafka } from './kafka.ts';
import { LocalRedis } from './redis.ts';

/**
 * `npm run dev:services`: the real Kafka broker and redis-server for development, in
 * .local/dev (fresh each time), until Ctrl-C. Prints the variables that point callmeter at them.
 */
async function main(): Promise<void> {
  const folder = path.resolve(import.meta.dirname, '../../.local/dev', String(Date.now()));
  const kafka = await LocalKafka.create(path.join(folder, 'kafka'));
  const redis = await LocalRedis.create(path.join(folder, 'redis'));
  await Promise.all([kafka.start(), redis.start()]);
  process.stdout.write(
    `export KAFKA_BROKERS=${kafka.brokers}\nexport REDIS_URL=${redis.url}\n# data and logs: ${folder}\n`,
  );
  const stop = async () => {
    await Promise.allSettled([kafka.stop(), redis.stop()]);
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
