/**
 * npm run bench -- failover-store [--db sqlite,postgres,mariadb] [--seconds 2] [--rounds 5]
 *
 * Upsert and point-read throughput through SqlFailoverStore against the raw driver (pg Pool,
 * mysql2 pool, better-sqlite3) sending the same statements with the same parameters on the
 * same table shape, at concurrency 10, alternating rounds; the ratio is holdfast / raw.
 *
 * Two end-to-end rows go through a decorated method of a Nest app (FailoverModule on the same
 * DataSource, `async: false`):
 *  - recovery: the upstream throws, the value comes from the store (stale), against the raw
 *    driver's point read of the same row (AS_OF, EXPIRE_ON, PAYLOAD, PAYLOAD_CLASS) and JSON.parse;
 *  - success: the upstream returns, the value is stored before the call returns, against the
 *    raw driver's upsert of the same row.
 * The upstream's own cost is kept out: it returns a ready value or throws a ready error.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { sqlClientFor } from '@holdfast/core';
import { createTestDataSource, tempSqliteFile, uniqueTablePrefix } from '@holdfast/core/testing';
import {
  Failover,
  FailoverModule,
  FailoverStoreQueryResolver,
  SqlFailoverStore,
  failoverKey,
} from '@holdfast/failover';
import { benchDatabases, compare, numberArg, opsPerSecond, printTable } from './support/bench-kit';
import { rawDriver } from './support/raw-driver';

const CONCURRENCY = 10;
const KEYS = 1_000;

const payload = (i: number) => ({
  code: `C${i}`,
  name: `Country number ${i}`,
  population: i * 1000,
  tags: ['a', 'b'],
});
const ids = Array.from({ length: KEYS }, (_, i) => String(i));
const payloads = ids.map((_, i) => payload(i));
const upstreamDown = new Error('upstream down');

@Injectable()
class Reference {
  @Failover({ name: 'bench-e2e', expiry: '1h' })
  async recovered(_id: string): Promise<ReturnType<typeof payload>> {
    throw upstreamDown;
  }

  /** The same upstream, undecorated. */
  async failing(_id: string): Promise<ReturnType<typeof payload>> {
    throw upstreamDown;
  }

  @Failover({ name: 'bench-e2e-ok', expiry: '1h' })
  async stored(id: string): Promise<ReturnType<typeof payload>> {
    return payloads[Number(id)];
  }
}

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
    // What one would write by hand: the row, no database clock.
    const rawFindSql = queries.find({ ...ctx, clock: false });
    const d = sql.dialect;
    const keys = Array.from({ length: KEYS }, (_, i) => failoverKey('bench', String(i)));

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
      const [row] = (await raw.run(rawFindSql, ['bench', keys[i % KEYS]])) as Array<{
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

    // End to end, through @Failover on a Nest app sharing the DataSource.
    const app = await (
      await Test.createTestingModule({
        imports: [
          FailoverModule.forRoot({
            store: { type: 'sql', dataSource, tablePrefix: prefix },
            async: false,
            cleanup: { enabled: false },
          }),
        ],
        providers: [Reference],
      }).compile()
    )
      .createNestApplication({ logger: false })
      .init();
    const reference = app.get(Reference);
    const e2eKeys = ids.map((id) => failoverKey('bench-e2e', id));
    const okKeys = ids.map((id) => failoverKey('bench-e2e-ok', id));
    for (let i = 0; i < KEYS; i += CONCURRENCY)
      await Promise.all(
        Array.from({ length: CONCURRENCY }, (_, j) => {
          const asOf = new Date();
          return store.store({
            name: 'bench-e2e',
            key: e2eKeys[i + j],
            asOf,
            expireOn: new Date(asOf.getTime() + 3_600_000),
            payload: payloads[i + j],
          });
        }),
      );
    const rawRecover = async (i: number) => {
      const [row] = (await raw.run(rawFindSql, ['bench-e2e', e2eKeys[i % KEYS]])) as Array<{
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
    const failoverRecover = (i: number) => reference.recovered(ids[i % KEYS]);
    // What a user would write instead of @Failover: the same failing upstream, then the raw read.
    const handWritten = async (i: number) => {
      try {
        return await reference.failing(ids[i % KEYS]);
      } catch {
        return rawRecover(i);
      }
    };
    const rawStore = (i: number) => {
      const asOf = new Date();
      return raw.run(upsertSql, [
        'bench-e2e-ok',
        okKeys[i % KEYS],
        d.timestampParam(asOf),
        d.timestampParam(new Date(asOf.getTime() + 3_600_000)),
        JSON.stringify(payloads[i % KEYS]),
        'Object',
      ]);
    };
    const failoverStore = (i: number) => reference.stored(ids[i % KEYS]);
    const rec = await compare(
      () => opsPerSecond(rawRecover, CONCURRENCY, ms),
      () => opsPerSecond(failoverRecover, CONCURRENCY, ms),
      rounds,
    );
    const hand = await compare(
      () => opsPerSecond(handWritten, CONCURRENCY, ms),
      () => opsPerSecond(failoverRecover, CONCURRENCY, ms),
      rounds,
    );
    const suc = await compare(
      () => opsPerSecond(rawStore, CONCURRENCY, ms),
      () => opsPerSecond(failoverStore, CONCURRENCY, ms),
      rounds,
    );
    rows.push([
      db,
      '@Failover, upstream fails (recovery) vs raw read + JSON.parse',
      rec.baseline,
      rec.candidate,
      rec.ratio,
      Math.min(...rec.ratios),
      '≥ 0.90',
    ]);
    rows.push([
      db,
      '  same, vs hand-written try { upstream } catch { raw read }',
      hand.baseline,
      hand.candidate,
      hand.ratio,
      Math.min(...hand.ratios),
      '(reference)',
    ]);
    rows.push([
      db,
      '@Failover, upstream succeeds (sync store) vs raw upsert',
      suc.baseline,
      suc.candidate,
      suc.ratio,
      Math.min(...suc.ratios),
      '≥ 0.90',
    ]);
    await app.close();

    await raw.close();
    await sql.execute(`DROP TABLE ${store.tableName}`);
    await dataSource.destroy();
  }
  printTable(
    `failover-store: ops/s at concurrency ${CONCURRENCY}, ${rounds} alternating rounds of ${seconds}s, medians`,
    ['database', 'operation', 'raw driver ops/s', 'Holdfast ops/s', 'ratio', 'worst round', 'goal'],
    rows,
  );
}
