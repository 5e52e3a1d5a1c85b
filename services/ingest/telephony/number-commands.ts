import { AppError } from '../../shared/errors.ts';
import type { AgentNumber, HeldNumber } from './number-rules.ts';
import type { NumberStore } from './number-store.ts';
import { normalizePhoneNumber } from './phone-number.ts';
import type { TelephonyProvider } from './telephony-provider.ts';

export interface TelephonyDeps {
  readonly store: NumberStore;
  readonly provider: TelephonyProvider;
}

export interface AssignNumberInput {
  readonly agent_id: string;
  /** As typed by the client; normalized to E.164 here. */
  readonly phone_number: string;
  readonly provider: string;
  /** The tenant among whose numbers this one is unique; absent: among all. */
  readonly scope?: string;
}

/** A number now held, and the agent as it was before: what undoing the assignment restores. */
export interface Assignment {
  readonly held: HeldNumber;
  /** null: the agent never held a number, and is unknown again once the assignment is undone. */
  readonly previous: AgentNumber | null;
}

/**
 * What the telephony routes call. The store decides first (it is the lock on the number); the
 * carrier follows, and a carrier failure undoes the store's change so the two do not disagree.
 * Throws VALIDATION (bad number), BAD_REQUEST (agent has a number), CONFLICT (number taken),
 * DEPENDENCY_UNAVAILABLE (carrier or store down).
 */
export async function assignNumber(deps: TelephonyDeps, input: AssignNumberInput, nowMs: number): Promise<Assignment> {
  const normalized = normalizePhoneNumber(input.phone_number);
  if (!normalized.ok) {
    throw AppError.validation([
      {
        type: 'value_error',
        loc: ['body', 'phone_number'],
        msg: `Value error, ${normalized.reason}`,
        input: input.phone_number,
        ctx: { error: {} },
      },
    ]);
  }
  const request = {
    agent_id: input.agent_id,
    phone_number: normalized.phone_number,
    provider: input.provider,
    assigned_at: nowMs,
    ...(input.scope === undefined ? {} : { scope: input.scope }),
  };
  const outcome = await deps.store.assign(request);
  if (outcome.kind === 'agent_has_number') throw AppError.of('BAD_REQUEST', outcome.detail);
  if (outcome.kind === 'number_taken') throw AppError.of('CONFLICT', outcome.detail);
  const assignment = { held: outcome.assignment, previous: outcome.previous };
  try {
    await deps.provider.assign(request.phone_number, request.agent_id);
  } catch (error) {
    return undoAndFail(() => restorePrevious(deps.store, assignment), error);
  }
  return assignment;
}

/** Throws NOT_FOUND "Agent not found" and BAD_REQUEST "Agent has no assigned phone number" (compat.md). */
export async function releaseNumber(deps: TelephonyDeps, agentId: string): Promise<HeldNumber> {
  const outcome = await deps.store.release(agentId);
  if (outcome.kind === 'agent_unknown') throw AppError.of('NOT_FOUND', outcome.detail);
  if (outcome.kind === 'no_number') throw AppError.of('BAD_REQUEST', outcome.detail);
  const { released } = outcome;
  try {
    await deps.provider.release(released.phone_number, agentId);
  } catch (error) {
    // Give the number back: the carrier still routes it to this agent, so the agent still holds it.
    return undoAndFail(() => deps.store.assign(released), error);
  }
  return released;
}

/** Undoes an assignment in the store, then at the carrier (which may repeat the call: adapters are idempotent). */
export async function unassignNumber(deps: TelephonyDeps, assignment: Assignment): Promise<void> {
  await restorePrevious(deps.store, assignment);
  await deps.provider.release(assignment.held.phone_number, assignment.held.agent_id);
}

/** Undoes a release: the agent holds the number again, with its own assigned_at, in the store and at the carrier. */
export async function reassignNumber(deps: TelephonyDeps, released: HeldNumber): Promise<void> {
  const outcome = await deps.store.assign(released);
  if (outcome.kind !== 'assigned')
    throw AppError.of(outcome.kind === 'number_taken' ? 'CONFLICT' : 'BAD_REQUEST', outcome.detail);
  await deps.provider.assign(released.phone_number, released.agent_id);
}

/** The agent as before the assignment: unknown if it never held a number, else known with none. */
function restorePrevious(store: NumberStore, { held, previous }: Assignment): Promise<unknown> {
  return previous === null ? store.forget(held) : store.release(held.agent_id);
}

async function undoAndFail(undo: () => Promise<unknown>, error: unknown): Promise<never> {
  let cause = error;
  try {
    await undo();
  } catch (undoError) {
    cause = new AggregateError([error, undoError], 'carrier call failed, and so did undoing the store change');
  }
  throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Telephony provider unavailable', { cause });
}
