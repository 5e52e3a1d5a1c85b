import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startTestServices, type TestServices } from './services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    services: TestServices;
  }
}

/** Starts Kafka and Redis once per run; every integration file isolates itself inside them. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const say = (line: string) => process.stderr.write(`[test services] ${line}\n`);
  const services = await startTestServices(process.env, say);
  project.provide('services', {
    kafkaBrokers: services.kafkaBrokers,
    redisUrl: services.redisUrl,
    clickhouseUrl: services.clickhouseUrl,
  });
  // Stopped in silence: the teardown runs after vitest's summary, which stays the last lines of `npm test`.
  return () => services.stop();
}
