import type { Admin } from 'kafkajs';
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
    { name: suffix === '' ? topic.name : `${topic.name}.${suffix}`, partitions: topic.partitions, retentionMs: topic.retention_ms },
  ]);
  return Object.freeze(Object.fromEntries(entries)) as Record<TopicKey, TopicSpec>;
}

/** Creates the topics that do not exist yet; existing ones are left as they are. */
export async function ensureTopics(admin: Admin, specs: Readonly<Record<TopicKey, TopicSpec>>): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = Object.values(specs).filter((spec) => !existing.has(spec.name));
  if (missing.length === 0) return;
  await admin.createTopics({
    waitForLeaders: true,
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
