/** The few callmeter calls the benchmarks make themselves (the load driver makes the rest). */
export interface BenchSession {
  readonly id: string;
  readonly user_id: string;
  readonly room_name: string;
}

export async function createSessions(url: string, user: string, count: number): Promise<BenchSession[]> {
  const sessions = [];
  for (let i = 0; i < count; i += 1) {
    const room = `${user}-${i}-${Date.now()}`;
    const response = await fetch(`${url}/api/sessions/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ room_name: room, user_id: user, agent_id: 'agent-bench' }),
    });
    sessions.push({ id: ((await response.json()) as { id: string }).id, user_id: user, room_name: room });
  }
  return sessions;
}

export async function eventCount(url: string, user: string): Promise<number> {
  const response = await fetch(`${url}/api/costs/summary`, { headers: { 'x-user-id': user } });
  return ((await response.json()) as { event_count: number }).event_count;
}

/** Ends a session as its agent worker does when the call is over. */
export async function endSession(url: string, session: BenchSession): Promise<number> {
  const response = await fetch(`${url}/api/sessions/by-room/${encodeURIComponent(session.room_name)}/end`, {
    method: 'POST',
    headers: { 'x-user-id': session.user_id },
  });
  await response.arrayBuffer();
  return response.status;
}
