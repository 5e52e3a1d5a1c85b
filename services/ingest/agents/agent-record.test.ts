import { describe, expect, it } from 'vitest';
import { agentCreateBody } from '../../../schemas/http/agent-bodies.ts';
import { DEFAULT_MAX_BATCH_BYTES } from '../../shared/kafka/batching-producer.ts';
import { outgoingBytes } from '../../shared/kafka/record-size.ts';
import { encodeRecord } from '../../domain/records/index.ts';
import { compileRequest } from '../../shared/validation/compile-request.ts';
import type { PyDict, PyValue } from '../../shared/validation/py-value.ts';
import { agentEnvelope } from './agent-record.ts';
import { makeAgent, T0 } from './agent.fixtures.ts';
import { MAX_AGENT_CONFIG_BYTES } from './agent-limits.ts';

// Six bytes of JSON text (\u0001) for one character of pydantic's max_length: the widest there is
// (../sessions/session-record.test.ts checks that).
const longest = (maxLength: number) => '\u0001'.repeat(maxLength);
const configOf = (bytes: number) => ({ a: 'x'.repeat(bytes - '{"a":""}'.length) });
const fields = agentCreateBody.properties;

describe('the largest agent the bounds let in', () => {
  const agent = makeAgent({
    id: '0'.repeat(36),
    name: longest(fields.name.maxLength),
    description: longest(fields.description.maxLength),
    user_id: longest(fields.user_id.maxLength),
    config: configOf(MAX_AGENT_CONFIG_BYTES),
    version: Number.MAX_SAFE_INTEGER,
  });

  it('is accepted by the request schema at every maxLength', () => {
    const { name, description, user_id, config } = agent;
    const body: PyDict = new Map<string, PyValue>([
      ['name', name],
      ['description', description],
      ['type', 'PIPELINE'],
      ['user_id', user_id],
      ['config', new Map([['a', String(config.a)]])],
    ]);
    expect(compileRequest({ body: agentCreateBody })({ body })).toMatchObject({ ok: true });
  });

  it('has a Kafka record far below what one send to the broker takes', () => {
    const bytes = outgoingBytes({ topic: 'sessions', record: encodeRecord(agentEnvelope(agent, T0 + 1)) });
    expect(bytes).toBeGreaterThan(MAX_AGENT_CONFIG_BYTES);
    expect(bytes).toBeLessThan(DEFAULT_MAX_BATCH_BYTES / 4);
  });
});
