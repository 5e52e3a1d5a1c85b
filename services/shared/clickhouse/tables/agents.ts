import type { AgentRecord } from '../../../domain/records/index.ts';
import type { RecordSource } from './usage-events.ts';

/** agents (every version of every agent; agents_by_user and agent_names are its views). Reads: services/ingest/agents/agent-history.ts. */
export type AgentRow = Omit<AgentRecord, 'config'> & {
  readonly config: string;
  readonly record_id: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
};

export function agentRow(agent: AgentRecord, recordId: string, source: RecordSource): AgentRow {
  return {
    ...agent,
    config: JSON.stringify(agent.config),
    record_id: recordId,
    kafka_partition: source.partition,
    kafka_offset: source.offset,
  };
}
