import type { UsageEventType } from '../../../schemas/http/usage-event.ts';
import type { PricedUsage } from '../../domain/pricing/index.ts';
import type { Envelope, UsageRecord } from '../../domain/records/index.ts';

/** A usage record as ingest makes it: of an event type the body allows. */
export type AcceptedRecord = UsageRecord & { readonly event_type: UsageEventType };

/** What POST /api/usage/events answers: compat.md's keys, and the cost as priced at acceptance. */
export interface AcceptedUsage {
  readonly record: AcceptedRecord;
  readonly envelope: Envelope;
  /** The event priced as the consumer will price it (the same card and catalogs; a tenant entry made within the last seconds may not be applied yet). */
  readonly priced: PricedUsage | null;
}
