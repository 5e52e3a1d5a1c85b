import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Answer } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate } from '../support/harness.ts';

/*
 * The replaced service's own clients, driven the way their code drives them against the embedded
 * `npm start` (github dhruv0206/VoxArena at 889469d): the dashboard (frontend/src) and the LiveKit
 * worker (agent/agent.py, agent/usage_logger.py). Each request is the path, body and headers that
 * code sends, in its order during a call; each assertion is what that code reads from the answer
 * (the statuses it compares, the fields it takes and the types it calls methods on). Every body goes
 * as `Content-Type: application/json`, as each of those clients sends it.
 */

const API = '/api';

/** What the dashboard's agent list posts (components/agents/agent-list.tsx handleCreate). */
function dashboardAgentBody(userId: string, name: string) {
  return {
    name,
    description: 'Answers questions about accounts',
    type: 'PIPELINE',
    config: {
      system_prompt: 'You are a helpful banking assistant.',
      first_message: 'Hello, how may I help?',
      first_message_mode: 'assistant_speaks_first',
      llm_provider: 'gemini',
      llm_model: 'gemini-2.5-flash',
      template: 'banking',
      voice_provider: 'resemble',
      voice_id: 'voice-1',
      voice_name: 'Dylan',
    },
    user_id: userId,
  };
}

/** The three bodies agent/usage_logger.py posts from LiveKit metrics (no quantity, no costs). */
function workerUsageBodies(sessionId: string, userId: string, agentId: string) {
  const base = { session_id: sessionId, user_id: userId, agent_id: agentId };
  return [
    { ...base, event_type: 'stt_minutes', provider: 'assemblyai', usage_data: { audio_duration_seconds: 90 } },
    { ...base, event_type: 'llm_tokens', provider: 'google', usage_data: { input_tokens: 900, output_tokens: 300 } },
    { ...base, event_type: 'tts_characters', provider: 'resemble', usage_data: { character_count: 480 } },
  ];
}

// 1.5 min × 0.0078 (assemblyai) + 900 × 0.30 / 1M + 300 × 2.50 / 1M (google by token kind) + 480 × 0.00004 (resemble).
const CALL_COST = '0.03192';

/** agent.py's fetch_agent_config: GET /agents/{id}, used only on a 200, reading config and user_id. */
async function workerFetchAgent(url: string, agentId: string) {
  const answer = await call<Record<string, unknown>>(url, 'GET', `${API}/agents/${agentId}`);
  expect(answer.status).toBe(200);
  const config = answer.body.config as Record<string, unknown>;
  expect(typeof config.system_prompt).toBe('string');
  expect(typeof config.first_message).toBe('string');
  expect(typeof answer.body.user_id).toBe('string');
  return answer.body as { user_id: string; config: Record<string, unknown> };
}

/** agent.py's create_backend_session: the id is read only when the status is exactly 201. */
async function workerCreateSession(url: string, roomName: string, userId: string, agentId: string): Promise<string> {
  const answer = await call<{ id: string }>(url, 'POST', `${API}/sessions/`, {
    room_name: roomName,
    user_id: userId,
    agent_id: agentId,
    session_data: {},
  });
  expect(answer.status).toBe(201);
  expect(typeof answer.body.id).toBe('string');
  return answer.body.id;
}

/** The call itself: transcript turns by room, then the usage of every metrics_collected event. */
async function workerCall(
  url: string,
  roomName: string,
  sessionId: string,
  userId: string,
  agentId: string,
): Promise<void> {
  for (const [content, speaker] of [
    ['Hello, how may I help?', 'AGENT'],
    ['What is my balance?', 'USER'],
    ['Let me check that for you.', 'AGENT'],
  ] as const) {
    const saved = await call(url, 'POST', `${API}/sessions/by-room/${roomName}/transcripts`, {
      content,
      speaker: speaker.toUpperCase(),
    });
    expect(saved.status).toBe(201);
  }
  for (const body of workerUsageBodies(sessionId, userId, agentId)) {
    // usage_logger.py logs a warning on any status >= 400: every one of these must be taken.
    const logged = await call(url, 'POST', `${API}/usage/events`, body);
    expect(logged.status).toBeLessThan(400);
  }
}

/** The call page (dashboard/logs/[id]/page.tsx): session, transcripts and cost card, each used only when ok. */
async function callPage(url: string, sessionId: string) {
  const session = await call<Record<string, unknown>>(url, 'GET', `${API}/sessions/${sessionId}`);
  const transcripts = await call<Array<Record<string, unknown>>>(
    url,
    'GET',
    `${API}/sessions/${sessionId}/transcripts`,
  );
  const costs = await call<{ session_id: string; total_cost: number; breakdown: Array<Record<string, unknown>> }>(
    url,
    'GET',
    `${API}/sessions/${sessionId}/costs`,
  );
  expect([session.status, transcripts.status, costs.status]).toEqual([200, 200, 200]);
  return { session: session.body, transcripts: transcripts.body, costs: costs.body };
}

