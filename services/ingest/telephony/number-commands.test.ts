import { describe, expect, it } from 'vitest';
import { MemoryNumberStore } from './memory-number-store.ts';
import { assignNumber, reassignNumber, releaseNumber, unassignNumber, type TelephonyDeps } from './number-commands.ts';
import { RecordingTelephonyProvider } from './telephony-provider.ts';

const T0 = Date.UTC(2026, 10, 22);
const makeDeps = () =>
  ({ store: new MemoryNumberStore(), provider: new RecordingTelephonyProvider() }) satisfies TelephonyDeps;
const assign = async (deps: TelephonyDeps, agent_id = 'agent-1', phone_number = ' +1 (555) 123-0001') =>
  (await assignNumber(deps, { agent_id, phone_number, provider: 'twilio' }, T0)).held;

describe('assignNumber', () => {
  it('stores the E.164 number and routes it at the carrier', async () => {
    const deps = makeDeps();
    expect(await assign(deps)).toEqual({
      agent_id: 'agent-1',
      phone_number: '+15551230001',
      provider: 'twilio',
      assigned_at: T0,
    });
    expect(deps.provider.calls).toEqual([{ operation: 'assign', phone_number: '+15551230001', agent_id: 'agent-1' }]);
  });

  it('answers a malformed number with a validation item at body.phone_number', async () => {
    await expect(assign(makeDeps(), 'agent-1', '12-34')).rejects.toMatchObject({
      code: 'VALIDATION',
      detail: [{ type: 'value_error', loc: ['body', 'phone_number'], input: '12-34' }],
    });
  });

  it('answers an agent that has a number with BAD_REQUEST, and a taken number with CONFLICT', async () => {
    const deps = makeDeps();
    await assign(deps);
    await expect(assign(deps, 'agent-1', '+15551230002')).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      detail: 'Agent already has number +15551230001. Release it first.',
    });
    await expect(assign(deps, 'agent-2')).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(deps.provider.calls).toHaveLength(1);
  });

  it('frees the number and leaves an agent that never held one unknown when the carrier fails', async () => {
    const deps = makeDeps();
    deps.provider.failNext();
    await expect(assign(deps)).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(await deps.store.get('agent-1')).toBeNull();
    await expect(assign(deps, 'agent-2')).resolves.toMatchObject({ agent_id: 'agent-2' });
  });

  it('leaves an agent that had released its number known with none when the carrier fails', async () => {
    const deps = makeDeps();
    await assign(deps);
    await releaseNumber(deps, 'agent-1');
    deps.provider.failNext();
    await expect(assign(deps, 'agent-1', '+15551230002')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(await deps.store.get('agent-1')).toEqual({
      agent_id: 'agent-1',
      phone_number: null,
      provider: null,
      assigned_at: null,
    });
  });
});

describe('unassignNumber and reassignNumber', () => {
  it('undo an assignment and a release exactly, in the store and at the carrier', async () => {
    const deps = makeDeps();
    const assignment = await assignNumber(
      deps,
      { agent_id: 'agent-1', phone_number: '+15551230001', provider: 'twilio' },
      T0,
    );
    expect(assignment.previous).toBeNull();
    await unassignNumber(deps, assignment);
    expect(await deps.store.get('agent-1')).toBeNull();
    const held = await assign(deps);
    const released = await releaseNumber(deps, 'agent-1');
    await reassignNumber(deps, released);
    expect(await deps.store.get('agent-1')).toEqual(held);
    expect(deps.provider.calls.map((call) => call.operation)).toEqual([
      'assign',
      'release',
      'assign',
      'release',
      'assign',
    ]);
  });
});

describe('releaseNumber', () => {
  it('releases at the store and the carrier, then finds no number', async () => {
    const deps = makeDeps();
    await assign(deps);
    expect(await releaseNumber(deps, 'agent-1')).toMatchObject({ phone_number: '+15551230001' });
    expect(deps.provider.calls.at(-1)).toEqual({
      operation: 'release',
      phone_number: '+15551230001',
      agent_id: 'agent-1',
    });
    await expect(releaseNumber(deps, 'agent-1')).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      detail: 'Agent has no assigned phone number',
    });
  });

  it('answers an agent that never held a number with NOT_FOUND "Agent not found"', async () => {
    await expect(releaseNumber(makeDeps(), 'nobody')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      detail: 'Agent not found',
    });
  });

  it('keeps the number with the agent when the carrier fails', async () => {
    const deps = makeDeps();
    const held = await assign(deps);
    deps.provider.failNext();
    await expect(releaseNumber(deps, 'agent-1')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(await deps.store.get('agent-1')).toEqual(held);
  });
});
