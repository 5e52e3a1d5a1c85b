import { decodeRecord } from '../../domain/records/index.ts';
import type { DecodedBatch, Round, RoundItem, RoundMember, SourceMessage } from '../round.ts';

/** A record of a round that is not stored, and why: where it sits in its source, and its kind when known. */
export interface DeadLetter {
  readonly member: RoundMember;
  readonly message: SourceMessage;
  readonly reason: string;
  /** The kind of a record that decoded (refused by ClickHouse); its headers' kind comes first. */
  readonly kind?: string;
}

export interface DecodedRound {
  readonly batches: readonly DecodedBatch[];
  /** The records that could not be decoded, in the round's order. */
  readonly undecodable: readonly DeadLetter[];
  /** Where each decoded record (`RoundItem.at`) sits in the round. */
  readonly places: ReadonlyMap<string, { readonly member: RoundMember; readonly message: SourceMessage }>;
}

/** Step 1, decode: each batch's records checked against the schemas; what fails is a dead letter, not a retry. */
export function decodeRound(round: Round): DecodedRound {
  const undecodable: DeadLetter[] = [];
  const places = new Map<string, { member: RoundMember; message: SourceMessage }>();
  const batches = round.members.map((member) => {
    const items: RoundItem[] = [];
    for (const message of member.messages) {
      const decoded = decodeRecord(message.value);
      if (!decoded.ok) {
        undecodable.push({ member, message, reason: decoded.reason });
        continue;
      }
      // Unique in a round: one batch per partition, one message per offset.
      const at = `${member.topic}/${member.partition}/${message.offset}`;
      places.set(at, { member, message });
      const source = member.rowSource ?? { partition: member.partition, offset: message.offset };
      items.push({ envelope: decoded.envelope, source, at });
    }
    return { items, token: member.token, uncertain: member.uncertain };
  });
  return { batches, undecodable, places };
}