function expectCostCard(
  card: { session_id: string; total_cost: number; breakdown: Array<Record<string, unknown>> },
  sessionId: string,
): void {
  expect(card.session_id).toBe(sessionId);
  // The page calls toFixed on these: JSON numbers, not strings.
  expect(typeof card.total_cost).toBe('number');
  expect(card.total_cost).toBeCloseTo(Number(CALL_COST), 10);
  expect(card.breakdown.map((row) => row.service).sort()).toEqual(['llm', 'stt', 'tts']);
  for (const row of card.breakdown) {
    expect([typeof row.provider, typeof row.service, typeof row.units, typeof row.unit_label, typeof row.cost]).toEqual(
      ['string', 'string', 'number', 'string', 'number'],
    );
  }
}

/** The cost page (components/costs/costs-client.tsx): summary, timeline and by-agent with x-user-id. */
async function costPage(url: string, userId: string) {
  const headers = { 'x-user-id': userId };
  const today = new Date().toISOString().slice(0, 10);
  const summary = await call<{ total_cost: string; this_month_cost: string; by_provider: Record<string, string> }>(
    url,
    'GET',
    `${API}/costs/summary`,
    undefined,
    headers,
  );
  const timeline = await call<Array<{ date: string; total_cost: string; by_provider: Record<string, string> }>>(
    url,
    'GET',
    `${API}/costs/timeline?start_date=${today}&end_date=${today}&period=daily`,
    undefined,
    headers,
  );
  const agents = await call<Array<{ agent_id: string; agent_name: string; total_cost: string; session_count: number }>>(
    url,
    'GET',
    `${API}/costs/by-agent`,
    undefined,
    headers,
  );
  expect([summary.status, timeline.status, agents.status]).toEqual([200, 200, 200]);
  return { summary: summary.body, timeline: timeline.body, agents: agents.body };
}

