import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { Agent } from './agent.ts';

/** The most agents one list answers: a bound on the read, far above what one owner runs. */
export const MAX_LISTED_AGENTS = 1000;

// Datetimes leave ClickHouse as epoch milliseconds, the unit the domain keeps them in. The aliases
// differ from the column names: ClickHouse would otherwise resolve WHERE and ORDER BY to them.
const COLUMNS = `id AS agent_id, name, description, type, config, is_active, user_id,
  toUnixTimestamp64Milli(created_at) AS created_ms, toUnixTimestamp64Milli(updated_at) AS updated_ms, version`;

interface AgentRow {
  agent_id: string;
  name: string;
  description: string | null;
  type: Agent['type'];
  config: string;
  is_active: boolean | number;
  user_id: string;
  created_ms: string | number;
  updated_ms: string | number;
  version: string | number;
}

/** The latest stored version of agents: what the record path wrote, read when live state lacks it. */
export class AgentHistory {
  constructor(private readonly ch: ClickHouse) {}

  async byId(id: string): Promise<Agent | null> {
    const [agent] = await this.select(`WHERE id = {id:String} ORDER BY version DESC LIMIT 1`, { id });
    return agent ?? null;
  }

  /** The latest version of each of these agents that the history holds. */
  byIds(ids: readonly string[]): Promise<Agent[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.select(`FINAL WHERE id IN {ids:Array(String)}`, { ids });
  }

  /**
   * A user's active agents, newest first (ties: higher id first), at most MAX_LISTED_AGENTS. FINAL
   * over agents_by_user (011, ordered by user) reads that user's key range only; user_id never
   * changes between versions.
   */
  active(userId: string): Promise<Agent[]> {
    return this.select(
      `FINAL WHERE user_id = {user:String} AND is_active ORDER BY created_at DESC, id DESC LIMIT ${MAX_LISTED_AGENTS}`,
      { user: userId },
      'agentsByUser',
    );
  }

  private async select(
    clause: string,
    params: Record<string, unknown>,
    table: 'agents' | 'agentsByUser' = 'agents',
  ): Promise<Agent[]> {
    const result = await this.ch.client.query({
      query: `SELECT ${COLUMNS} FROM ${tableName(this.ch, table)} ${clause}`,
      query_params: params,
      format: 'JSONEachRow',
    });
    return (await result.json<AgentRow>()).map(toAgent);
  }
}

function toAgent(row: AgentRow): Agent {
  return {
    id: row.agent_id,
    name: row.name,
    description: row.description,
    type: row.type,
    config: JSON.parse(row.config) as Agent['config'],
    is_active: Boolean(row.is_active),
    user_id: row.user_id,
    created_at: Number(row.created_ms),
    updated_at: Number(row.updated_ms),
    version: Number(row.version),
  };
}
