import type { Session } from '../sessions/session.ts';

/** The names of the agents with these ids that exist (AgentService.names). */
export type AgentNames = (agentIds: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/**
 * A session that carries no agent_name is named by its agent, as it is now (the replaced service
 * read the name from the agent on every answer). A name the session was given stays; an agent id
 * that names no agent leaves it null. One lookup for the whole list.
 */
export async function nameSessionAgents(sessions: readonly Session[], agentNames: AgentNames): Promise<Session[]> {
  const unnamed = (session: Session) => session.agent_name === null && session.agent_id !== null;
  const ids = sessions.flatMap((session) => (unnamed(session) ? [session.agent_id!] : []));
  if (ids.length === 0) return [...sessions];
  const names = await agentNames(ids);
  return sessions.map((session) =>
    unnamed(session) && names.has(session.agent_id!)
      ? { ...session, agent_name: names.get(session.agent_id!)! }
      : session,
  );
}
