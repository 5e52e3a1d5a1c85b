import { describe, expect, it } from 'vitest';
import { makeSession } from '../sessions/session.fixtures.ts';
import { nameSessionAgents } from './session-agent-names.ts';

describe('nameSessionAgents', () => {
  const names = new Map([['agent-1', 'Front desk']]);

  it('names a session without agent_name by its agent, keeps a given name, and leaves unknown agents null', async () => {
    const asked: string[][] = [];
    const lookup = async (ids: readonly string[]) => {
      asked.push([...ids]);
      return names;
    };
    const sessions = [
      makeSession({ agent_id: 'agent-1' }),
      makeSession({ agent_id: 'agent-1', agent_name: 'Given' }),
      makeSession({ agent_id: 'agent-unknown' }),
      makeSession({ agent_id: null }),
    ];
    const named = await nameSessionAgents(sessions, lookup);
    expect(named.map((session) => session.agent_name)).toEqual(['Front desk', 'Given', null, null]);
    expect(asked).toEqual([['agent-1', 'agent-unknown']]);
  });

  it('asks nothing when every session is named or has no agent', async () => {
    const lookup = async () => {
      throw new Error('not asked');
    };
    const sessions = [makeSession({ agent_id: 'agent-1', agent_name: 'Given' }), makeSession()];
    expect(await nameSessionAgents(sessions, lookup)).toEqual(sessions);
  });
});
