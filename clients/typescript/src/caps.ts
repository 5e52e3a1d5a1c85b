/** GET /api/sessions/{id}/budget: the call's spend against its lowest per-call cap (money as exact decimal strings). */
export interface SessionBudget {
  readonly sessionId: string;
  readonly allowed: boolean;
  readonly spent: string;
  readonly cap: string | null;
  readonly remaining: string | null;
  readonly budgetId: string | null;
}

export type CapCallback = (standing: SessionBudget) => unknown;

/** The server's answer, as sent (snake_case). */
export interface SessionBudgetAnswer {
  session_id: string;
  allowed: boolean;
  spent: string;
  cap: string | null;
  remaining: string | null;
  budget_id: string | null;
}

export function sessionBudgetOf(answer: SessionBudgetAnswer): SessionBudget {
  return {
    sessionId: answer.session_id,
    allowed: answer.allowed,
    spent: String(answer.spent),
    cap: answer.cap === null ? null : String(answer.cap),
    remaining: answer.remaining === null ? null : String(answer.remaining),
    budgetId: answer.budget_id,
  };
}

// The server stores acknowledged usage within about a second: a call is read (at most every interval)
// until one read started this long after its last acknowledged usage, so the usage that crossed is seen.
export const SETTLE_MS = 2000;

interface Watch {
  readonly callbacks: CapCallback[];
  lastSent: number | null;
  lastAttempt: number;
  lastSeen: number;
  failures: number;
  checking: boolean;
}

/**
 * Reads the standing of watched calls after their usage was acknowledged, at most every intervalMs per
 * call, apart from the batches (a slow or failing read never holds one up). Each call's callbacks run
 * once, when `allowed` turns false; the call is then forgotten, as it is by unwatch() (its end).
 */
export class CapWatcher {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Reads of a standing (failed ones too): the request rate a worker can export. */
  checks = 0;

  constructor(
    private readonly read: (sessionId: string) => Promise<SessionBudget>,
    private readonly intervalMs: number,
    private readonly logger: { warn(message: string): void; error(message: string): void },
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(intervalMs > 0)) throw new RangeError('capCheckIntervalMs must be above 0');
  }

  watch(sessionId: string, callback: CapCallback): void {
    if (this.closed) throw new Error('the client is closed');
    const watch = this.watches.get(sessionId) ?? {
      callbacks: [],
      lastSent: null,
      lastAttempt: -Infinity,
      lastSeen: -Infinity,
      failures: 0,
      checking: false,
    };
    watch.callbacks.push(callback);
    this.watches.set(sessionId, watch);
  }

  unwatch(sessionId: string): void {
    this.watches.delete(sessionId);
  }

  /** Usage of these calls was acknowledged: their standing is due (nothing to do while nothing is watched). */
  sent(sessionIds: Iterable<string>): void {
    if (this.watches.size === 0) return;
    const now = this.now();
    for (const sessionId of sessionIds) {
      const watch = this.watches.get(sessionId);
      if (watch !== undefined) watch.lastSent = now;
    }
    this.schedule();
  }

  close(): void {
    this.closed = true;
    this.watches.clear();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Reads every call that is due; resolves when they were read. */
  async checkDue(): Promise<void> {
    const due = this.due().due;
    for (const sessionId of due) this.watches.get(sessionId)!.checking = true;
    await Promise.all(due.map((sessionId) => this.check(sessionId)));
    this.schedule();
  }

  private due(): { due: string[]; waitMs: number | null } {
    const now = this.now();
    const due: string[] = [];
    let waitMs: number | null = null;
    for (const [sessionId, watch] of this.watches) {
      if (watch.lastSent === null || watch.checking || watch.lastSeen >= watch.lastSent + SETTLE_MS) continue;
      const ready = watch.lastAttempt + this.intervalMs;
      if (now >= ready) due.push(sessionId);
      else waitMs = Math.min(waitMs ?? Infinity, ready - now);
    }
    return { due, waitMs };
  }

  private schedule(): void {
    if (this.closed || this.timer !== null) return;
    const { due, waitMs } = this.due();
    if (due.length === 0 && waitMs === null) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        void this.checkDue();
      },
      due.length > 0 ? 0 : waitMs!,
    );
    // The watch alone never keeps a worker alive.
    this.timer.unref();
  }

  private async check(sessionId: string): Promise<void> {
    const started = this.now();
    this.checks += 1;
    let standing: SessionBudget | null = null;
    let failure: unknown = null;
    try {
      standing = await this.read(sessionId);
    } catch (error) {
      failure = error; // retried at the next interval, never thrown into the worker
    }
    const watch = this.watches.get(sessionId);
    if (watch === undefined) return; // the call ended while it was read
    watch.checking = false;
    watch.lastAttempt = started;
    if (standing === null) {
      watch.failures += 1;
      if (watch.failures === 1)
        this.logger.warn(`callmeter: the budget of call ${sessionId} could not be read (${String(failure)}); retrying`);
      return;
    }
    watch.failures = 0;
    watch.lastSeen = started;
    if (standing.allowed) return;
    this.watches.delete(sessionId);
    for (const callback of watch.callbacks) {
      try {
        // An async callback's rejection is the worker's: logged, never unhandled.
        void Promise.resolve(callback(standing)).catch((error: unknown) =>
          this.logger.error(`callmeter: onCapReached threw ${String(error)}`),
        );
      } catch (error) {
        this.logger.error(`callmeter: onCapReached threw ${String(error)}`);
      }
    }
  }
}
