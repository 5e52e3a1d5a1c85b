import { randomUUID } from 'node:crypto';

/** HTTP request bodies as the clients send them, for tests that go through the API. */
export function makeSessionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { room_name: `room-${randomUUID()}`, user_id: 'tenant-1', agent_id: null, session_data: {}, ...overrides };
}

/** A priced text-to-speech event of the given session: 3 characters, no reported costs. */
export function makeUsageEventBody(
  sessionId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    session_id: sessionId,
    user_id: 'tenant-1',
    provider: 'resemble',
    event_type: 'tts_characters',
    quantity: 3,
    event_id: randomUUID(),
    ...overrides,
  };
}

export function makeNumberAssignBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { agent_id: `agent-${randomUUID()}`, phone_number: '+15551230001', provider: 'twilio', ...overrides };
}

/** POST /api/agents/ as the dashboard sends it (frontend agent-list.tsx). */
export function makeAgentBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Front desk',
    description: 'Answers the phone',
    type: 'PIPELINE',
    config: {
      system_prompt: 'Be brief.',
      first_message: 'Hello!',
      first_message_mode: 'assistant_speaks_first',
      llm_provider: 'gemini',
      voice_id: 'v-1',
    },
    user_id: 'tenant-1',
    ...overrides,
  };
}
