import type { Admin } from 'kafkajs';
import { retry, waitUntil } from '../retry.ts';
import definition from '../../../infra/kafka/topics.json' with { type: 'json' };

export type TopicKey = keyof typeof definition.topics;

export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
  readonly retentionMs: number;
}

/** Topic names carry an optional suffix so that test files and tenants of one broker never share a topic. */
export function topicSpecs(suffix: string): Readonly<Record<TopicKey, TopicSpec>> {
  const entries = Object.entries(definition.topics).map(([key, topic]) => [
    key,
    {
      name: suffix === '' ? topic.name : `${topic.name}.${suffix}`,
      partitions: topic.partitions,
      retentionMs: topic.retention_ms,
    },
  ]);
  return Object.freeze(Object.fromEntries(entries)) as Record<TopicKey, TopicSpec>;
}

/**
 * Creates the topics that do not exist yet (existing ones are left as they are), then waits until
 * the broker serves every partition: just after creation a busy broker still answers "does not
 * host this topic-partition", which would fail the producers and consumers started next.
 */
export async function ensureTopics(
  admin: Admin,
  specs: Readonly<Record<TopicKey, TopicSpec>>,
  timeoutMs = 30_000,
): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = Object.values(specs).filter((spec) => !existing.has(spec.name));
  if (missing.length > 0) await createTopics(admin, missing);
  await waitForLeaders(admin, specs, timeoutMs);
}

async function waitForLeaders(
  admin: Admin,
  specs: Readonly<Record<TopicKey, TopicSpec>>,
  timeoutMs: number,
): Promise<void> {
  const topics = Object.values(specs).map((spec) => spec.name);
  const deadline = Date.now() + timeoutMs;
  const served = await retry(
    async () => {
      try {
        const metadata = await admin.fetchTopicMetadata({ topics });
        if (
          metadata.topics.every((topic) => topic.partitions.length > 0 && topic.partitions.every((p) => p.leader >= 0))
        )
          return true;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
      return null;
    },
    { delayMs: () => 200, wait: waitUntil(deadline) },
  );
  if (served === null) throw new Error(`topics ${topics.join(', ')} have no leader after ${timeoutMs} ms`);
}

async function createTopics(admin: Admin, missing: readonly TopicSpec[]): Promise<void> {
  // kafkajs's own wait for leaders fails on "does not host this topic-partition": waitForLeaders
  // above waits instead, retrying both answers of a broker that is still catching up.
  await admin.createTopics({
    waitForLeaders: false,
    topics: missing.map((spec) => ({
      topic: spec.name,
      numPartitions: spec.partitions,
      configEntries: [
        { name: 'retention.ms', value: String(spec.retentionMs) },
        { name: 'min.insync.replicas', value: '1' },
      ],
    })),
  });
}
