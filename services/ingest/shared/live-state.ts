import { AppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';

/** How one service names its live state (or history) not answering: a stable log event and the 503's detail. */
export interface LiveStateFailure {
  readonly event: string;
  readonly detail: string;
}

/**
 * Runs work against a live store (or history), where a store that does not answer is a 503, never a
 * 500: the client may retry. An AppError is the answer already (a 404, a 409, a busy store's 503) and
 * passes as it is.
 */
export function liveStateRunner(log: Logger, failure: LiveStateFailure): <T>(work: () => Promise<T>) => Promise<T> {
  return async (work) => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      log.warn({ err: error }, failure.event);
      throw AppError.of('DEPENDENCY_UNAVAILABLE', failure.detail, { cause: error, headers: { 'Retry-After': '1' } });
    }
  };
}
