/**
 * Step 3's memory: a round's usage rows are decided once (claimed, looked up, priced) and a retry sends
 * the same rows, priced the same, under the same token. An insert into usage_events is not atomic across
 * its views: a view that failed (a full disk, a refused part) leaves the source and the other views
 * stored. The retry's block is then dropped by the source and by every view that has it, and taken by
 * the view that lacks it (the views check their own deduplication,
 * deduplicate_blocks_in_dependent_materialized_views); decided again, the stored-id lookup would leave
 * those events out and that view would never get them. Forgotten once the round is stored; a round
 * given up (a rebalance) is dropped with the oldest once more than `max` are kept.
 */
export class DecidedRounds<T> {
  private readonly decided = new Map<string, Promise<T>>();

  /** `max`: more rounds than the group members of a process ever have in flight. */
  constructor(private readonly max: number) {}

  /** The decision kept for `token`, or a new one by `decide`; a decision that fails is made again on the next try. */
  decide(token: string, decide: () => Promise<T>): Promise<T> {
    let decision = this.decided.get(token);
    // Kept as the most recently tried: the rounds dropped first are the ones no longer retried.
    if (decision !== undefined) {
      this.decided.delete(token);
      this.decided.set(token, decision);
      return decision;
    }
    decision = decide();
    this.decided.set(token, decision);
    if (this.decided.size > this.max) this.decided.delete(this.decided.keys().next().value!);
    // Only this decision: a later one under the same token may have replaced it already.
    decision.catch(() => {
      if (this.decided.get(token) === decision) this.decided.delete(token);
    });
    return decision;
  }

  /** The round is stored: its next round under the same token (a replay) decides afresh. */
  forget(token: string): void {
    this.decided.delete(token);
  }

  has(token: string): boolean {
    return this.decided.has(token);
  }
}