describe('the VoxArena worker and dashboard, unchanged, against the embedded process', () => {
  let app: CallmeterProcess;

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('voxarena').dataDir, LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('a browser call lands on the signed-in user with one ended session, its transcript and its cost card', async () => {
    const userId = 'user_2browserClerkId';
    const roomName = 'voice-room-browser-1';

    // Dashboard: create an agent, then list the user's agents (agents/page.tsx sends x-user-id).
    const created = await call<{ id: string; name: string; user_id: string; is_active: boolean }>(
      app.url,
      'POST',
      `${API}/agents/`,
      dashboardAgentBody(userId, 'Dylan'),
    );
    expect(created.status).toBe(201);
    expect([created.body.name, created.body.user_id, created.body.is_active]).toEqual(['Dylan', userId, true]);
    const agentId = created.body.id;
    const listed = await call<Array<{ id: string }>>(app.url, 'GET', `${API}/agents/`, undefined, {
      'x-user-id': userId,
    });
    expect(listed.body.map((agent) => agent.id)).toEqual([agentId]);

    // Dashboard's token route (app/api/livekit/token/route.ts): a session for the room, answer unread.
    const fromToken = await call(app.url, 'POST', `${API}/sessions/`, {
      room_name: roomName,
      user_id: userId,
      agent_id: agentId,
    });
    expect(fromToken.status).toBe(201);

    // Worker: room metadata carries only agentId, so the owner comes from the agent.
    const agent = await workerFetchAgent(app.url, agentId);
    expect(agent.user_id).toBe(userId);
    const sessionId = await workerCreateSession(app.url, roomName, agent.user_id, agentId);
    expect(sessionId).toBe((fromToken.body as { id: string }).id);
    await workerCall(app.url, roomName, sessionId, agent.user_id, agentId);

    // Both ends close the room: the worker on shutdown, the voice page on disconnect.
    expect((await call(app.url, 'POST', `${API}/sessions/by-room/${roomName}/end`)).status).toBe(200);
    expect((await call(app.url, 'POST', `${API}/sessions/by-room/${roomName}/end`)).status).toBe(200);

    const page = await eventually(async () => {
      const read = await callPage(app.url, sessionId);
      expect(read.transcripts).toHaveLength(3);
      expect(read.costs.breakdown).toHaveLength(3);
      return read;
    });
    expect([page.session.status, page.session.user_id, page.session.agent_name]).toEqual([
      'COMPLETED',
      userId,
      'Dylan',
    ]);
    expect(page.session.metadata).toEqual({});
    expect(page.transcripts.map((t) => [t.speaker, t.content, t.session_id])).toEqual([
      ['AGENT', 'Hello, how may I help?', sessionId],
      ['USER', 'What is my balance?', sessionId],
      ['AGENT', 'Let me check that for you.', sessionId],
    ]);
    expectCostCard(page.costs, sessionId);

    // Call logs (logs/client.tsx, dashboard/page.tsx): one session for the room, ended.
    const sessions = await call<{ sessions: Array<{ id: string; room_name: string; status: string }>; total: number }>(
      app.url,
      'GET',
      `${API}/sessions/?page=1&limit=10`,
      undefined,
      { 'x-user-id': userId },
    );
    expect(sessions.body.sessions.filter((s) => s.room_name === roomName).map((s) => [s.id, s.status])).toEqual([
      [sessionId, 'COMPLETED'],
    ]);

    // Cost page: the signed-in user's views hold the call's cost, named by the agent.
    await eventually(async () => {
      const costs = await costPage(app.url, userId);
      expect(costs.summary.total_cost).toBe(CALL_COST);
      expect(costs.summary.this_month_cost).toBe(CALL_COST);
      expect(costs.timeline.map((point) => point.total_cost)).toEqual([CALL_COST]);
      expect(costs.agents.map((a) => [a.agent_id, a.agent_name, a.total_cost, a.session_count])).toEqual([
        [agentId, 'Dylan', CALL_COST, 1],
      ]);
    });
    const fallback = await costPage(app.url, 'sip-caller');
    expect(fallback.summary.total_cost).toBe('0');
  });

  it('a phone call finds its agent by the called number and bills the agent owner', async () => {
    const ownerId = 'user_2phoneOwnerId';
    const roomName = 'call-_+15551239876_abc';
    const created = await call<{ id: string }>(
      app.url,
      'POST',
      `${API}/agents/`,
      dashboardAgentBody(ownerId, 'Front desk'),
    );
    expect(created.status).toBe(201);
    const agentId = created.body.id;

    // Dashboard's agent settings (agent-settings.tsx): assign the number, read back on the agent.
    const assigned = await call(app.url, 'POST', `${API}/telephony/numbers/assign`, {
      agent_id: agentId,
      phone_number: '15551239876',
    });
    expect(assigned.status).toBe(200);
    const withNumber = await call<{ phone_number: string | null }>(
      app.url,
      'GET',
      `${API}/agents/${agentId}`,
      undefined,
      { 'x-user-id': ownerId },
    );
    expect(withNumber.body.phone_number).toBe('+15551239876');

    // Worker: the SIP participant's trunk number, looked up with httpx params (urlencoded '+').
    const lookup = await call<{ agent_id: string; name: string; config: Record<string, unknown> }>(
      app.url,
      'GET',
      `${API}/telephony/lookup?phone_number=%2B15551239876`,
    );
    expect(lookup.status).toBe(200);
    expect([lookup.body.agent_id, lookup.body.name, typeof lookup.body.config]).toEqual([
      agentId,
      'Front desk',
      'object',
    ]);
    const agent = await workerFetchAgent(app.url, lookup.body.agent_id);
    expect(agent.user_id).toBe(ownerId);
    const sessionId = await workerCreateSession(app.url, roomName, agent.user_id, agentId);
    await workerCall(app.url, roomName, sessionId, agent.user_id, agentId);
    expect((await call(app.url, 'POST', `${API}/sessions/by-room/${roomName}/end`)).status).toBe(200);

    const page = await eventually(async () => {
      const read = await callPage(app.url, sessionId);
      expect(read.costs.breakdown).toHaveLength(3);
      expect(read.transcripts).toHaveLength(3);
      return read;
    });
    expect([page.session.status, page.session.user_id]).toEqual(['COMPLETED', ownerId]);
    expectCostCard(page.costs, sessionId);
    await eventually(async () => {
      const costs = await costPage(app.url, ownerId);
      expect(costs.summary.total_cost).toBe(CALL_COST);
      expect(costs.agents.map((a) => [a.agent_name, a.session_count])).toEqual([['Front desk', 1]]);
    });

    // A number nobody holds: the worker logs and falls back to its defaults on the 404.
    const released = await call(app.url, 'POST', `${API}/telephony/numbers/release`, { agent_id: agentId });
    expect(released.status).toBe(200);
    const gone: Answer = await call(app.url, 'GET', `${API}/telephony/lookup?phone_number=%2B15551239876`);
    expect([gone.status, gone.body]).toEqual([404, { detail: 'No agent found for this phone number' }]);
  });
});
