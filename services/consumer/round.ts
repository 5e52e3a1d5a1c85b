import type { IHeaders } from 'kafkajs';
import type { Envelope } from '../domain/records/index.ts';
import type { RecordSource } from './record-rows.ts';

/** A record as its source holds it: a Kafka message, or a journal entry at its position. */
export interface SourceMessage {
  /** Its place in its partition (a journal entry's: its position): what its dead letter names. */
  readonly offset: string;
  readonly value: Buffer | null;
  readonly key?: Buffer | null;
  readonly headers?: IHeaders;
}

/** One batch within a round: one partition's batch of a fetch, or a journal range. */
export interface RoundMember {
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly SourceMessage[];
  /** Deterministic for the same records: the batch's usage event claims and its dead letters carry it. */
  readonly token: string;
  /** Planned in a round that could not be replayed whole: its events may be stored already under another token. */
  readonly uncertain: boolean;
  /** Where every row of the batch says it came from, instead of its own place: the journal's rows carry none (-1). */
  readonly rowSource?: RecordSource;
  /** The token its dead letters go in under; absent: its own token. */
  readonly deadLetterToken?: string;
}

/**
 * What one insert per table stores: the batches of one fetch across the partitions of a gathered
 * topic (usage), one batch of another topic, or one range of the embedded journal.
 */
export interface Round {
  readonly members: readonly RoundMember[];
  /** The same for a replay of the same round: the ClickHouse insert_deduplication_token prefix. */
  readonly token: string;
}

/** A decoded record and where its rows say it came from. */
export interface SourcedEnvelope {
  readonly envelope: Envelope;
  readonly source: RecordSource;
}

/** A decoded record of a round, with its place in the round: the same on every try of the round. */
export interface RoundItem extends SourcedEnvelope {
  readonly at: string;
}

/** One batch's decoded records: its own token (claims), and whether its stored events are left out. */
export interface DecodedBatch<I extends SourcedEnvelope = RoundItem> {
  readonly items: readonly I[];
  readonly token: string;
  readonly uncertain: boolean;
}
