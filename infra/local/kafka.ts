import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitForPort } from './free-port.ts';
import { spawnLogged, stopProcess, type Spawned } from './process.ts';
import { waitForKafkaReady } from './kafka-ready.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
export const KAFKA_LIBS = path.join(ROOT, '.local/kafka/libs');
const LOG4J_CONFIG = path.join(ROOT, 'infra/kafka/log4j2.properties');

/**
 * The real Apache Kafka broker (KRaft, one node acting as broker and controller) from the jars
 * that infra/local/ensure-tools.sh fetched. The folder and ports stay the same across stop/start,
 * so fault tests can stop and restart the broker with its data.
 */
export class LocalKafka {
  private process: Spawned | null = null;

  private constructor(
    readonly folder: string,
    readonly port: number,
    private readonly controllerPort: number,
  ) {}

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  static async create(folder: string): Promise<LocalKafka> {
    if (!existsSync(path.join(KAFKA_LIBS, '.complete'))) {
      throw new Error(`Kafka jars missing in ${KAFKA_LIBS}: run bash infra/local/ensure-tools.sh`);
    }
    const kafka = new LocalKafka(folder, await freePort(), await freePort());
    await mkdir(path.join(folder, 'data'), { recursive: true });
    await writeFile(kafka.propertiesFile, kafka.properties());
    const classpath = `${KAFKA_LIBS}/*`;
    const { stdout: clusterId } = await run('java', ['-cp', classpath, 'kafka.tools.StorageTool', 'random-uuid']);
    await run('java', [
      '-cp',
      classpath,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId.trim(),
      '-c',
      kafka.propertiesFile,
    ]);
    return kafka;
  }

  private get propertiesFile(): string {
    return path.join(this.folder, 'server.properties');
  }

  private properties(): string {
    return [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${this.controllerPort}`,
      `listeners=PLAINTEXT://127.0.0.1:${this.port},CONTROLLER://127.0.0.1:${this.controllerPort}`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:${this.port}`,
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'inter.broker.listener.name=PLAINTEXT',
      `log.dirs=${path.join(this.folder, 'data')}`,
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=4',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'transaction.state.log.num.partitions=4',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'auto.create.topics.enable=false',
      'num.partitions=1',
      '',
    ].join('\n');
  }

  /** Starts the broker and resolves when an idempotent producer and a consumer group both work. */
  async start(): Promise<void> {
    if (this.process !== null) return;
    const args = [
      '-Xms256m',
      '-Xmx512m',
      '-XX:+UseG1GC',
      `-Dlog4j2.configurationFile=${LOG4J_CONFIG}`,
      '-cp',
      `${KAFKA_LIBS}/*`,
      'kafka.Kafka',
      this.propertiesFile,
    ];
    this.process = spawnLogged('java', args, path.join(this.folder, 'broker.log'));
    const died = this.process.exited.then((code) =>
      Promise.reject(new Error(`Kafka broker exited with ${code}; see ${this.folder}/broker.log`)),
    );
    await Promise.race([waitForPort(this.port, 60_000).then(() => waitForKafkaReady(this.brokers, 90_000)), died]);
  }

  async stop(): Promise<void> {
    if (this.process === null) return;
    await stopProcess(this.process, 15_000);
    this.process = null;
  }
}
