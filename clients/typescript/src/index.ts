export { Callmeter, CallmeterError, QueueFullError } from './client.ts';
export type { CallmeterOptions, Logger, Rejected, Session } from './client.ts';
export { EVENT_NAMESPACE, eventIdFor, uuid5 } from './records.ts';
export type { Quantity, RecordFields, UsageBody } from './records.ts';
