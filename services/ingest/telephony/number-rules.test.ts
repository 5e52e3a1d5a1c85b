import { describe, expect, it } from 'vitest';
import { decideAssign, decideRelease, releasedAgent } from './number-rules.ts';

const request = { agent_id: 'a-1', phone_number: '+15551230001', provider: 'telnyx', assigned_at: 1 };
const holding = { ...request, phone_number: '+15559990000' };

describe('number rules', () => {
  it('an agent that holds a number is refused before the number is looked at', () => {
    expect(decideAssign(holding, 'a-2', request).kind).toBe('agent_has_number');
  });

  it('a number held by the asking agent but not on its record counts as free', () => {
    expect(decideAssign(releasedAgent('a-1'), 'a-1', request)).toEqual({
      kind: 'assigned',
      assignment: request,
      previous: releasedAgent('a-1'),
    });
  });

  it('an assignment names the agent as it was, null for one that never held a number', () => {
    expect(decideAssign(null, null, request)).toEqual({ kind: 'assigned', assignment: request, previous: null });
  });

  it('release needs a known agent with a number', () => {
    expect(decideRelease(null).kind).toBe('agent_unknown');
    expect(decideRelease(releasedAgent('a-1')).kind).toBe('no_number');
    expect(decideRelease(holding)).toEqual({ kind: 'released', released: holding });
  });
});
