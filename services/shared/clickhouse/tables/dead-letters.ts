/** dead_letters: records that could not be stored, with the reason (the consumer writes them, finance reads them). */
export interface DeadLetterRow {
  readonly kind: string;
  readonly reason: string;
  readonly topic: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
  readonly record: string;
}
