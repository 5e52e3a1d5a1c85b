import { randomUUID } from 'node:crypto';
import { T0 } from '../sessions/session.fixtures.ts';
import type { Agent } from './agent.ts';

export { T0 };

/** An active PIPELINE agent of user-1 created at T0; override any field. Test support only. */
export function makeAgent(overrides: Partial<Agent> = {}): Agent {
  return {
    id: randomUUID(),
    name: 'Front desk',
    description: null,
    type: 'PIPELINE',
    config: { system_prompt: 'Be brief.' },
    is_active: true,
    user_id: 'user-1',
    created_at: T0,
    updated_at: T0,
    version: 1,
    ...overrides,
  };
}
