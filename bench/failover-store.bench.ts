/**
 * npm run bench -- failover-store [--db sqlite,postgres,mariadb] [--seconds 2] [--rounds 5]
 *
 * Upsert and point-read throughput through SqlFailoverStore against the raw driver (pg Pool,
 * mysql2 pool, better-sqlite3) sending the same statements with the same parameters on the
 * same table shape, at concurrency 10, alternating rounds; the ratio is holdfast / raw.
 */
import { sqlClientFor } from '@holdfast/core';
import { createTestDataSource, tempSqliteFile, uniqueTablePrefix } from '@holdfast/core/testing';
import { FailoverStoreQueryResolver, SqlFailoverStore, failoverKey } from '@holdfast/failover';
import { benchDatabases, compare, numberArg, opsPerSecond, printTable } from './support/bench-kit';
import { rawDriver } from './support/raw-driver';

const CONCURRENCY = 10;
const KEYS = 1_000;

export async function main(args: string[]): Promise<void> {
  const seconds = numberArg(args, '--seconds', 2);
  const rounds = numberArg(args, '--rounds', 5);
  const rows: (string | number)[][] = [];
  for (const db of benchDatabases(args)) {
    const sqliteFile = tempSqliteFile('bench');
    const dataSource = await createTestDataSource(db, { sqliteFile, poolSize: CONCURRENCY });
    const sql = sqlClientFor(dataSource);
    const prefix = uniqueTablePrefix('bench');
    const store = await new SqlFailoverStore({ sql, tablePrefix: prefix, schema: 'create' }).init();
    const raw = rawDriver(db, sqliteFile, CONCURRENCY);
    const queries = new FailoverStoreQueryResolver();
    const ctx = { table: store.tableName, dialect: sql.dialect };
    const upsertSql = queries.upsert(ctx);
    const findSql = queries.find(ctx);
    const d = sql.dialect;
    const keys = Array.from({ length: KEYS }, (_, i) => failoverKey('bench', String(i)));
    const payload = (i: number) => ({
      code: `C${i}`,
      name: `Country number ${i}`,
      population: i * 1000,
      tags: ['a', 'b'],
    });

    const storeUpsert = (i: number) => {
      const asOf = new Date();
      return store.store({
        name: 'bench',
        key: keys[i % KEYS],
        asOf,
        expireOn: new Date(asOf.getTime() + 3_600_000),
        payload: payload(i),
      });
    };
    const rawUpsert = (i: number) => {
      const asOf = new Date();
      return raw.run(upsertSql, [
        'bench',
        keys[i % KEYS],
        d.timestampParam(asOf),
        d.timestampParam(new Date(asOf.getTime() + 3_600_000)),
        JSON.stringify(payload(i)),
        'Object',
      ]);
    };
    const storeFind = (i: number) => store.find('bench', keys[i % KEYS]);
    const rawFind = async (i: number) => {
      const [row] = (await raw.run(findSql, ['bench', keys[i % KEYS]])) as Array<{
        payload: string;
        as_of: unknown;
        expire_on: unknown;
      }>;
      return {
        payload: JSON.parse(row.payload),
        asOf: d.readTimestamp(row.as_of),
        expireOn: d.readTimestamp(row.expire_on),
      };
    };

    // warm-up: fill every key once through each path
    for (let i = 0; i < KEYS; i += CONCURRENCY)
      await Promise.all(Array.from({ length: CONCURRENCY }, (_, j) => storeUpsert(i + j)));
    const ms = seconds * 1000;
    const up = await compare(
      () => opsPerSecond(rawUpsert, CONCURRENCY, ms),
      () => opsPerSecond(storeUpsert, CONCURRENCY, ms),
      rounds,
    );
    const rd = await compare(
      () => opsPerSecond(rawFind, CONCURRENCY, ms),
      () => opsPerSecond(storeFind, CONCURRENCY, ms),
      rounds,
    );
    rows.push([db, 'upsert', up.baseline, up.candidate, up.ratio, Math.min(...up.ratios), '≥ 0.90']);
    rows.push([db, 'point read', rd.baseline, rd.candidate, rd.ratio, Math.min(...rd.ratios), '≥ 0.90']);

    await raw.close();
    await sql.execute(`DROP TABLE ${store.tableName}`);
    await dataSource.destroy();
  }
  printTable(
    `failover-store: ops/s at concurrency ${CONCURRENCY}, ${rounds} alternating rounds of ${seconds}s, medians`,
    ['database', 'operation', 'raw driver ops/s', 'SqlFailoverStore ops/s', 'ratio', 'worst round', 'goal'],
    rows,
  );
}
