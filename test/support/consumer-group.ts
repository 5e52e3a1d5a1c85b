import { AssignerProtocol } from 'kafkajs';
import type { Config } from '../../services/shared/config.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs, type TopicKey } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';

/**
 * The partitions of one topic that each member of the consumer group holds, as the broker describes
 * the group now (one list per member; empty while the group rebalances, since no member holds any then).
 */
export async function groupAssignments(config: Config, topicKey: TopicKey): Promise<number[][]> {
  const admin = createKafka(config.kafka!, createLogger('silent')).admin();
  await admin.connect();
  try {
    const topic = topicSpecs(config.kafka!.topicSuffix)[topicKey].name;
    const { groups } = await admin.describeGroups([config.kafka!.groupId]);
    const group = groups[0];
    if (group === undefined || group.state !== 'Stable') return [];
    return group.members.map(
      (member) => AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment[topic] ?? [],
    );
  } finally {
    await admin.disconnect();
  }
}
