import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { encodeRecord } from '../../services/domain/records/index.ts';
import { startBackingServices } from '../support/backing-services.ts';
import { createSessions, eventCount } from '../support/callmeter-api.ts';
import { sleep, startServer } from '../support/processes.ts';
import { usageEnvelope } from './usage-records.ts';

/**
 * Redis memory through the Kafka path: `live` sessions created through ingest and left live, then
 * `events` usage records of those sessions published straight to the usage topic (the records ingest
 * would publish, keyed by session) while one consumer stores them. Redis's used_memory (INFO memory)
 * is read once the sessions exist, every second while the consumer stores, and once every event is
 * stored; the keys are counted by pattern: usage claims, and the live usage of the calls. Its own
 * broker and Redis, so that nothing else the benchmark does is in the figures. Prints one JSON line.
 */
const { folder, events, live } = JSON.parse(process.argv[2]!) as { folder: string; events: number; live: number };
const USER = 'bench-redis';
const PREFIX = 'callmeter:';
const SEND_BATCH = 1_000;
const SENDERS = 4;
/** How far the publisher may run ahead of the consumer: the broker's disk holds the backlog, not this process. */
const AHEAD = 400_000;
const say = (line: string) => process.stderr.write(`${line}\n`);

rmSync(folder, { recursive: true, force: true });
mkdirSync(folder, { recursive: true });
const backing = await startBackingServices(folder, 'bench-redis', { maxmemory: '1gb' });
const redis = new Redis(backing.redis.url);
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
const countKeys = async (pattern: string) => {
  let count = 0;
  for await (const keys of redis.scanStream({ match: `${PREFIX}${pattern}`, count: 1_000 }) as AsyncIterable<string[]>)
    count += keys.length;
  return count;
};
const process_ = await startServer('services/main.ts', {
  ...backing.env,
  SERVICES: 'ingest,consumer,query',
  DATA_DIR: path.join(folder, 'callmeter'),
});
try {
  say(`redis memory: ${live} live sessions`);
  const sessions = await createSessions(process_.url, USER, live);
  await sleep(2_000);
  const before = await usedMemory();
  const keysBefore = await redis.dbsize();

  const kafka = createKafka(
    { brokers: [backing.kafka.brokers], clientId: 'bench-redis', groupId: 'bench-redis', topicSuffix: '' },
    createLogger('error'),
  );
  const producer = createIdempotentProducer(kafka);
  await producer.connect();
  const topic = topicSpecs('').usage.name;
  let stored = 0;
  let peak = before;
  let maxClaims = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await usedMemory());
      await sleep(1_000);
    }
  })();
  const started = performance.now();
  // At 3,300 events/s at the least, well under what a quiet machine stores: past it the run is reported failed.
  const deadline = Date.now() + Math.max(600_000, events * 0.3);
  let published = 0;
  let next = 0;
  const senders = Array.from({ length: SENDERS }, async () => {
    while (next < events && Date.now() < deadline) {
      while (next - stored > AHEAD && Date.now() < deadline) await sleep(200);
      const from = next;
      const count = Math.min(SEND_BATCH, events - from);
      next += count;
      const messages = Array.from({ length: count }, (_, i) => {
        const record = encodeRecord(usageEnvelope(sessions[(from + i) % sessions.length]!, from + i));
        return { key: record.key, value: record.value, headers: record.headers };
      });
      await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
      published += count;
    }
  });
  let lastSaid = 0;
  // used_memory as each quarter of the events is stored: flat once the claims of the rounds in flight
  // and the calls' live entries are at their bounds.
  const quarters: number[] = [];
  while (stored < events && Date.now() < deadline) {
    await sleep(1_000);
    stored = await eventCount(process_.url, USER);
    maxClaims = Math.max(maxClaims, await countKeys('usage-claim:*'));
    while (quarters.length < 3 && stored >= ((quarters.length + 1) * events) / 4) quarters.push(await usedMemory());
    if (stored - lastSaid >= 500_000 || stored === events) {
      say(`redis memory: ${stored} of ${events} stored, used_memory ${Math.round(peak / 1048576)} MiB at most`);
      lastSaid = stored;
    }
  }
  await Promise.all(senders);
  const elapsed = performance.now() - started;
  await producer.disconnect();
  if (stored !== events)
    throw new Error(
      `the consumer stored ${stored} of ${events} events (${published} published) before the deadline; used_memory ${Math.round(peak / 1048576)} MiB at most`,
    );
  // The last round's claims are released just after its insert: a moment for that, then the figures.
  await sleep(2_000);
  sampling = false;
  await sampler;
  const after = await usedMemory();
  const claimsAfter = await countKeys('usage-claim:*');
  const liveKeys = await countKeys('live-usage:*');
  let liveEntries = 0;
  for await (const keys of redis.scanStream({ match: `${PREFIX}live-usage:*`, count: 1_000 }) as AsyncIterable<
    string[]
  >)
    for (const key of keys) liveEntries = Math.max(liveEntries, await redis.hlen(key));
  process.stdout.write(
    `${JSON.stringify({
      events,
      live,
      elapsed_ms: Math.round(elapsed),
      rows_per_s: Math.round((events / elapsed) * 1000),
      used_memory_before: before,
      used_memory_after: after,
      used_memory_by_quarter: [...quarters, after],
      used_memory_peak: Math.max(peak, after),
      keys_before: keysBefore,
      keys_after: await redis.dbsize(),
      claims_at_most: maxClaims,
      claims_after: claimsAfter,
      live_usage_keys: liveKeys,
      live_usage_entries_per_call_at_most: liveEntries,
    })}\n`,
  );
} finally {
  redis.disconnect();
  await process_.stop();
  await backing.stop();
}
