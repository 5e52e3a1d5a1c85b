import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { insertRows } from '../../shared/clickhouse/insert-rows.ts';
import type { BatchingProducer } from '../../shared/kafka/batching-producer.ts';
import type { Logger } from '../../shared/logger.ts';
import type { RoundMember } from '../round.ts';
import type { DeadLetter } from './decode-round.ts';

export interface DeadLetterDeps {
  readonly ch: ClickHouse;
  readonly log: Logger;
  /** Where dead letters are published too (Kafka mode); they always go to the dead_letters table. */
  readonly topic: { readonly producer: BatchingProducer; readonly topic: string } | null;
}

/**
 * Step 8, dead letters: the records that could not be decoded and those ClickHouse refused, whatever
 * their source, into the dead_letters table (and the dead-letter topic when there is one), each batch's
 * under the batch's own token: a regrouped replay stores a batch's dead letters once too.
 */
export async function storeDeadLetters(
  { ch, log, topic }: DeadLetterDeps,
  letters: readonly DeadLetter[],
): Promise<void> {
  const byMember = new Map<RoundMember, DeadLetter[]>();
  for (const letter of letters) {
    const dead = byMember.get(letter.member);
    if (dead === undefined) byMember.set(letter.member, [letter]);
    else dead.push(letter);
  }
  for (const [member, dead] of byMember) {
    log.warn(
      { topic: member.topic, partition: member.partition, count: dead.length, reason: dead[0]!.reason },
      'records_dead_lettered',
    );
    const rows = dead.map(({ message, reason, kind }) => ({
      kind: message.headers?.kind?.toString() ?? kind ?? 'unknown',
      reason,
      topic: member.topic,
      kafka_partition: member.partition,
      kafka_offset: message.offset,
      record: message.value?.toString('utf8') ?? '',
    }));
    await insertRows(ch, 'deadLetters', rows, member.deadLetterToken ?? member.token);
    if (topic === null) continue;
    const records = dead.map(({ message, reason }) => ({
      key: message.key?.toString() ?? '',
      value: message.value ?? Buffer.alloc(0),
      headers: { reason, topic: member.topic, partition: String(member.partition), offset: message.offset },
    }));
    await topic.producer.publish(topic.topic, records);
  }
}
