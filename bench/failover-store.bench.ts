/**
 * npm run bench -- failover-store [--db sqlite,postgres,mariadb] [--seconds 2] [--rounds 5]
 *
 * Upsert and point-read throughput through SqlFailoverStore against the raw driver (pg Pool,
 * mysql2 pool, better-sqlite3) sending the same statements with the same parameters on the
 * same table shape, at concurrency 10; the ratio is holdfast / raw, formed per round, median.
 * Each round gives every operation `--seconds` in turns of 50 ms, going forward then backward
 * through the operations: a SQLite upsert waits on the disk's flush, whose latency drifts by a
 * tenth over seconds, and whole windows of seconds each caught a different moment of that drift.
 *
 * Two end-to-end rows go through a decorated method of a Nest app (FailoverModule on the same
 * DataSource, `async: false`):
 *  - recovery: the upstream throws, the value comes from the store (stale), against the raw
 *    driver's point read of the same row (AS_OF, EXPIRE_ON, PAYLOAD, PAYLOAD_CLASS) and JSON.parse;
 *  - success: the upstream returns, the value is stored before the call returns, against the
 *    raw driver's upsert of the same row.
 * The upstream's own cost is kept out: it returns a ready value or throws a ready error. A
 * failing upstream still costs its rejection and the catch (on SQLite, a tenth of a point
 * read), so a reference row also shows the recovery with that part, measured alone in the same
 * round, taken out of the decorated call, and the timing loop's own cost out of the raw read:
 * (t(raw) - t(loop)) / (t(recovery) - t(upstream alone)), t = 1 / ops.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, tempSqliteFile, uniqueTablePrefix } from '@holdfast/testing';
import { Failover, FailoverModule, FailoverStoreQueryResolver } from '@holdfast/failover';
import { SqlFailoverStore, failoverKey } from '@holdfast/failover/internal';
import { benchDatabases, interleavedRounds, median, numberArg, printTable } from './support/bench-kit';
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
type Op = (i: number) => Promise<unknown>;

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
  const roundCount = numberArg(args, '--rounds', 5);
  const rows: (string | number)[][] = [];
  const upstreamCost: string[] = [];
  for (const db of benchDatabases(args)) {
    const sqliteFile = tempSqliteFile('bench');
    const dataSource = await createTestDataSource(db, { sqliteFile, poolSize: CONCURRENCY });
    const sql = sqlClientFor(dataSource);
    const prefix = uniqueTablePrefix('bench');
    const store = await new SqlFailoverStore({ sql, tablePrefix: prefix, schema: 'create' }).init();
    const raw = rawDriver(db, sqliteFile, CONCURRENCY);
    const queries = new FailoverStoreQueryResolver();
    const ctx = { table: store.tableName, dialect: sql.dialect };
    const anyRow = { name: '', key: '', asOf: null, expireOn: null, payload: null, payloadClass: '' };
    const upsertSql = queries.upsert(ctx, [anyRow]).sql;
    // What one would write by hand: the row, no database clock.
    const rawFindSql = queries.find({ ...ctx, clock: false }, '', '').sql;
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
    const row = (label: string, baseline: number[], candidate: number[], ratios: number[], goal: string) =>
      rows.push([db, label, median(baseline), median(candidate), median(ratios), Math.min(...ratios), goal]);
    const pair = async (label: string, raw: Op, holdfast: Op) => {
      const m = await interleavedRounds({ raw, holdfast }, CONCURRENCY, ms, roundCount);
      row(
        label,
        m.raw,
        m.holdfast,
        m.raw.map((x, r) => m.holdfast[r] / x),
        '≥ 0.90',
      );
    };
    await pair('upsert', rawUpsert, storeUpsert);
    await pair('point read', rawFind, storeFind);

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
    const upstreamAlone = async (i: number) => {
      try {
        return await reference.failing(ids[i % KEYS]);
      } catch {
        return undefined;
      }
    };
    const nothing = async (_i: number) => undefined;
    // Every end-to-end figure of one round is taken in the same interleaved turns (the machine is shared).
    const e2e = await interleavedRounds(
      {
        raw: rawRecover,
        recovery: failoverRecover,
        handWritten,
        upstreamAlone,
        loopAlone: nothing,
        rawStore,
        success: failoverStore,
      },
      CONCURRENCY,
      ms,
      roundCount,
    );
    const perRound = (f: (r: number) => number) => e2e.raw.map((_, r) => f(r));
    const t = (ops: number) => 1 / ops;
    const rec = perRound((r) => e2e.recovery[r] / e2e.raw[r]);
    const hand = perRound((r) => e2e.recovery[r] / e2e.handWritten[r]);
    // The upstream's own failure (an async method rejecting, and the catch) is the user's cost,
    // not Holdfast's: per-op time of the read alone against Holdfast's part of a recovery.
    const kept = perRound(
      (r) => (t(e2e.raw[r]) - t(e2e.loopAlone[r])) / (t(e2e.recovery[r]) - t(e2e.upstreamAlone[r])),
    );
    const suc = perRound((r) => e2e.success[r] / e2e.rawStore[r]);
    row(
      '@Failover, upstream fails (recovery) vs raw read + JSON.parse',
      e2e.raw,
      e2e.recovery,
      rec,
      '≥ 1.00',
    );
    row(
      '  same, vs hand-written try { upstream } catch { raw read }',
      e2e.handWritten,
      e2e.recovery,
      hand,
      '(reference)',
    );
    row("  same, the upstream's own failure kept out of both", e2e.raw, e2e.recovery, kept, '(reference)');
    row('@Failover, upstream succeeds (sync store) vs raw upsert', e2e.rawStore, e2e.success, suc, '≥ 1.00');
    upstreamCost.push(
      `${db}: a failing upstream and its catch cost ${((t(median(e2e.upstreamAlone)) - t(median(e2e.loopAlone))) * 1e6).toFixed(2)} µs per call, ` +
        `a raw read ${((t(median(e2e.raw)) - t(median(e2e.loopAlone))) * 1e6).toFixed(2)} µs (the timing loop's own ` +
        `${(t(median(e2e.loopAlone)) * 1e6).toFixed(2)} µs left out of both)`,
    );
    await app.close();

    await raw.close();
    await sql.execute(statement(`DROP TABLE ${store.tableName}`));
    await dataSource.destroy();
  }
  printTable(
    `failover-store: ops/s at concurrency ${CONCURRENCY}, ${roundCount} rounds of ${seconds}s each in interleaved 50 ms turns, medians`,
    ['database', 'operation', 'raw driver ops/s', 'Holdfast ops/s', 'ratio', 'worst round', 'goal'],
    rows,
  );
  for (const line of upstreamCost) console.log(line);
}
