import type { DataSource } from 'typeorm';
import { destroyDriverConnection, type DriverConnection } from './connection-bound';
import { PgStatementNames } from './pg-statement-names';

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
  const driver = dataSource.driver as unknown as Record<string, any>;
  return CHANNELS.get(String(dataSource.options.type))?.(driver);
}

/** pg's pool (`driver.master`), without replication (reads on replicas go through TypeORM). */
function pgChannel(driver: Record<string, any>): DriverChannel | undefined {
  if (typeof driver.master?.query !== 'function' || driver.slaves?.length) return undefined;
  const pool = driver.master;
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
        connection: client as DriverConnection,
        run: (sql, params, prepared) => names.run(client, sql, params, prepared).then(pgResult),
        release: () => {
          client.removeListener('error', dropped);
          client.release();
        },
        destroy: () => {
          destroyDriverConnection(client as DriverConnection);
          // pg-pool drops a client released with an error instead of reusing it.
          client.release(new Error('connection destroyed'));
        },
      };
    },
  };
}

/** mysql2's pool (`driver.pool`), without a pool cluster (replication). */
function mysqlChannel(driver: Record<string, any>): DriverChannel | undefined {
  if (typeof driver.pool?.query !== 'function' || driver.poolCluster) return undefined;
  const pool = driver.pool;
  const runOn =
    (target: { query: (...args: unknown[]) => unknown }) =>
    (sql: string, params: readonly unknown[]): Promise<StatementResult> =>
      new Promise((resolve, reject) =>
        target.query(sql, params, (error: unknown, result: unknown) => {
          if (error) return reject(error);
          if (Array.isArray(result)) return resolve({ records: result });
          resolve({ affected: (result as { affectedRows?: number })?.affectedRows ?? 0 });
        }),
      );
  return {
    run: runOn(pool),
    checkout: () =>
      new Promise((resolve, reject) =>
        pool.getConnection((error: unknown, connection: any) => {
          if (error) return reject(error);
          // A connection that drops while checked out must not throw (see pg above).
          const dropped = () => undefined;
          connection.on('error', dropped);
          resolve({
            connection: connection as DriverConnection,
            run: runOn(connection),
            release: () => {
              connection.removeListener('error', dropped);
              connection.release();
            },
            // A destroyed PoolConnection leaves the pool; its release() is then a no-op.
            destroy: () => destroyDriverConnection(connection as DriverConnection),
          });
        }),
      ),
  };
}

/** better-sqlite3's one connection: statements compiled once and run synchronously. */
function sqliteChannel(driver: Record<string, any>): DriverChannel | undefined {
  if (typeof driver.databaseConnection?.prepare !== 'function') return undefined;
  const connection = driver.databaseConnection;
  const statements = new Map<string, SqliteStatement>();
  const runSync = (sql: string, params: readonly unknown[]): StatementResult => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = connection.prepare(sql) as SqliteStatement;
      if (statements.size > 500) statements.clear();
      statements.set(sql, statement);
    }
    if (statement.reader) return { records: statement.all(...params) };
    return { affected: statement.run(...params).changes };
  };
  const rowReader = (sql: string): SyncRowReader => {
    // Its own statement, in raw mode (arrays, no object per row), read with get(): one step.
    const statement = (connection.prepare(sql) as SqliteStatement).raw(true);
    if (!statement.reader) throw new TypeError('rowReader needs a statement that returns rows');
    return {
      columns: statement.columns().map((c) => c.name),
      row: (params) => (statement.get(...params) as unknown[] | undefined) ?? null,
    };
  };
  return { synchronous: true, runSync, rowReader, run: async (sql, params) => runSync(sql, params) };
}

/** The direct channel of each TypeORM driver type it knows, by `DataSourceOptions.type`. */
const CHANNELS = new Map<string, (driver: Record<string, any>) => DriverChannel | undefined>([
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
