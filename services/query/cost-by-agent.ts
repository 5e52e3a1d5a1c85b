import { Decimal } from 'decimal.js';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { CostTally, money } from './cost-tally.ts';
import { agentNames, agentServiceLines, agentTotals } from './queries/agent-costs.ts';
import type { InstantRange } from './routes/date-bounds.ts';

export interface AgentCost {
  readonly agent_id: string;
  readonly agent_name: string;
  readonly total_cost: string;
  readonly session_count: number;
  readonly event_count: number;
  readonly by_service: ReturnType<CostTally['byService']>;
}

/**
 * GET /api/costs/by-agent: the most expensive agents first (ties by agent id), at most `limit`;
 * usage without an agent is left out; the name is the latest one the agent's sessions gave, else
 * "Unknown".
 */
export async function costByAgent(ch: ClickHouse, userId: string, range: InstantRange, limit: number): Promise<AgentCost[]> {
  const [totals, lines, names] = await Promise.all([agentTotals(ch, userId, range), agentServiceLines(ch, userId, range), agentNames(ch, userId)]);
  const tallies = new Map<string, CostTally>();
  for (const line of lines) {
    const tally = tallies.get(line.agent_id) ?? new CostTally();
    tally.add(line);
    tallies.set(line.agent_id, tally);
  }
  return totals
    .map((row) => ({ row, cost: new Decimal(row.cost_sum) }))
    .sort((a, b) => b.cost.comparedTo(a.cost) || (a.row.agent_id < b.row.agent_id ? -1 : 1))
    .slice(0, limit)
    .map(({ row, cost }) => ({
      agent_id: row.agent_id,
      agent_name: names.get(row.agent_id) ?? 'Unknown',
      total_cost: money(cost),
      session_count: Number(row.sessions),
      event_count: Number(row.events_sum),
      by_service: tallies.get(row.agent_id)?.byService() ?? [],
    }));
}
