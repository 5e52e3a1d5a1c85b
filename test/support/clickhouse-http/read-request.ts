import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Statement } from './chdb-engine.ts';

/** A request refused before it reaches the engine, answered as the server answers that code. */
export class RequestRefused extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    message: string,
  ) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`);
  }
}

export interface ClickHouseRequest {
  readonly statement: Statement;
  readonly queryId: string;
  /** How the answer is compressed (enable_http_compression=1 and Accept-Encoding), or null. */
  readonly responseEncoding: 'gzip' | 'deflate' | 'br' | null;
}

// URL parameters the server reads itself; every other one is a setting (`param_*` are query parameters).
const NOT_SETTINGS = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'user',
  'password',
  'quota_key',
  'buffer_size',
  'wait_end_of_query',
  'role',
  'stacktrace',
  'compress',
  'decompress',
]);
// Supported by a server, not by this endpoint: refused rather than silently ignored.
const UNSUPPORTED = ['session_id', 'session_timeout', 'session_check'];
// ClickHouse's own block compression of the body or the answer (compress=1, decompress=1).
const NATIVE_COMPRESSION = ['compress', 'decompress'];
const DECOMPRESS: Record<string, (body: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
};

/**
 * Reads one HTTP request the way ClickHouse's HTTP handler does: the query from the `query`
 * parameter, followed by a line feed and the POST body (an INSERT's data), or from the body alone;
 * `database` (or X-ClickHouse-Database), `default_format` (or X-ClickHouse-Format), `query_id`,
 * `param_<name>` values and every other parameter as a setting of this query.
 */
export async function readClickHouseRequest(request: IncomingMessage): Promise<ClickHouseRequest> {
  const url = new URL(request.url ?? '/', 'http://clickhouse');
  const search = url.searchParams;
  for (const name of UNSUPPORTED) {
    if (search.has(name))
      throw new RequestRefused(48, 'NOT_IMPLEMENTED', `${name} is not supported by the test endpoint`);
  }
  for (const name of NATIVE_COMPRESSION) {
    if (search.get(name) === '1')
      throw new RequestRefused(48, 'NOT_IMPLEMENTED', `${name}=1 is not supported by the test endpoint`);
  }
  if ((request.headers['content-type'] ?? '').startsWith('multipart/form-data'))
    throw new RequestRefused(48, 'NOT_IMPLEMENTED', 'multipart bodies are not supported by the test endpoint');
  const settings = new Map<string, string>();
  const params: Record<string, string> = {};
  for (const [name, value] of search) {
    if (name.startsWith('param_')) params[name.slice('param_'.length)] = value;
    else if (!NOT_SETTINGS.has(name)) settings.set(name, value);
  }
  const body = request.method === 'POST' ? await readBody(request) : '';
  const query = search.get('query') ?? '';
  const sql = query === '' ? body : `${query}\n${body}`;
  if (sql.trim() === '') throw new RequestRefused(62, 'SYNTAX_ERROR', 'Empty query');
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const compress = settings.get('enable_http_compression') === '1';
  settings.delete('enable_http_compression');
  return {
    statement: {
      sql,
      database: search.get('database') ?? header('x-clickhouse-database') ?? 'default',
      settings,
      params,
      format: search.get('default_format') ?? header('x-clickhouse-format') ?? 'TabSeparated',
    },
    queryId: search.get('query_id') || randomUUID(),
    responseEncoding: compress ? acceptedEncoding(header('accept-encoding') ?? '') : null,
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const encoding = (request.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return raw.toString('utf8');
  const decompress = DECOMPRESS[encoding];
  if (decompress === undefined)
    throw new RequestRefused(
      48,
      'NOT_IMPLEMENTED',
      `Content-Encoding ${encoding} is not supported by the test endpoint`,
    );
  return (await decompress(raw)).toString('utf8');
}

function acceptedEncoding(accept: string): ClickHouseRequest['responseEncoding'] {
  const offered = accept.split(',').map((item) => item.split(';')[0]!.trim().toLowerCase());
  for (const encoding of ['gzip', 'deflate', 'br'] as const) if (offered.includes(encoding)) return encoding;
  return null;
}
