/** The inbox bench's databases, names and clocks, shared by its runs and its worker processes. */
import 'reflect-metadata';
import { DataSource, type DataSourceOptions } from 'typeorm';

export type Db = 'postgres' | 'mariadb' | 'sqlite';
export const PG_URL = process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MARIADB_URL = process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const PREFIX = 'hf_bench_inbox_';
export const BOSS_SCHEMA = 'pgboss_bench';
export const GW_SCHEMA = 'graphile_worker_bench';
export const QUEUE = 'bench';
export const TYPE = { namespace: 'bench', name: 'item' };
export const POOL = 10;

export function dataSourceOptions(db: Db, sqliteFile?: string): DataSourceOptions {
  if (db === 'postgres') return { type: 'postgres', url: PG_URL, poolSize: POOL, extra: { max: POOL } };
  if (db === 'mariadb')
    return {
      type: 'mariadb',
      url: MARIADB_URL,
      timezone: 'Z',
      poolSize: POOL,
      extra: { connectionLimit: POOL },
    } as DataSourceOptions;
  return {
    type: 'better-sqlite3',
    database: sqliteFile!,
    enableWAL: true,
    timeout: 5_000,
  } as DataSourceOptions;
}

export async function dataSource(db: Db, sqliteFile?: string): Promise<DataSource> {
  return new DataSource(dataSourceOptions(db, sqliteFile)).initialize();
}

export const GROUPS = Number(process.env.HOLDFAST_INBOX_BENCH_GROUPS ?? 0);
/** Holdfast's batchSize in a worker process (the main process passes it on, see `--batches`). */
export const BATCH = Number(process.env.HOLDFAST_INBOX_BENCH_BATCH ?? 100);
export function idHash(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) >>> 0;
  return h;
}

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export const wallNow = () => performance.timeOrigin + performance.now();
