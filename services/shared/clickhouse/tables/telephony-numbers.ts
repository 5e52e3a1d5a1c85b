import type { TelephonyNumberRecord } from '../../../domain/records/index.ts';

/** telephony_numbers (every agent's number, by version; telephony_number_holders is its view). Reads: services/ingest/telephony/number-history.ts. */
export type TelephonyNumberRow = TelephonyNumberRecord & { readonly record_id: string };

export function telephonyNumberRow(number: TelephonyNumberRecord, recordId: string): TelephonyNumberRow {
  return { ...number, record_id: recordId };
}
