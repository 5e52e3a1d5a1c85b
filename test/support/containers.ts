import { freePort } from '../../infra/local/free-port.ts';
import { waitForKafkaReady } from '../../infra/local/kafka-ready.ts';

export interface Provided {
  readonly address: string;
  readonly stop: () => Promise<void>;
}

// Loaded only when a Docker engine answers, so machines without one never import testcontainers.
async function containers() {
  return import('testcontainers');
}

/** apache/kafka in KRaft mode, advertised on a fixed loopback port chosen before start. */
export async function startKafkaContainer(): Promise<Provided> {
  const { GenericContainer, Wait } = await containers();
  const port = await freePort();
  const container = await new GenericContainer('apache/kafka:4.1.0')
    .withExposedPorts({ container: 9092, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
    })
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  const address = `127.0.0.1:${port}`;
  await waitForKafkaReady(address, 90_000);
  return { address, stop: async () => void (await container.stop()) };
}

export async function startRedisContainer(): Promise<Provided> {
  const { GenericContainer, Wait } = await containers();
  const container = await new GenericContainer('redis:7-alpine')
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  return {
    address: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
    stop: async () => void (await container.stop()),
  };
}
