import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../shared/http/create-app.ts';
import { createLogger } from '../../shared/logger.ts';
import type { AgentService } from '../agents/agent-service.ts';
import { createTelephonyService } from './telephony-service.ts';
import { MemoryNumberStore } from './memory-number-store.ts';
import { RecordingTelephonyProvider } from './telephony-provider.ts';
import { telephonyRoutes } from './telephony-routes.ts';

const servers: http.Server[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** An agent that a DELETE marks deleted while the assign of a number to it runs (its second read). */
function agentDeletedDuringAssign() {
  let reads = 0;
  const agents = {
    find: async () => {
      reads += 1;
      return { id: 'agent-1', user_id: 'tenant-a', is_active: reads === 1 };
    },
    numbersHeld: async () => 0,
  } as unknown as AgentService;
  return agents;
}

async function serve(agents: AgentService) {
  const store = new MemoryNumberStore();
  const telephony = createTelephonyService({
    store,
    provider: new RecordingTelephonyProvider(),
    sink: { publish: async () => undefined },
  });
  const app = createHttpApp({
    service: 'test',
    log: createLogger('silent'),
    routes: telephonyRoutes(telephony, agents).map((route) => route.register),
    checks: [],
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, telephony };
}

describe('the number routes', () => {
  it('leaves no number with an agent deleted while its assign ran, and answers the assign with the deleted 400', async () => {
    const { url, telephony } = await serve(agentDeletedDuringAssign());
    const answer = await fetch(`${url}/api/telephony/numbers/assign`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'agent-1', phone_number: '+15551230001' }),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({ detail: 'Agent agent-1 is deleted; a deleted agent holds no number' });
    expect((await telephony.get('agent-1'))?.phone_number ?? null).toBeNull();
  });
});
