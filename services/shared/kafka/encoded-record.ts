import type { IHeaders } from 'kafkajs';

/**
 * A Kafka record as the producer sends it. The domain encodes an envelope into one (`encodeRecord`);
 * this layer only sends it, so the type lives here and the producer never imports the domain.
 */
export interface EncodedRecord {
  readonly key: string;
  /**
   * An envelope's JSON text (kafkajs writes a string straight into its request buffer, a Buffer it
   * copies there), or the bytes of a record passed on as they came (a dead letter).
   */
  readonly value: string | Buffer;
  readonly headers: IHeaders;
}
