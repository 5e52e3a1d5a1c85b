import { randomUUID } from 'node:crypto';
import { makeEnvelope, type Envelope } from '../../services/domain/records/index.ts';

/** The usage record ingest publishes for one event of the load (tts characters, resemble). */
export function usageEnvelope(session: { id: string; user_id: string }, n: number, at = new Date()): Envelope {
  const id = randomUUID();
  const record = {
    event_id: id,
    session_id: session.id,
    user_id: session.user_id,
    agent_id: 'agent-bench',
    provider: 'resemble',
    event_type: 'tts_characters',
    model: null,
    quantity: String(1 + (n % 997)),
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: null,
    reported_total_cost: null,
    occurred_at: at.toISOString(),
    received_at: at.toISOString(),
  };
  return makeEnvelope('usage', session.id, record, at, at, id);
}
