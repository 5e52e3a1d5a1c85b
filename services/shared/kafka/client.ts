import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

export type KafkaConfig = NonNullable<Config['kafka']>;

/** kafkajs with its log lines routed into pino, so broker trouble shows up with the rest. */
export function createKafka(config: KafkaConfig, log: Logger): Kafka {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return new Kafka({
    clientId: config.clientId,
    brokers: [...config.brokers],
    logLevel: logLevel.WARN,
    logCreator: () => (entry: LogEntry) => writeKafkaLog(kafkaLog, entry),
    // Client-level retries multiply with the producer's and the consumer's own: kept short, so a
    // broker outage turns into a 503 (ingest) or a consumer restart (kafkajs) within seconds.
    retry: { initialRetryTime: 200, maxRetryTime: 2_000, retries: 5 },
    connectionTimeout: 1_000,
    requestTimeout: 10_000,
  });
}

function writeKafkaLog(log: Logger, { level, log: { message, ...extra } }: LogEntry): void {
  const fields = { namespace: extra.namespace, broker: extra.broker, error: extra.error };
  if (level === logLevel.ERROR || level === logLevel.NOTHING) log.error(fields, message);
  else if (level === logLevel.WARN) log.warn(fields, message);
  else log.debug(fields, message);
}
