/**
 * Who holds which telephony number, as pure decisions over a snapshot of one agent and one
 * number. Both stores apply exactly these rules, so they cannot disagree on an outcome.
 */
export interface AgentNumber {
  readonly agent_id: string;
  /** E.164; null once released. */
  readonly phone_number: string | null;
  readonly provider: string | null;
  /** Epoch milliseconds. */
  readonly assigned_at: number | null;
  /**
   * The tenant among whose numbers a held number is unique (AUTH_MODE=on, an agent callmeter knows);
   * absent: unique among all (AUTH_MODE=off, as the replaced service kept them, or an unknown agent).
   */
  readonly scope?: string;
}

export interface HeldNumber extends AgentNumber {
  readonly phone_number: string;
  readonly provider: string;
  readonly assigned_at: number;
  /** As AgentNumber.scope. */
  readonly scope?: string;
}

export type AssignOutcome =
  /** `previous`: the agent before, null if it never held a number; an undo restores exactly that. */
  | { readonly kind: 'assigned'; readonly assignment: HeldNumber; readonly previous: AgentNumber | null }
  | { readonly kind: 'agent_has_number'; readonly phone_number: string; readonly detail: string }
  | { readonly kind: 'number_taken'; readonly detail: string };

export type ReleaseOutcome =
  | { readonly kind: 'released'; readonly released: HeldNumber }
  | { readonly kind: 'agent_unknown'; readonly detail: string }
  | { readonly kind: 'no_number'; readonly detail: string };

export interface AssignRequest {
  readonly agent_id: string;
  /** Already normalized (normalizePhoneNumber): the stores compare numbers as strings. */
  readonly phone_number: string;
  readonly provider: string;
  readonly assigned_at: number;
  /** As AgentNumber.scope. */
  readonly scope?: string;
}

/** The 400 of an assign for an agent that holds a number already. */
export const agentHasNumber = (phoneNumber: string) => `Agent already has number ${phoneNumber}. Release it first.`;

/**
 * `holder`: the agent that holds the number in the request's scope, if any. One number per agent,
 * one agent per number within a scope.
 */
export function decideAssign(agent: AgentNumber | null, holder: string | null, request: AssignRequest): AssignOutcome {
  if (agent !== null && agent.phone_number !== null) {
    return {
      kind: 'agent_has_number',
      phone_number: agent.phone_number,
      detail: agentHasNumber(agent.phone_number),
    };
  }
  if (holder !== null && holder !== request.agent_id) {
    return { kind: 'number_taken', detail: `Phone number ${request.phone_number} is assigned to another agent` };
  }
  return { kind: 'assigned', assignment: { ...request }, previous: agent };
}

/** An agent is known once it has held a number; releasing twice finds no number (compat.md). */
export function decideRelease(agent: AgentNumber | null): ReleaseOutcome {
  if (agent === null) return { kind: 'agent_unknown', detail: 'Agent not found' };
  if (agent.phone_number === null || agent.provider === null || agent.assigned_at === null) {
    return { kind: 'no_number', detail: 'Agent has no assigned phone number' };
  }
  return {
    kind: 'released',
    released: { ...agent, phone_number: agent.phone_number, provider: agent.provider, assigned_at: agent.assigned_at },
  };
}

export function releasedAgent(agentId: string): AgentNumber {
  return { agent_id: agentId, phone_number: null, provider: null, assigned_at: null };
}

/** The scope a held number is unique in, as the stores key it: '' for all. */
export function scopeOf(number: { readonly scope?: string }): string {
  return number.scope ?? '';
}
