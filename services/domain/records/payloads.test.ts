import { describe, expect, it } from 'vitest';
import { RECORD_KINDS } from '../../../schemas/records/envelope.ts';
import { payloadProblem } from './payloads.ts';

describe('record payloads', () => {
  // Each kind's schema is compiled on its first record, not at import: a schema ajv refuses would
  // otherwise surface only when a process first meets that kind.
  it.each(RECORD_KINDS)('compiles the %s schema and names what an empty payload lacks', (kind) => {
    expect(payloadProblem(kind, {})).toMatch(
      new RegExp(`^invalid ${kind} payload: / must have required property '\\w+'$`),
    );
  });
});
