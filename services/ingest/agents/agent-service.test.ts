import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { createLogger } from '../../shared/logger.ts';
import type { Envelope } from '../../domain/records/index.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { createAgentService } from './agent-service.ts';
import type { Agent } from './agent.ts';
import { T0 } from './agent.fixtures.ts';
import { MemoryAgentStore } from './memory-agent-store.ts';
import { MemoryNumberStore } from '../telephony/memory-number-store.ts';

const log = createLogger('silent');
const brokerDown = () =>
  AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable', { headers: { 'Retry-After': '1' } });
const input = {
  name: 'Desk',
  description: null,
  type: 'PIPELINE' as const,
  config: { system_prompt: 'Hi' },
  user_id: 'tenant-1',
};

/** The live store with the two reads the history adds, answered from memory. */
class MemoryDirectory extends MemoryAgentStore {
  failing = false;
  async getMany(ids: readonly string[]): Promise<Agent[]> {
    if (this.failing) throw new Error('redis down');
    return (await Promise.all(ids.map((id) => this.get(id)))).filter((agent) => agent !== null);
  }
  async active(): Promise<Agent[]> {
    return [];
  }
}

function makeService(agentsPerTenant?: number) {
  let refusing = false;
  const published: Envelope[] = [];
  const sink: RecordSink = {
    publish: async (envelopes) => {
      if (refusing) throw brokerDown();
      published.push(...envelopes);
    },
  };
  const store = new MemoryDirectory();
  const numbers = new MemoryNumberStore();
  let clock = T0;
  const service = createAgentService({
    store,
    numbers,
    sink,
    log,
    now: () => clock++,
    ...(agentsPerTenant === undefined ? {} : { agentsPerTenant }),
  });
  return { service, store, numbers, published, refuse: (on: boolean) => (refusing = on) };
}

describe('agent service: AGENTS_PER_TENANT', () => {
  it('refuses a tenant’s agent past its cap with a 409 naming it, counts only active agents, and leaves other tenants alone', async () => {
    const { service, published } = makeService(2);
    const first = await service.create(input);
    const second = await service.create(input);
    const refused = service.create(input);
    await expect(refused).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(refused).rejects.toThrow(/AGENTS_PER_TENANT=2/);
    expect(published).toHaveLength(2);
    expect((await service.create({ ...input, user_id: 'tenant-2' })).agent.user_id).toBe('tenant-2');
    await service.remove(first.agent.id);
    await service.create(input);
    await expect(service.update(first.agent.id, { is_active: true })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await service.update(second.agent.id, { name: 'still active' })).agent.name).toBe('still active');
  });

  it('lets concurrent creates of one tenant pass the cap together no further than it', async () => {
    const { service } = makeService(3);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => service.create(input)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
  });
});

describe('agent service', () => {
  it('publishes every change as an agent record keyed by the agent, and a change of nothing as none', async () => {
    const { service, published } = makeService();
    const { agent } = await service.create(input);
    await service.update(agent.id, { name: 'Desk 2' });
    await service.update(agent.id, { name: 'Desk 2' });
    await service.remove(agent.id);
    expect(
      published.map((record) => [record.kind, record.key, (record.payload as { version: number }).version]),
    ).toEqual([
      ['agent', agent.id, 1],
      ['agent', agent.id, 2],
      ['agent', agent.id, 3],
    ]);
    expect((published[2]!.payload as { is_active: boolean }).is_active).toBe(false);
  });

  it('a create the record path refuses leaves no agent; a refused update or delete is reverted', async () => {
    const { service, store, refuse } = makeService();
    refuse(true);
    await expect(service.create(input)).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    refuse(false);
    const { agent } = await service.create(input);
    refuse(true);
    await expect(service.update(agent.id, { name: 'Lost' })).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    await expect(service.remove(agent.id)).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(await store.get(agent.id)).toMatchObject({ name: 'Desk', is_active: true });
  });

  it('shows the number the agent holds, and finds an active agent by its number as assign normalises it', async () => {
    const { service, numbers } = makeService();
    const { agent } = await service.create(input);
    await numbers.assign({ agent_id: agent.id, phone_number: '+15551230001', provider: 'twilio', assigned_at: T0 });
    expect((await service.get(agent.id)).phone_number).toBe('+15551230001');
    expect((await service.lookup(' 1 (555) 123-0001 ')).id).toBe(agent.id);
    await expect(service.lookup('not a number')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      detail: 'No agent found for this phone number',
    });
    await service.remove(agent.id);
    await expect(service.lookup('+15551230001')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('names agents best effort: an unavailable store names nobody instead of failing a durable session write', async () => {
    const { service, store } = makeService();
    const { agent } = await service.create(input);
    expect(await service.names([agent.id, agent.id, 'unknown'])).toEqual(new Map([[agent.id, 'Desk']]));
    store.failing = true;
    expect(await service.names([agent.id])).toEqual(new Map());
  });
});
