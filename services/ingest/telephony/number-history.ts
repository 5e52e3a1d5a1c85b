import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { AgentNumber } from './number-rules.ts';

interface NumberRow {
  agent_id: string;
  phone_number: string | null;
  provider: string | null;
  status: 'assigned' | 'released';
  assigned_ms: string;
}

// An assigned record's changed_at is the number's own assigned_at (telephony-service.ts publishes
// it so), not the time it was published: that is what a GET answered before live state lost it.
const COLUMNS = 'agent_id, phone_number, provider, status, toUnixTimestamp64Milli(changed_at) AS assigned_ms';

/** The latest stored state of telephony numbers, read when live state no longer holds it. */
export class NumberHistory {
  constructor(private readonly ch: ClickHouse) {}

  async agent(agentId: string): Promise<AgentNumber | null> {
    const rows = await this.select(`WHERE agent_id = {agent:String} ORDER BY version DESC LIMIT 1`, { agent: agentId });
    return rows[0] ?? null;
  }

  /** The latest stored state of each of these agents that has one, in one query. */
  async agents(agentIds: readonly string[]): Promise<AgentNumber[]> {
    if (agentIds.length === 0) return [];
    return this.select(`WHERE agent_id IN {agents:Array(String)} ORDER BY version DESC LIMIT 1 BY agent_id`, {
      agents: [...agentIds],
    });
  }

  /**
   * The agent whose latest state holds this number, if any: the agents that ever held it come from
   * telephony_number_holders (011, ordered by number), and their latest states from their key ranges
   * of telephony_numbers, instead of FINAL over every agent's numbers.
   */
  async holderOf(phoneNumber: string): Promise<AgentNumber | null> {
    return (await this.holdersOf(phoneNumber))[0] ?? null;
  }

  /** Every agent whose latest state holds this number (several when numbers are unique per tenant). */
  async holdersOf(phoneNumber: string): Promise<AgentNumber[]> {
    const holders = `SELECT agent_id FROM ${tableName(this.ch, 'telephonyNumberHolders')} WHERE phone_number = {number:String}`;
    const rows = await this.select(`WHERE agent_id IN (${holders}) ORDER BY version DESC LIMIT 1 BY agent_id`, {
      number: phoneNumber,
    });
    return rows.filter((row) => row.phone_number === phoneNumber);
  }

  private async select(clause: string, params: Record<string, string | string[]>): Promise<AgentNumber[]> {
    const result = await this.ch.client.query({
      query: `SELECT ${COLUMNS} FROM ${tableName(this.ch, 'telephonyNumbers')} ${clause}`,
      query_params: params,
      format: 'JSONEachRow',
    });
    return (await result.json<NumberRow>()).map((row) =>
      row.status === 'released'
        ? { agent_id: row.agent_id, phone_number: null, provider: null, assigned_at: null }
        : {
            agent_id: row.agent_id,
            phone_number: row.phone_number,
            provider: row.provider,
            assigned_at: Number(row.assigned_ms),
          },
    );
  }
}
