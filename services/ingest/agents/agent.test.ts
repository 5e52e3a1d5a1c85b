import { describe, expect, it } from 'vitest';
import { applyAgentUpdate, newAgent } from './agent.ts';
import { makeAgent, T0 } from './agent.fixtures.ts';
import { MAX_AGENT_CONFIG_BYTES } from './agent-limits.ts';

const bigConfig = (bytes: number) => ({ system_prompt: 'x'.repeat(bytes - '{"system_prompt":""}'.length) });

describe('agent rules', () => {
  it('a new agent is active, version 1, created and updated now', () => {
    const agent = newAgent(
      { id: 'a-1', name: 'Desk', description: null, type: 'PIPELINE', config: {}, user_id: 'u-1' },
      T0,
    );
    expect(agent).toEqual({
      id: 'a-1',
      name: 'Desk',
      description: null,
      type: 'PIPELINE',
      config: {},
      is_active: true,
      user_id: 'u-1',
      created_at: T0,
      updated_at: T0,
      version: 1,
    });
  });

  it('a config of exactly 64 KiB of JSON is taken; one byte more is a 422 value_error at ["body","config"]', () => {
    const input = { id: 'a-1', name: 'Desk', description: null, type: 'LLM' as const, user_id: 'u-1' };
    expect(newAgent({ ...input, config: bigConfig(MAX_AGENT_CONFIG_BYTES) }, T0).config).toEqual(
      bigConfig(MAX_AGENT_CONFIG_BYTES),
    );
    let error: unknown;
    try {
      newAgent({ ...input, config: bigConfig(MAX_AGENT_CONFIG_BYTES + 1) }, T0);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({
      code: 'VALIDATION',
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'config'],
          msg: `Value error, config would be 65537 bytes as JSON, over the limit of 65536 bytes`,
          ctx: { error: {} },
        },
      ],
    });
    expect(() => applyAgentUpdate(makeAgent(), { config: bigConfig(MAX_AGENT_CONFIG_BYTES + 1) }, T0)).toThrow();
  });

  it('an update sets what it names, replaces config whole, and bumps version and updated_at', () => {
    const agent = makeAgent({ config: { system_prompt: 'a', voice_id: 'v' } });
    expect(
      applyAgentUpdate(agent, { name: 'Other', config: { first_message: 'Hi' }, description: 'd' }, T0 + 5),
    ).toEqual({
      ...agent,
      name: 'Other',
      config: { first_message: 'Hi' },
      description: 'd',
      updated_at: T0 + 5,
      version: 2,
    });
  });

  it('an update that repeats the current values, or names nothing, changes nothing', () => {
    const agent = makeAgent({ description: 'd' });
    expect(applyAgentUpdate(agent, {}, T0 + 5)).toBeNull();
    expect(
      applyAgentUpdate(
        agent,
        { name: agent.name, config: { ...agent.config }, description: 'd', is_active: true },
        T0 + 5,
      ),
    ).toBeNull();
  });

  it('a delete is is_active false; a PATCH may set it back', () => {
    const deleted = applyAgentUpdate(makeAgent(), { is_active: false }, T0 + 5)!;
    expect([deleted.is_active, deleted.version]).toEqual([false, 2]);
    expect(applyAgentUpdate(deleted, { is_active: true }, T0 + 6)?.is_active).toBe(true);
  });

  it('updated_at never goes back on a clock step', () => {
    expect(applyAgentUpdate(makeAgent({ updated_at: T0 + 10 }), { name: 'x' }, T0)?.updated_at).toBe(T0 + 10);
  });
});
