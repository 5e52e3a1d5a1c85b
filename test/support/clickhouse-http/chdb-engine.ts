import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The part of chdb's native addon used here (the same calls chdb's own Session makes). */
interface NativeChdb {
  QueryAsyncConnection(
    connection: unknown,
    sql: string,
    format: string,
    params?: Readonly<Record<string, string>>,
  ): Promise<{ bytes: Uint8Array; elapsed: number; rowsRead: number; bytesRead: number }>;
}

interface ChdbSession {
  readonly connection: unknown;
  close(): void;
}

// The addon itself, called with the parameter values exactly as the HTTP client sent them: chdb's
// queryBindAsync would escape them a second time (it takes JS values, not the escaped text of `param_*`).
const chdbMain = require.resolve('chdb');
const { Session } = require('chdb') as { Session: new (folder: string) => ChdbSession };
const native = (
  require(path.join(path.dirname(chdbMain), 'dist/loader.js')) as { loadNative(): NativeChdb }
).loadNative();

/** One statement as a ClickHouse server would run it for one HTTP request. */
export interface Statement {
  readonly sql: string;
  readonly database: string;
  /** Settings of this request only (URL parameters), as text, as the server receives them. */
  readonly settings: ReadonlyMap<string, string>;
  /** `param_<name>` values, still in ClickHouse's escaped text form. */
  readonly params: Readonly<Record<string, string>>;
  /** The output format when the statement names none (default_format; the server's TabSeparated). */
  readonly format: string;
}

export interface StatementResult {
  readonly bytes: Uint8Array;
  readonly rowsRead: number;
  readonly bytesRead: number;
  readonly elapsedS: number;
}

/**
 * The embedded engine behind the test endpoint: a few chdb connections to one data folder, each
 * running one statement at a time. chdb keeps a SET for the life of a connection, while a server
 * applies a request's settings to that request only; so every statement starts with `USE` of its
 * database, resets the settings an earlier request left on the connection (to the value a fresh
 * connection has) and sets its own. Statements with parameters run one at a time across all
 * connections: chdb's own binding does the same, because the engine's parameter state is not
 * isolated per connection (chdb's index.js: concurrent bound queries clobber each other).
 */
export class ChdbEngine {
  private readonly idle: PooledConnection[];
  private readonly waiting: ((connection: PooledConnection) => void)[] = [];
  private boundTail: Promise<unknown> = Promise.resolve();
  private running = 0;

  private constructor(connections: PooledConnection[]) {
    this.idle = [...connections];
  }

  static async open(folder: string, size: number): Promise<ChdbEngine> {
    const sessions = Array.from({ length: size }, () => new Session(folder));
    const fresh = await native.QueryAsyncConnection(
      sessions[0]!.connection,
      'SELECT name, value FROM system.settings WHERE changed',
      'JSONEachRow',
    );
    const baseline = new Map(
      Buffer.from(fresh.bytes)
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { name: string; value: string })
        .map(({ name, value }) => [name, value]),
    );
    return new ChdbEngine(sessions.map((session) => new PooledConnection(session, baseline)));
  }

  /**
   * Runs the statement on the next free connection. `abandoned` is asked once it has one: a statement
   * whose client has gone by then is not run (a server runs a request as it reads it, so no queue
   * holds a dead client's insert to store it seconds later).
   */
  async run(statement: Statement, abandoned: () => boolean = () => false): Promise<StatementResult> {
    if (Object.keys(statement.params).length === 0) return this.onConnection(statement, abandoned);
    const turn = this.boundTail.then(() => this.onConnection(statement, abandoned));
    this.boundTail = turn.catch(() => undefined);
    return turn;
  }

  /** Waits for the statements under way, then closes every connection. */
  async close(): Promise<void> {
    while (this.running > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    for (const connection of this.idle) connection.close();
  }

  private async onConnection(statement: Statement, abandoned: () => boolean): Promise<StatementResult> {
    const connection =
      this.idle.pop() ?? (await new Promise<PooledConnection>((resolve) => this.waiting.push(resolve)));
    this.running += 1;
    try {
      if (abandoned())
        throw new Error('Code: 394. DB::Exception: The client went away before the query ran. (QUERY_WAS_CANCELLED)');
      return await connection.run(statement);
    } finally {
      this.running -= 1;
      const next = this.waiting.shift();
      if (next === undefined) this.idle.push(connection);
      else next(connection);
    }
  }
}

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One chdb connection and the settings earlier requests left on it. */
class PooledConnection {
  /** Settings a request set on this connection, which the next request must undo unless it sets them too. */
  private readonly dirty = new Set<string>();

  constructor(
    private readonly session: ChdbSession,
    private readonly baseline: ReadonlyMap<string, string>,
  ) {}

  async run(statement: Statement): Promise<StatementResult> {
    for (const name of statement.settings.keys()) {
      if (!SETTING_NAME.test(name))
        throw new Error(`Code: 115. DB::Exception: Unknown setting '${name}'. (UNKNOWN_SETTING)`);
      this.dirty.add(name);
    }
    const prelude = [`USE ${quoteIdentifier(statement.database)}`];
    for (const name of this.dirty) {
      const value = statement.settings.get(name);
      if (value !== undefined) prelude.push(`SET ${name} = ${quoteString(value)}`);
      else if (this.baseline.has(name)) prelude.push(`SET ${name} = ${quoteString(this.baseline.get(name)!)}`);
      else prelude.push(`SET ${name} = DEFAULT`);
    }
    const sql = `${prelude.join('; ')}; ${statement.sql}`;
    const params = Object.keys(statement.params).length === 0 ? undefined : statement.params;
    try {
      const result = await native.QueryAsyncConnection(this.session.connection, sql, statement.format, params);
      for (const name of [...this.dirty]) if (!statement.settings.has(name)) this.dirty.delete(name);
      return { bytes: result.bytes, rowsRead: result.rowsRead, bytesRead: result.bytesRead, elapsedS: result.elapsed };
    } finally {
      // A statement of the client's own that is a SET would outlive this request too: learn what it changed.
      if (/^\s*SET\s/i.test(statement.sql)) await this.learnChanged().catch(() => undefined);
    }
  }

  close(): void {
    this.session.close();
  }

  private async learnChanged(): Promise<void> {
    const result = await native.QueryAsyncConnection(
      this.session.connection,
      'SELECT name, value FROM system.settings WHERE changed',
      'JSONEachRow',
    );
    for (const line of Buffer.from(result.bytes).toString('utf8').split('\n')) {
      if (line === '') continue;
      const { name, value } = JSON.parse(line) as { name: string; value: string };
      if (this.baseline.get(name) !== value) this.dirty.add(name);
    }
  }
}

function quoteString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function quoteIdentifier(name: string): string {
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}
