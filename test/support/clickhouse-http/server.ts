import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ChdbEngine, type StatementResult } from './chdb-engine.ts';
import { errorAnswer } from './error-answer.ts';
import { readClickHouseRequest, type ClickHouseRequest } from './read-request.ts';

/**
 * TEST EQUIPMENT, never a way to run callmeter: the embedded ClickHouse engine (chdb) of one data
 * folder behind enough of ClickHouse's HTTP interface for @clickhouse/client, so that tests run the
 * CLICKHOUSE_URL code path over HTTP, and several callmeter processes share one database (the engine
 * binds a data folder to one process). Run as its own process:
 *   node --import tsx test/support/clickhouse-http/server.ts <data folder> <port>
 * See test/support/clickhouse-http/README.md for what it answers and what it does not.
 */
const [folder, portText] = process.argv.slice(2);
if (folder === undefined || portText === undefined) throw new Error('usage: server.ts <data folder> <port>');
const CONNECTIONS = 4;
// A server takes URLs up to http_max_uri_size (1 MiB): callmeter sends id lists as `param_*` in the URL.
const MAX_URL_BYTES = 1024 * 1024;

const engine = await ChdbEngine.open(folder, CONNECTIONS);
const about = Buffer.from(
  (
    await engine.run({
      sql: 'SELECT version(), timezone()',
      database: 'default',
      settings: new Map(),
      params: {},
      format: 'TabSeparated',
    })
  ).bytes,
)
  .toString('utf8')
  .trim()
  .split('\t');
const [version, timezone] = [about[0] ?? 'unknown', about[1] ?? 'UTC'];
const compressors = {
  gzip: promisify(zlib.gzip),
  deflate: promisify(zlib.deflate),
  br: promisify(zlib.brotliCompress),
};

const server = http.createServer({ maxHeaderSize: MAX_URL_BYTES + 64 * 1024 }, (request, response) => {
  answer(request, response).catch((error: unknown) => {
    process.stderr.write(`clickhouse-http: ${String(error)}\n`);
    if (!response.headersSent) response.writeHead(500);
    response.end();
  });
});
// A server's keep_alive_timeout: the client reads it from the Keep-Alive header Node sends with it.
server.keepAliveTimeout = 10_000;

async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://clickhouse').pathname;
  const common = { 'X-ClickHouse-Server-Display-Name': 'callmeter-test-endpoint', 'X-ClickHouse-Timezone': timezone };
  if (path === '/ping' || (path === '/' && request.method === 'GET' && !(request.url ?? '').includes('query='))) {
    response.writeHead(200, { ...common, 'Content-Type': 'text/html; charset=UTF-8' }).end('Ok.\n');
    return;
  }
  let parsed: ClickHouseRequest | null = null;
  try {
    parsed = await readClickHouseRequest(request);
    const read = Date.now();
    const result = await engine.run(parsed.statement, () => response.destroyed);
    // A write whose client went away before its answer (a process killed with its insert in flight): said on
    // stderr with its token and timing, for a test to read when it finds an event stored twice.
    if (response.destroyed && /^\s*INSERT\s/i.test(parsed.statement.sql))
      process.stderr.write(
        `clickhouse-http: an INSERT stored at ${new Date().toISOString()}, ${Date.now() - read} ms after it was read, answered to a client gone meanwhile (token ${parsed.statement.settings.get('insert_deduplication_token') ?? 'none'})\n`,
      );
    const format = outputFormat(parsed.statement.sql, parsed.statement.format);
    const encoding = parsed.responseEncoding;
    const body = encoding === null ? result.bytes : await compressors[encoding](result.bytes);
    response.writeHead(200, {
      ...common,
      'Content-Type': contentType(format),
      'X-ClickHouse-Query-Id': parsed.queryId,
      'X-ClickHouse-Format': format,
      'X-ClickHouse-Summary': summary(result),
      ...(encoding === null ? {} : { 'Content-Encoding': encoding }),
      'Content-Length': body.byteLength,
    });
    response.end(body);
  } catch (error) {
    // A request refused before its body was read: the body is drained so that the connection can be reused.
    request.resume();
    const failure = errorAnswer(error, version);
    response.writeHead(failure.status, {
      ...common,
      'Content-Type': 'text/plain; charset=UTF-8',
      'X-ClickHouse-Exception-Code': String(failure.code),
      ...(parsed === null ? {} : { 'X-ClickHouse-Query-Id': parsed.queryId }),
    });
    response.end(failure.body);
  }
}

/** The format the answer is in: the statement's own FORMAT clause (not an INSERT's input format), else the default. */
function outputFormat(sql: string, fallback: string): string {
  if (/^\s*INSERT\s/i.test(sql)) return fallback;
  return /\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$/i.exec(sql)?.[1] ?? fallback;
}

function contentType(format: string): string {
  if (/^(TabSeparated|TSV)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^JSON(Compact|Strings|CompactStrings)?$/i.test(format)) return 'application/json; charset=UTF-8';
  return 'text/plain; charset=UTF-8';
}

/**
 * The X-ClickHouse-Summary header. chdb reports rows and bytes read and the time taken, not what an
 * insert wrote: the written counts are always 0 here (callmeter does not read them).
 */
function summary(result: StatementResult): string {
  return JSON.stringify({
    read_rows: String(result.rowsRead),
    read_bytes: String(result.bytesRead),
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: '0',
    result_rows: '0',
    result_bytes: '0',
    elapsed_ns: String(Math.round(result.elapsedS * 1e9)),
  });
}

const stop = () => {
  server.close();
  server.closeAllConnections();
  engine
    .close()
    .catch(() => undefined)
    .finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
server.listen(Number(portText), '127.0.0.1', () => process.stdout.write(`clickhouse-http listening on ${portText}\n`));
