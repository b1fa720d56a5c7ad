import type { DataSource } from 'typeorm';
import { destroyDriverConnection, type DriverConnection } from './connection-bound';
import { PgStatementNames, type PgResult } from './pg-statement-names';

/** What a statement returned: rows for reads, the changed-row count for writes. */
export interface StatementResult {
  records?: unknown[];
  affected?: number;
}

/** Runs one statement outside any transaction. */
export interface DriverChannel {
  /**
   * `prepared`: a hot statement of fixed text, which PostgreSQL may keep parsed and planned per
   * connection (a named statement; see PgStatementNames). Ignored elsewhere.
   */
  run(sql: string, params: readonly unknown[], prepared?: boolean): Promise<StatementResult>;
  /** SQLite: the statement runs synchronously, so callers can skip an await when nothing is queued. */
  readonly synchronous?: boolean;
  runSync?(sql: string, params: readonly unknown[]): StatementResult;
  /**
   * SQLite: a read compiled once whose `row` answers synchronously with its first row as an
   * array of column values (in `columns` order), or null when there is none.
   */
  rowReader?(sql: string): SyncRowReader;
  /** Network drivers: one connection of the pool, for a statement whose wait is bounded. */
  checkout?(): Promise<PooledConnection>;
}

/** One connection checked out of the driver's pool. */
export interface PooledConnection {
  readonly connection: DriverConnection;
  run(sql: string, params: readonly unknown[], prepared?: boolean): Promise<StatementResult>;
  /** Back to the pool. */
  release(): void;
  /** Socket closed at once and out of the pool, never reused. */
  destroy(): void;
}

/** A prepared read answered synchronously, one row as an array of column values. */
export interface SyncRowReader {
  /** The result's column names, in the order of a row's values. */
  readonly columns: readonly string[];
  /** The first row, or null when there is none. */
  row(params: readonly unknown[]): unknown[] | null;
}

/** A pg client checked out of its pool: a DriverConnection that runs statements and goes back. */
interface PgClient extends DriverConnection {
  query(config: { text: string; values: unknown[]; name?: string }): Promise<PgResult>;
  on(event: 'error', listener: () => void): void;
  removeListener(event: 'error', listener: () => void): void;
  release(error?: Error): void;
}

/** mysql2's callback query, on its pool or on a connection of it. */
interface MysqlQueryable {
  query(sql: string, params: unknown[], callback: (error: unknown, result: unknown) => void): void;
}

/** A connection of mysql2's pool. */
interface MysqlConnection extends MysqlQueryable, DriverConnection {
  on(event: 'error', listener: () => void): void;
  removeListener(event: 'error', listener: () => void): void;
  release(): void;
}

/**
 * What the channels read of TypeORM's drivers (their pools are untyped internals): pg's pool
 * (`master`, `slaves`), mysql2's (`pool`, `poolCluster`), better-sqlite3's connection.
 */
interface DriverInternals {
  master?: Parameters<PgStatementNames['run']>[0] & { connect(): Promise<PgClient> };
  slaves?: unknown[];
  pool?: MysqlQueryable & {
    getConnection(callback: (error: unknown, connection: MysqlConnection) => void): void;
  };
  poolCluster?: unknown;
  databaseConnection?: { prepare(sql: string): SqliteStatement };
}

interface SqliteStatement {
  reader: boolean;
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number };
  raw(toggle?: boolean): SqliteStatement;
  columns(): Array<{ name: string }>;
}

/**
 * The DataSource's own connection pool, used directly for single statements: TypeORM creates and
 * releases a QueryRunner, broadcasts events and logs for every `dataSource.query`, which costs
 * up to half the throughput of a point read. Same pool, same connection options, same result
 * types. Transactions still go through a QueryRunner. Returns undefined for drivers (or
 * replication set-ups) it does not know, which then use QueryRunners for everything.
 */
export function directChannel(dataSource: DataSource): DriverChannel | undefined {
  if (process.env.HOLDFAST_SQL_VIA_QUERY_RUNNER === 'true') return undefined;
  const driver = dataSource.driver as unknown as DriverInternals;
  return CHANNELS.get(String(dataSource.options.type))?.(driver);
}

