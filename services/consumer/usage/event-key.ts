/**
 * What an event_id deduplicates within: its tenant. One string per (user_id, event_id), used as the
 * Redis claim's key suffix and to match stored ids; the event id (a UUID, fixed length, no colon)
 * comes first, so no two pairs give the same string whatever the user_id holds.
 */
export function eventKey(userId: string, eventId: string): string {
  return `${eventId}:${userId}`;
}

export interface EventRef {
  readonly user_id: string;
  readonly event_id: string;
}
