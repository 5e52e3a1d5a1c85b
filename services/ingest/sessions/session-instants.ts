import { AppError } from '../../shared/errors.ts';
import { instantOutsideWindow, MAX_UTC_OFFSET_MS, type InstantWindow } from '../../shared/validation/instant-window.ts';
import type { SessionUpdate } from './session.ts';

/** The instants of a call a client reports: each says when something happened, so each lies in the window of now. */
const REPORTED_INSTANTS = ['ended_at', 'transfer_timestamp'] as const;

/**
 * Refuses (422, every field at once) an update whose reported instants lie outside the window: an end in
 * the year 9999 would keep the session taking usage until then and give it a duration no column holds.
 * The fields in `offsetless` were sent without an offset (a local datetime, or a bare date, read as
 * UTC midnight): a worker ahead of UTC sends its own clock's, so they may lie up to the largest UTC
 * offset further ahead.
 */
export function assertInstantsInWindow(
  update: SessionUpdate,
  window: InstantWindow,
  offsetless: ReadonlySet<string> = new Set(),
): void {
  const items = REPORTED_INSTANTS.flatMap((field) => {
    const atMs = update[field];
    if (atMs === undefined || atMs === null) return [];
    const slackMs = offsetless.has(field) ? MAX_UTC_OFFSET_MS : 0;
    const item = instantOutsideWindow(field, atMs, new Date(atMs).toISOString(), window, '', slackMs);
    return item === null ? [] : [item];
  });
  if (items.length > 0) throw AppError.validation(items);
}