/** pg's pool (`driver.master`), without replication (reads on replicas go through TypeORM). */
function pgChannel(driver: DriverInternals): DriverChannel | undefined {
  const pool = driver.master;
  if (!pool || typeof pool.query !== 'function' || driver.slaves?.length) return undefined;
  const pgResult = (result: { rows: unknown[]; rowCount: number | null }): StatementResult => ({
    records: result.rows,
    affected: result.rowCount ?? 0,
  });
  const names = new PgStatementNames();
  return {
    run: (sql, params, prepared) => names.run(pool, sql, params, prepared).then(pgResult),
    checkout: async () => {
      const client = await pool.connect();
      // Checked out, a pg client has no listener for a connection that drops (pg-pool's
      // query() adds one the same way): the statement running fails, the client must not throw.
      const dropped = () => undefined;
      client.on('error', dropped);
      return {
        connection: client,
        run: (sql, params, prepared) => names.run(client, sql, params, prepared).then(pgResult),
        release: () => {
          client.removeListener('error', dropped);
          client.release();
        },
        destroy: () => {
          destroyDriverConnection(client);
          // pg-pool drops a client released with an error instead of reusing it.
          client.release(new Error('connection destroyed'));
        },
      };
    },
  };
}

/** mysql2's pool (`driver.pool`), without a pool cluster (replication). */
function mysqlChannel(driver: DriverInternals): DriverChannel | undefined {
  const pool = driver.pool;
  if (!pool || typeof pool.query !== 'function' || driver.poolCluster) return undefined;
  const runOn =
    (target: MysqlQueryable) =>
    (sql: string, params: readonly unknown[]): Promise<StatementResult> =>
      new Promise((resolve, reject) =>
        target.query(sql, [...params], (error, result) => {
          if (error) return reject(error);
          if (Array.isArray(result)) return resolve({ records: result });
          resolve({ affected: (result as { affectedRows?: number })?.affectedRows ?? 0 });
        }),
      );
  return {
    run: runOn(pool),
    checkout: () =>
      new Promise((resolve, reject) =>
        pool.getConnection((error, connection) => {
          if (error) return reject(error);
          // A connection that drops while checked out must not throw (see pg above).
          const dropped = () => undefined;
          connection.on('error', dropped);
          resolve({
            connection,
            run: runOn(connection),
            release: () => {
              connection.removeListener('error', dropped);
              connection.release();
            },
            // A destroyed PoolConnection leaves the pool; its release() is then a no-op.
            destroy: () => destroyDriverConnection(connection),
          });
        }),
      ),
  };
}

/** better-sqlite3's one connection: statements compiled once and run synchronously. */
function sqliteChannel(driver: DriverInternals): DriverChannel | undefined {
  const connection = driver.databaseConnection;
  if (typeof connection?.prepare !== 'function') return undefined;
  const statements = new Map<string, SqliteStatement>();
  const runSync = (sql: string, params: readonly unknown[]): StatementResult => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = connection.prepare(sql);
      if (statements.size > 500) statements.clear();
      statements.set(sql, statement);
    }
    if (statement.reader) return { records: statement.all(...params) };
    return { affected: statement.run(...params).changes };
  };
  const rowReader = (sql: string): SyncRowReader => {
    // Its own statement, in raw mode (arrays, no object per row), read with get(): one step.
    const statement = connection.prepare(sql).raw(true);
    if (!statement.reader) throw new TypeError('rowReader needs a statement that returns rows');
    return {
      columns: statement.columns().map((c) => c.name),
      row: (params) => (statement.get(...params) as unknown[] | undefined) ?? null,
    };
  };
  return { synchronous: true, runSync, rowReader, run: async (sql, params) => runSync(sql, params) };
}

/** The direct channel of each TypeORM driver type it knows, by `DataSourceOptions.type`. */
const CHANNELS = new Map<string, (driver: DriverInternals) => DriverChannel | undefined>([
  ['postgres', pgChannel],
  ['mysql', mysqlChannel],
  ['mariadb', mysqlChannel],
  ['better-sqlite3', sqliteChannel],
]);

/** One direct channel per DataSource (it owns a prepared-statement cache on SQLite). */
const channels = new WeakMap<DataSource, DriverChannel | null>();

/** The DataSource's direct channel (see `directChannel`), made once and shared by its clients. */
export function sharedChannel(dataSource: DataSource): DriverChannel | undefined {
  if (!channels.has(dataSource)) channels.set(dataSource, directChannel(dataSource) ?? null);
  return channels.get(dataSource) ?? undefined;
}
