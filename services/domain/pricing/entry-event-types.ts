import type { RateCardFile, RateEntry } from '../../../schemas/rate-card.ts';

/**
 * The event types a card entry prices: its `event_type`, or every event type whose `services` entry
 * has the entry's `service`, in the order of `services`. Empty for a service no event type has.
 * Unchecked: rate-card-problems.ts is what refuses an entry naming both, neither or an unknown one.
 */
export function listEntryEventTypes(services: RateCardFile['services'], entry: RateEntry): string[] {
  if (entry.event_type !== undefined) return [entry.event_type];
  return Object.entries(services).flatMap(([eventType, described]) =>
    described.service === entry.service ? [eventType] : [],
  );
}
