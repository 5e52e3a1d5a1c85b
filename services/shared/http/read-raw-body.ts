import type { Context } from 'koa';
import { AppError } from '../errors.ts';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
export const BATCH_BODY_LIMIT = 5 * 1024 * 1024;

function tooLarge(limit: number): AppError {
  return AppError.of('PAYLOAD_TOO_LARGE', `Request body too large: the limit is ${limit} bytes`);
}

/** The request's bytes, refused with 413 as soon as they pass the limit (declared or streamed). */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
