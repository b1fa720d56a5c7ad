/** The baseline of the benchmarks: the database driver used by hand, no Holdfast, no TypeORM. */
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import { Pool } from 'pg';
import { testDataSourceOptions, type TestDatabase } from '@holdfast/testing';

export interface RawDriver {
  /** Runs one statement; rows for a read. */
  run(sql: string, params: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

/** A pg Pool, a mysql2 pool or a better-sqlite3 connection (WAL, cached statements) of `poolSize`. */
export function rawDriver(db: TestDatabase, sqliteFile: string, poolSize: number): RawDriver {
  switch (db) {
    case 'postgres': {
      const pool = new Pool({
        connectionString: (testDataSourceOptions('postgres') as { url: string }).url,
        max: poolSize,
      });
      return { run: (sql, params) => pool.query(sql, params).then((r) => r.rows), close: () => pool.end() };
    }
    case 'mariadb': {
      const pool = mysql.createPool({
        uri: (testDataSourceOptions('mariadb') as { url: string }).url,
        connectionLimit: poolSize,
        timezone: 'Z',
      });
      return {
        run: (sql, params) => pool.query(sql, params).then(([rows]) => rows),
        close: () => pool.end(),
      };
    }
    case 'sqlite': {
      const conn = new Database(sqliteFile, { timeout: 10_000 });
      conn.pragma('journal_mode = WAL');
      const cache = new Map<string, Database.Statement>();
      const statement = (sql: string) => cache.get(sql) ?? cache.set(sql, conn.prepare(sql)).get(sql)!;
      return {
        run: async (sql, params) => {
          const s = statement(sql);
          return s.reader ? s.all(...params) : s.run(...params);
        },
        close: async () => {
          conn.close();
        },
      };
    }
  }
}
