import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { usageQuantities } from './usage-quantity.ts';

// The token parts (and connected time) an event without them carries: none.
const NO_PARTS = {
  cached_input_tokens: null,
  cache_write_tokens: null,
  audio_input_tokens: null,
  cached_audio_input_tokens: null,
  image_input_tokens: null,
  cached_image_input_tokens: null,
  audio_output_tokens: null,
  reasoning_tokens: null,
  session_duration_seconds: null,
};

describe('usageQuantities', () => {
  it('keeps a sent quantity exactly, in plain notation', () => {
    expect(usageQuantities('llm_tokens', { quantity: '1200' })).toEqual({
      quantity: '1200',
      input_tokens: null,
      output_tokens: null,
      ...NO_PARTS,
    });
    expect(usageQuantities('stt_minutes', { quantity: '0.000000300' })).toMatchObject({ quantity: '0.0000003' });
  });

  it('converts the workers’ usage_data: seconds to minutes, token sums, characters', () => {
    expect(usageQuantities('stt_minutes', { usage_data: { audio_duration_seconds: 12.5 } })).toMatchObject({
      quantity: '0.208333333333333333',
    });
    expect(usageQuantities('stt_minutes', { usage_data: { audio_duration_seconds: 90 } })).toMatchObject({
      quantity: '1.5',
    });
    expect(usageQuantities('llm_tokens', { usage_data: { input_tokens: 900, output_tokens: 300 } })).toEqual({
      quantity: '1200',
      input_tokens: '900',
      output_tokens: '300',
      ...NO_PARTS,
    });
    expect(usageQuantities('llm_tokens', { input_tokens: 5 })).toEqual({
      quantity: '5',
      input_tokens: '5',
      output_tokens: null,
      ...NO_PARTS,
    });
    expect(usageQuantities('tts_characters', { usage_data: { character_count: 480 } })).toMatchObject({
      quantity: '480',
    });
  });

  it('asks for a quantity when neither it nor usable usage_data was sent', () => {
    expect(usageQuantities('tts_characters', { usage_data: {} })).toMatchObject({
      type: 'missing',
      loc: ['body', 'quantity'],
    });
    expect(usageQuantities('stt_minutes', {})).toMatchObject({ type: 'missing', loc: ['body', 'quantity'] });
  });

  it('refuses usage_data and token counts too large to store', () => {
    expect(usageQuantities('tts_characters', { usage_data: { character_count: '1e1000000000' } })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data'],
      msg: 'Value error, usage_data.character_count is too large: at most 1000000000000',
    });
    expect(usageQuantities('stt_minutes', { usage_data: { audio_duration_seconds: 6.1e13 } })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data'],
    });
    expect(usageQuantities('llm_tokens', { usage_data: { input_tokens: '1e30' } })).toEqual({
      type: 'less_than_equal',
      loc: ['body', 'usage_data', 'input_tokens'],
      msg: 'Input should be less than or equal to 1000000000000',
      input: '1e30',
      ctx: { le: 1_000_000_000_000 },
    });
  });

  it('takes every token count up to 10^12 and their sum up to 10^12 tokens, and refuses one token more', () => {
    expect(usageQuantities('llm_tokens', { usage_data: { output_tokens: 1e12 } })).toEqual({
      quantity: '1000000000000',
      input_tokens: null,
      output_tokens: '1000000000000',
      ...NO_PARTS,
    });
    expect(usageQuantities('llm_tokens', { usage_data: { output_tokens: 1e12 + 1 } })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'usage_data', 'output_tokens'],
    });
    expect(usageQuantities('llm_tokens', { input_tokens: 6e11, output_tokens: 4e11 })).toMatchObject({
      quantity: '1000000000000',
    });
    expect(
      usageQuantities('llm_tokens', { input_tokens: 6e11, usage_data: { output_tokens: 4e11 + 1 } }),
    ).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data'],
      msg: 'Value error, input_tokens + output_tokens is 1000000000001, over the limit of 1000000000000 tokens for one event',
    });
    // With a quantity, the counts only split it: their sum is bounded by the quantity's own bound.
    expect(usageQuantities('llm_tokens', { quantity: '5', input_tokens: 1e12, output_tokens: 1e12 })).toMatchObject({
      quantity: '5',
    });
  });

  it('refuses negative, fractional or non-numeric counts in the pydantic item shape', () => {
    expect(usageQuantities('stt_minutes', { usage_data: { audio_duration_seconds: -1 } })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data'],
    });
    expect(usageQuantities('tts_characters', { usage_data: { character_count: 'many' } })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data'],
    });
    expect(usageQuantities('llm_tokens', { usage_data: { input_tokens: 1.5 } })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data', 'input_tokens'],
    });
  });

  it('never prints exponent form, and minutes times 60 give the seconds back within the 18-decimal rounding', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 999 }), (whole, thousandths) => {
        const seconds = Number(`${whole}.${String(thousandths).padStart(3, '0')}`);
        const result = usageQuantities('stt_minutes', { usage_data: { audio_duration_seconds: seconds } });
        expect('quantity' in result).toBe(true);
        const quantity = (result as { quantity: string }).quantity;
        expect(quantity).toMatch(/^\d+(\.\d*[1-9])?$/);
        expect(Math.abs(Number(quantity) * 60 - seconds)).toBeLessThan(1e-6);
      }),
    );
  });
});

