/**
 * The carrier side of a number: routing the line's calls to an agent, and back. A Twilio, Telnyx
 * or SIP trunk adapter implements this port (see README.md); nothing else in callmeter talks to
 * a carrier.
 */
export interface TelephonyProvider {
  assign(phoneNumber: string, agentId: string): Promise<void>;
  release(phoneNumber: string, agentId: string): Promise<void>;
}

export interface ProviderCall {
  readonly operation: 'assign' | 'release';
  readonly phone_number: string;
  readonly agent_id: string;
}

/**
 * The default: records what it was asked and routes nothing, for deployments whose numbers are
 * routed by the agent platform itself, and for tests. `failNext` makes the next call throw.
 */
export class RecordingTelephonyProvider implements TelephonyProvider {
  readonly calls: ProviderCall[] = [];
  private failure: Error | null = null;

  failNext(error: Error = new Error('telephony provider unavailable')): void {
    this.failure = error;
  }

  assign(phoneNumber: string, agentId: string): Promise<void> {
    return this.record({ operation: 'assign', phone_number: phoneNumber, agent_id: agentId });
  }

  release(phoneNumber: string, agentId: string): Promise<void> {
    return this.record({ operation: 'release', phone_number: phoneNumber, agent_id: agentId });
  }

  private async record(call: ProviderCall): Promise<void> {
    const failure = this.failure;
    this.failure = null;
    if (failure !== null) throw failure;
    this.calls.push(call);
  }
}
