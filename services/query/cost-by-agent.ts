import type { costByAgentResponse } from '../../schemas/http/cost-responses.ts';
import type { WireOf } from '../../schemas/http/response-parts.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { READ_AFRESH, type Answers } from './answer-cache.ts';
import { CostTally, money } from './cost-tally.ts';
import {
  agentNames,
  agentServiceLinesRead,
  agentSessionsRead,
  type AgentLine,
  type AgentSessions,
} from './queries/agent-costs.ts';
import { readTogether } from './queries/together.ts';
import type { InstantRange } from './routes/date-bounds.ts';

/** One agent of GET /api/costs/by-agent. */
export type AgentCost = WireOf<typeof costByAgentResponse.schema>[number];

/**
 * GET /api/costs/by-agent: the most expensive agents first (ties by agent id), at most `limit`;
 * usage without an agent is left out; the name is the agent's own (POST /api/agents/), else the latest
 * one the agent's sessions gave, else "Unknown"; session_count counts the sessions with usage in the range.
 * The costs are the tenant's data; the names are too, but for an agent's own name, which is read by
 * id whoever owns the agent: `answers` keeps them only where agents' changes are announced.
 */
export async function costByAgent(
  ch: ClickHouse,
  userId: string,
  range: InstantRange,
  limit: number,
  answers: Answers = READ_AFRESH,
): Promise<AgentCost[]> {
  const costs = await answers.answer(userId, JSON.stringify(['by-agent', range.start, range.end, limit]), () =>
    agentCosts(ch, userId, range, limit),
  );
  const ids = costs.map((cost) => cost.agent_id);
  const names = new Map(
    await answers.answer(
      userId,
      JSON.stringify(['agent-names', ids]),
      async () => [...(await agentNames(ch, userId, ids))],
      { agents: true },
    ),
  );
  return costs.map(({ agent_id, ...cost }) => ({ agent_id, agent_name: names.get(agent_id) ?? 'Unknown', ...cost }));
}

async function agentCosts(
  ch: ClickHouse,
  userId: string,
  range: InstantRange,
  limit: number,
): Promise<Omit<AgentCost, 'agent_name'>[]> {
  const { lines, counts } = await readTogether<{ lines: AgentLine; counts: AgentSessions }>(ch, {
    lines: agentServiceLinesRead(ch, userId, range),
    counts: agentSessionsRead(ch, userId, range),
  });
  const sessions = new Map(counts.map((row) => [row.agent_id, Number(row.session_total)]));
  const tallies = new Map<string, CostTally>();
  for (const line of lines) {
    const tally = tallies.get(line.agent_id) ?? new CostTally();
    tally.add(line);
    tallies.set(line.agent_id, tally);
  }
  const ranked = [...tallies]
    .sort(([a, x], [b, y]) => y.totalCost.comparedTo(x.totalCost) || (a < b ? -1 : 1))
    .slice(0, limit);
  return ranked.map(([agentId, tally]) => ({
    agent_id: agentId,
    total_cost: money(tally.totalCost),
    session_count: sessions.get(agentId) ?? 0,
    event_count: tally.events,
    by_service: tally.byService(),
  }));
}