describe('usageQuantities with token kinds', () => {
  it('takes every kind at the top or in usage_data, the quantity still input + output', () => {
    expect(
      usageQuantities('llm_tokens', {
        input_tokens: 1000,
        cached_input_tokens: 400,
        usage_data: { output_tokens: 200, audio_output_tokens: 50, reasoning_tokens: 20 },
      }),
    ).toEqual({
      ...NO_PARTS,
      quantity: '1200',
      input_tokens: '1000',
      cached_input_tokens: '400',
      output_tokens: '200',
      audio_output_tokens: '50',
      reasoning_tokens: '20',
    });
  });

  it('refuses a part larger than its whole, at the part, naming both', () => {
    expect(
      usageQuantities('llm_tokens', { input_tokens: 100, cached_input_tokens: 101, output_tokens: 1 }),
    ).toMatchObject({
      type: 'value_error',
      loc: ['body', 'cached_input_tokens'],
      msg: 'Value error, cached_input_tokens (101) is more than input_tokens (100), which includes it',
      input: 101,
    });
    expect(
      usageQuantities('llm_tokens', { usage_data: { output_tokens: 10, audio_output_tokens: 8, reasoning_tokens: 5 } }),
    ).toMatchObject({
      loc: ['body', 'usage_data', 'output_tokens'],
      msg: 'Value error, output_tokens (10) is less than its audio and reasoning parts together (13)',
    });
    expect(usageQuantities('llm_tokens', { input_tokens: 10, cache_write_tokens: 1.5 })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'cache_write_tokens'],
    });
  });
});

describe('usageQuantities with image tokens, connected time and tokens of speech', () => {
  it('takes image input and its cached part, and refuses a cached image count over either whole it belongs to', () => {
    expect(
      usageQuantities('llm_tokens', {
        input_tokens: 900,
        cached_input_tokens: 300,
        image_input_tokens: 256,
        cached_image_input_tokens: 128,
        output_tokens: 100,
      }),
    ).toEqual({
      ...NO_PARTS,
      quantity: '1000',
      input_tokens: '900',
      cached_input_tokens: '300',
      image_input_tokens: '256',
      cached_image_input_tokens: '128',
      output_tokens: '100',
    });
    expect(
      usageQuantities('llm_tokens', {
        input_tokens: 900,
        cached_input_tokens: 300,
        usage_data: { image_input_tokens: 100, cached_image_input_tokens: 128 },
      }),
    ).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data', 'cached_image_input_tokens'],
      msg: 'Value error, cached_image_input_tokens (128) is more than image_input_tokens (100), which includes it',
    });
    expect(
      usageQuantities('llm_tokens', { input_tokens: 100, audio_input_tokens: 60, image_input_tokens: 60 }),
    ).toMatchObject({
      loc: ['body', 'input_tokens'],
      msg: 'Value error, input_tokens (100) is less than its cached, audio, image and cache-write parts together (120)',
    });
  });

  it('takes a realtime model’s connected seconds with its tokens, or alone as an event of 0 tokens', () => {
    expect(
      usageQuantities('llm_tokens', { input_tokens: 50, output_tokens: 10, session_duration_seconds: '12.50' }),
    ).toEqual({
      ...NO_PARTS,
      quantity: '60',
      input_tokens: '50',
      output_tokens: '10',
      session_duration_seconds: '12.5',
    });
    expect(usageQuantities('llm_tokens', { session_duration_seconds: '90' })).toEqual({
      ...NO_PARTS,
      quantity: '0',
      input_tokens: null,
      output_tokens: null,
      session_duration_seconds: '90',
    });
    expect(usageQuantities('llm_tokens', { usage_data: { session_duration_seconds: 3.25 } })).toMatchObject({
      quantity: '0',
      session_duration_seconds: '3.25',
    });
  });

  it('refuses connected seconds that are negative, not a number, or on an event that is not an LLM’s', () => {
    expect(usageQuantities('llm_tokens', { usage_data: { session_duration_seconds: -1 } })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'usage_data', 'session_duration_seconds'],
      msg: 'Value error, session_duration_seconds must be a number from 0 to 1000000000000',
    });
    expect(usageQuantities('llm_tokens', { usage_data: { session_duration_seconds: 'long' } })).toMatchObject({
      loc: ['body', 'usage_data', 'session_duration_seconds'],
    });
    expect(usageQuantities('stt_minutes', { quantity: '1', session_duration_seconds: '60' })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'session_duration_seconds'],
      msg: "Value error, session_duration_seconds is a realtime model's connected time: only llm_tokens events carry it",
    });
  });

  it('keeps a speech event’s quantity in minutes or characters when it carries the tokens its vendor bills', () => {
    expect(
      usageQuantities('tts_characters', {
        quantity: '480',
        input_tokens: 120,
        output_tokens: 2400,
        audio_output_tokens: 2400,
      }),
    ).toEqual({
      ...NO_PARTS,
      quantity: '480',
      input_tokens: '120',
      output_tokens: '2400',
      audio_output_tokens: '2400',
    });
    expect(
      usageQuantities('stt_minutes', {
        input_tokens: 1500,
        audio_input_tokens: 1500,
        output_tokens: 90,
        usage_data: { audio_duration_seconds: 90 },
      }),
    ).toMatchObject({ quantity: '1.5', input_tokens: '1500', audio_input_tokens: '1500', output_tokens: '90' });
  });
});
