/**
 * npm run bench -- scale-failover [--db sqlite,postgres,mariadb] [--sizes 10000,100000,1000000]
 *                                 [--seconds 2] [--batch <rows per DELETE, default the dialect's>]
 *
 * How the failover store's costs grow with its table: at each size, the upsert and point-read
 * rates through SqlFailoverStore (concurrency 10, keys spread over the whole table), then the
 * cleanup of the expired rows in batches, with a caller re-storing expiring keys throughout:
 * its worst wait is what a @Failover call would wait behind the cleanup (goal: one batch,
 * under 100 ms).
 *
 * `scaleFailover()` returns the rows, for a combined `npm run bench -- scale`.
 */
import { performance } from 'node:perf_hooks';
import { sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  tempSqliteFile,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import { type FailoverEntry } from '@holdfast/failover';
import { SqlFailoverStore, cleanupBatchRows, failoverKey } from '@holdfast/failover/internal';
import { benchDatabases, numberArg, opsPerSecond, printTable } from './support/bench-kit';

const CONCURRENCY = 10;
const HOUR = 3_600_000;

export interface FailoverScaleRow {
  database: TestDatabase;
  rows: number;
  upsertsPerSecond: number;
  readsPerSecond: number;
  /** Expired rows the cleanup removed, how long it took, and how many statements. */
  cleanedRows: number;
  cleanupMs: number;
  cleanupStatements: number;
  /** Rows per cleanup DELETE (the dialect's default unless --batch). */
  batchSize: number;
  /** Concurrent re-stores of expiring keys during the cleanup: how many, and the worst wait. */
  restores: number;
  failedRestores: number;
  restoreMaxMs: number;
}

const payload = (i: number) => ({
  code: `C${i}`,
  name: `Country number ${i}`,
  population: i,
  tags: ['a', 'b'],
});

export async function scaleFailover(
  options: { databases?: TestDatabase[]; sizes?: number[]; seconds?: number; batchSize?: number } = {},
): Promise<FailoverScaleRow[]> {
  const databases = options.databases ?? ['sqlite', 'postgres', 'mariadb'];
  const sizes = options.sizes ?? [10_000, 100_000, 1_000_000];
  const ms = (options.seconds ?? 2) * 1000;
  // Default: the store's own (cleanupBatchRows: 1,000 on MariaDB, 5,000 elsewhere), as the module uses.
  const batchSize = options.batchSize;
  const results: FailoverScaleRow[] = [];
  for (const database of databases) {
    for (const size of sizes) {
      const sqliteFile = tempSqliteFile('scale');
      const dataSource = await createTestDataSource(database, { sqliteFile, poolSize: CONCURRENCY + 2 });
      const sql = sqlClientFor(dataSource);
      const store = await new SqlFailoverStore({
        sql,
        tablePrefix: uniqueTablePrefix('scale'),
        schema: 'create',
      }).init();
      try {
        const keys = Array.from({ length: size }, (_, i) => failoverKey('scale', String(i)));
        // Every row expired, later keys later: the cleanup reaches the last keys last.
        const expiredAt = (await store.now()).getTime() - HOUR;
        const expiredEntry = (i: number): FailoverEntry => ({
          name: 'scale',
          key: keys[i],
          asOf: new Date(expiredAt - HOUR),
          expireOn: new Date(expiredAt + i),
          payload: payload(i),
        });
        for (let start = 0; start < size; start += 5_000) {
          const items = [];
          for (let i = start; i < Math.min(size, start + 5_000); i++) items.push({ entry: expiredEntry(i) });
          await store.storeMany(items);
        }
        // Spread over the table, away from the keys the re-stores below use.
        const spread = (i: number) => (i * 7_919) % Math.max(1, size - 1_000);
        const fresh = (i: number): FailoverEntry => {
          const asOf = new Date(store.clock());
          return {
            name: 'scale',
            key: keys[spread(i)],
            asOf,
            expireOn: new Date(asOf.getTime() + HOUR),
            payload: payload(i),
          };
        };
        const upsertsPerSecond = await opsPerSecond((i) => store.store(fresh(i)), CONCURRENCY, ms);
        const readsPerSecond = await opsPerSecond(
          (i) => store.find('scale', keys[spread(i)]),
          CONCURRENCY,
          ms,
        );
        // Back to all expired, then clean while re-storing the last keys to expire.
        for (let start = 0; start < size; start += 5_000) {
          const items = [];
          for (let i = start; i < Math.min(size, start + 5_000); i++) items.push({ entry: expiredEntry(i) });
          await store.storeMany(items);
        }
        let statements = 0;
        let cleaning = true;
        const waits: number[] = [];
        let failedRestores = 0;
        const restorer = (async () => {
          let i = 0;
          while (cleaning) {
            const k = size - 1 - (i++ % Math.min(1_000, size));
            const asOf = new Date(store.clock());
            const started = performance.now();
            try {
              await store.store({
                name: 'scale',
                key: keys[k],
                asOf,
                expireOn: new Date(asOf.getTime() + HOUR),
                payload: payload(k),
              });
            } catch {
              failedRestores++; // e.g. a lock wait timeout behind a long DELETE
            }
            waits.push(performance.now() - started);
            // Calls arrive from I/O: let the event loop turn (SQLite statements resolve at once).
            await new Promise<void>((resolve) => setImmediate(resolve));
          }
        })();
        const started = performance.now();
        const cleanedRows = await store.cleanByExpiry(await store.now(), {
          batchSize,
          onBatch: () => statements++,
        });
        const cleanupMs = performance.now() - started;
        cleaning = false;
        await restorer;
        results.push({
          database,
          rows: size,
          upsertsPerSecond,
          readsPerSecond,
          cleanedRows,
          cleanupMs,
          cleanupStatements: statements,
          batchSize: batchSize ?? cleanupBatchRows(sql.dialect),
          restores: waits.length,
          failedRestores,
          restoreMaxMs: waits.reduce((max, ms) => Math.max(max, ms), 0), // no spread: 100,000+ waits
        });
      } finally {
        await sql.execute(statement(`DROP TABLE ${store.tableName}`)).catch(() => undefined);
        await dataSource.destroy();
      }
    }
  }
  return results;
}

export async function main(args: string[]): Promise<void> {
  const sizesArg = args.indexOf('--sizes');
  const sizes =
    sizesArg >= 0 ? args[sizesArg + 1].split(',').map((s) => Number(s.replace(/_/g, ''))) : undefined;
  const rows = await scaleFailover({
    databases: benchDatabases(args),
    sizes,
    seconds: numberArg(args, '--seconds', 2),
    batchSize: args.includes('--batch') ? numberArg(args, '--batch', 5_000) : undefined,
  });
  printScaleFailover(rows);
}

export function printScaleFailover(rows: FailoverScaleRow[]): void {
  const first = new Map<string, FailoverScaleRow>();
  for (const r of rows) if (!first.has(r.database)) first.set(r.database, r);
  printTable(
    'scale-failover: SqlFailoverStore at growing table sizes (concurrency 10); rates relative to the smallest size',
    [
      'database',
      'rows',
      'upserts/s',
      'vs smallest',
      'reads/s',
      'vs smallest',
      'cleanup ms',
      'rows cleaned',
      'statements',
      'rows/statement',
      're-stores during cleanup',
      'failed',
      'worst re-store wait ms',
    ],
    rows.map((r) => {
      const base = first.get(r.database)!;
      return [
        r.database,
        r.rows.toLocaleString('en-US'),
        r.upsertsPerSecond,
        r.upsertsPerSecond / base.upsertsPerSecond,
        r.readsPerSecond,
        r.readsPerSecond / base.readsPerSecond,
        r.cleanupMs,
        r.cleanedRows,
        r.cleanupStatements,
        r.batchSize,
        r.restores,
        r.failedRestores,
        r.restoreMaxMs,
      ];
    }),
  );
}
