import type { DataSource } from 'typeorm';

/** What a statement returned: rows for reads, the changed-row count for writes. */
export interface StatementResult {
  records?: unknown[];
  affected?: number;
}

/** Runs one statement outside any transaction. */
export interface DriverChannel {
  run(sql: string, params: readonly unknown[]): Promise<StatementResult>;
  /** SQLite: the statement runs synchronously, so callers can skip an await when nothing is queued. */
  readonly synchronous?: boolean;
  runSync?(sql: string, params: readonly unknown[]): StatementResult;
}

interface SqliteStatement {
  reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
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
  const type = String(dataSource.options.type);
  if (type === 'postgres' && typeof driver.master?.query === 'function' && !driver.slaves?.length) {
    const pool = driver.master;
    return {
      run: (sql, params) =>
        pool.query(sql, params).then((result: { rows: unknown[]; rowCount: number | null }) => ({
          records: result.rows,
          affected: result.rowCount ?? 0,
        })),
    };
  }
  if (
    (type === 'mysql' || type === 'mariadb') &&
    typeof driver.pool?.query === 'function' &&
    !driver.poolCluster
  ) {
    const pool = driver.pool;
    return {
      run: (sql, params) =>
        new Promise((resolve, reject) =>
          pool.query(sql, params, (error: unknown, result: unknown) => {
            if (error) return reject(error);
            if (Array.isArray(result)) return resolve({ records: result });
            resolve({ affected: (result as { affectedRows?: number })?.affectedRows ?? 0 });
          }),
        ),
    };
  }
  if (type === 'better-sqlite3' && typeof driver.databaseConnection?.prepare === 'function') {
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
    return { synchronous: true, runSync, run: async (sql, params) => runSync(sql, params) };
  }
  return undefined;
}
