import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';

/**
 * Right after start the broker answers "coordinator is loading" for a while. Ready means what
 * callmeter needs works end to end: an idempotent acks=-1 send, and a consumer group that joins
 * and receives that record.
 */
export async function waitForKafkaReady(brokers: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  while (Date.now() < deadline) {
    try {
      await roundTrip(brokers, Math.max(1_000, deadline - Date.now()));
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`Kafka at ${brokers} not ready within ${timeoutMs} ms: ${String(lastError)}`);
}

async function roundTrip(brokers: string, timeoutMs: number): Promise<void> {
  const kafka = new Kafka({
    clientId: 'readiness',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3 },
  });
  const topic = '__callmeter_readiness';
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId: `readiness-${randomUUID()}`, sessionTimeout: 10_000 });
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await producer.connect();
    const marker = randomUUID();
    await producer.send({ topic, acks: -1, messages: [{ value: marker }] });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('consumer group received nothing')), timeoutMs);
      void consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value?.toString() === marker) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
  }
}
