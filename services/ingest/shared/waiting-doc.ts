import { errorDoc, type ResponseDoc } from '../../shared/http/define-route.ts';
import { tooManyChangesWaiting } from './keyed-queue.ts';

/** The documented 429 of a change refused while too many changes of the same `what` wait their turn. */
export function tooManyWaitingDoc(what: string, example = what): { readonly 429: ResponseDoc } {
  return {
    429: errorDoc(`Too many changes of this ${what} wait already (Retry-After)`, tooManyChangesWaiting(example)),
  };
}
