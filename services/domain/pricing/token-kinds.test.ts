import { describe, expect, it } from 'vitest';
import { chargedTokens, tokenCountProblems, type TokenKind } from './token-kinds.ts';

const charged = (counts: Parameters<typeof chargedTokens>[0], priced: TokenKind[]) =>
  Object.fromEntries([...chargedTokens(counts, new Set(priced))].map(([kind, count]) => [kind, count.toFixed()]));

describe('token kinds', () => {
  it('charges each priced kind its own tokens, less its priced parts', () => {
    const counts = {
      input_tokens: '1000',
      cached_input_tokens: '300',
      audio_input_tokens: '200',
      cached_audio_input_tokens: '50',
      output_tokens: '400',
      audio_output_tokens: '100',
      reasoning_tokens: '30',
    };
    expect(charged(counts, ['input_tokens', 'output_tokens'])).toEqual({ input_tokens: '1000', output_tokens: '400' });
    expect(charged(counts, ['input_tokens', 'cached_input_tokens', 'output_tokens'])).toEqual({
      input_tokens: '700',
      cached_input_tokens: '300',
      output_tokens: '400',
    });
    expect(
      charged(counts, [
        'input_tokens',
        'cached_input_tokens',
        'audio_input_tokens',
        'cached_audio_input_tokens',
        'output_tokens',
        'audio_output_tokens',
      ]),
    ).toEqual({
      input_tokens: '550',
      cached_input_tokens: '250',
      audio_input_tokens: '150',
      cached_audio_input_tokens: '50',
      output_tokens: '300',
      audio_output_tokens: '100',
    });
  });

  it('keeps image input apart from audio and charges cached image tokens once, at their own price or as cached input', () => {
    const counts = {
      input_tokens: '1000',
      cached_input_tokens: '300',
      audio_input_tokens: '200',
      cached_audio_input_tokens: '50',
      image_input_tokens: '150',
      cached_image_input_tokens: '40',
      output_tokens: '10',
    };
    const all: TokenKind[] = [
      'input_tokens',
      'cached_input_tokens',
      'audio_input_tokens',
      'cached_audio_input_tokens',
      'image_input_tokens',
      'cached_image_input_tokens',
      'output_tokens',
    ];
    expect(charged(counts, all)).toEqual({
      input_tokens: '440',
      cached_input_tokens: '210',
      audio_input_tokens: '150',
      cached_audio_input_tokens: '50',
      image_input_tokens: '110',
      cached_image_input_tokens: '40',
      output_tokens: '10',
    });
    expect(charged(counts, ['input_tokens', 'cached_input_tokens', 'output_tokens'])).toEqual({
      input_tokens: '700',
      cached_input_tokens: '300',
      output_tokens: '10',
    });
  });

  it('counts an absent kind as 0 and keeps token counts past 2^53 exact', () => {
    expect(
      charged({ input_tokens: '900719925474099312', cached_input_tokens: '1' }, [
        'input_tokens',
        'cached_input_tokens',
        'output_tokens',
      ]),
    ).toEqual({
      input_tokens: '900719925474099311',
      cached_input_tokens: '1',
      output_tokens: '0',
    });
  });

  it('names every part larger than what it is part of', () => {
    expect(
      tokenCountProblems({
        input_tokens: '10',
        cached_input_tokens: '5',
        audio_input_tokens: '5',
        cache_write_tokens: '1',
      }).map((problem) => problem.message),
    ).toEqual(['input_tokens (10) is less than its cached, audio, image and cache-write parts together (11)']);
    expect(
      tokenCountProblems({ input_tokens: '10', cached_input_tokens: '11' }).map((problem) => problem.kind),
    ).toEqual(['cached_input_tokens', 'input_tokens']);
    expect(
      tokenCountProblems({ output_tokens: '10', audio_output_tokens: '6', reasoning_tokens: '5' }).map(
        (problem) => problem.kind,
      ),
    ).toEqual(['output_tokens']);
    expect(
      tokenCountProblems({
        audio_input_tokens: '3',
        cached_audio_input_tokens: '4',
        input_tokens: '10',
        cached_input_tokens: '4',
      }).map((problem) => problem.kind),
    ).toEqual(['cached_audio_input_tokens']);
    expect(
      tokenCountProblems({
        input_tokens: '10',
        cached_input_tokens: '10',
        audio_input_tokens: '10',
        cached_audio_input_tokens: '10',
      }),
    ).toEqual([]);
    expect(
      tokenCountProblems({
        input_tokens: '10',
        cached_input_tokens: '4',
        image_input_tokens: '3',
        cached_image_input_tokens: '5',
      }).map((problem) => problem.kind),
    ).toEqual(['cached_image_input_tokens', 'cached_image_input_tokens']);
    expect(
      tokenCountProblems({
        input_tokens: '10',
        cached_input_tokens: '2',
        audio_input_tokens: '5',
        image_input_tokens: '5',
      }).map((problem) => problem.message),
    ).toEqual(['input_tokens (10) is less than its cached, audio, image and cache-write parts together (12)']);
  });
});
