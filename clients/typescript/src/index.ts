export { Callmeter, CallmeterError, QueueFullError } from './client.ts';
export type { AuthError, CallmeterOptions, CallmeterStats, Logger, Rejected, Session } from './client.ts';
export type { CapCallback, SessionBudget } from './caps.ts';
export { DEAD_LETTER_FILE, type DeadLetter } from './dead-letters.ts';
export { SPOOL_FILE } from './spool.ts';
export { PROVIDER_IDS, providerId } from './providers.ts';
export { EVENT_NAMESPACE, eventIdFor, usageBody, uuid5 } from './records.ts';
export type { Quantity, RecordFields, UsageBody } from './records.ts';
