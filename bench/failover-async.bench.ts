/**
 * npm run bench -- failover-async [--db sqlite,postgres,mariadb] [--writes 20000] [--seconds 2] [--rounds 5]
 *
 * 1. Burst: 50 concurrent callers, 500 distinct keys. Rows persisted per second by the batched
 *    write-behind (a @Failover method, async SQL store, timed until the queue is drained) against
 *    the raw driver sending one upsert per write (same statement text, pool of 10).
 * 2. Hot key: one key called 1,000 times a second for 5 s: store statements per second.
 * 3. Call rate: a @Failover method whose upstream takes 1 ms, with the async SQL store, against the
 *    same method undecorated, 10 concurrent callers, alternating rounds.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { sleep, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, tempSqliteFile, uniqueTablePrefix } from '@holdfast/testing';
import {
  Failover,
  FailoverExecutor,
  FailoverMetrics,
  FailoverModule,
  FailoverStoreQueryResolver,
} from '@holdfast/failover';
import { failoverKey } from '@holdfast/failover/internal';
import { benchDatabases, compare, median, numberArg, opsPerSecond, printTable } from './support/bench-kit';
import { rawDriver } from './support/raw-driver';

const BURST_CONCURRENCY = 50;
const BURST_KEYS = 500;

/** The quote method is keyed on its first argument only (a burst rewrites the same 500 keys). */
class FirstArgKey {
  key(args: readonly unknown[]) {
    return String(args[0]);
  }
}

@Injectable()
class Quotes {
  @Failover({ name: 'quote', expiry: '1h', keyGenerator: FirstArgKey })
  async quote(key: string, n: number): Promise<{ key: string; n: number; at: number }> {
    return { key, n, at: Date.now() };
  }

  @Failover({ name: 'slow-quote', expiry: '1h' })
  async slowQuote(key: string): Promise<{ key: string }> {
    await sleep(1);
    return { key };
  }

  async slowQuoteUndecorated(key: string): Promise<{ key: string }> {
    await sleep(1);
    return { key };
  }
}

async function pool<T>(count: number, concurrency: number, work: (i: number) => Promise<T>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

export async function main(args: string[]): Promise<void> {
  const writes = numberArg(args, '--writes', 20_000);
  const seconds = numberArg(args, '--seconds', 2);
  const rounds = numberArg(args, '--rounds', 5);
  const burstRows: (string | number)[][] = [];
  const hotRows: (string | number)[][] = [];
  const rateRows: (string | number)[][] = [];

  for (const db of benchDatabases(args)) {
    const sqliteFile = tempSqliteFile('bench-async');
    const dataSource = await createTestDataSource(db, { sqliteFile, poolSize: 10 });
    const sql = sqlClientFor(dataSource);
    const prefix = uniqueTablePrefix('async');
    const moduleRef = await Test.createTestingModule({
      imports: [
        FailoverModule.forRoot({
          store: { type: 'sql', dataSource, tablePrefix: prefix, schema: 'create' },
          cleanup: { enabled: false },
        }),
      ],
      providers: [Quotes],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: ['error'] }).init();
    const quotes = app.get(Quotes);
    const metrics = app.get(FailoverMetrics);
    const executor = app.get(FailoverExecutor);
    const table = `${prefix}FAILOVER_STORE`;
    const anyRow = { name: '', key: '', asOf: null, expireOn: null, payload: null, payloadClass: '' };
    const upsert = new FailoverStoreQueryResolver().upsert({ table, dialect: sql.dialect }, [anyRow]).sql;
    const raw = rawDriver(db, sqliteFile, 10);
    const d = sql.dialect;

    // 1. burst
    const holdfastBurst: number[] = [];
    const rawBurst: number[] = [];
    let statements = 0;
    for (let r = 0; r < rounds; r++) {
      const before = metrics.writeCalls;
      let t = performance.now();
      await pool(writes, BURST_CONCURRENCY, (i) => quotes.quote(`K${i % BURST_KEYS}`, i));
      await executor.flush();
      holdfastBurst.push(writes / ((performance.now() - t) / 1000));
      statements = metrics.writeCalls - before;

      t = performance.now();
      await pool(writes, BURST_CONCURRENCY, (i) => {
        const asOf = new Date();
        return raw.run(upsert, [
          'raw',
          failoverKey('raw', String(i % BURST_KEYS)),
          d.timestampParam(asOf),
          d.timestampParam(new Date(asOf.getTime() + 3_600_000)),
          JSON.stringify({ key: `K${i % BURST_KEYS}`, n: i, at: Date.now() }),
          'Object',
        ]);
      });
      rawBurst.push(writes / ((performance.now() - t) / 1000));
    }
    const ratios = holdfastBurst.map((h, i) => h / rawBurst[i]);
    burstRows.push([
      db,
      `${BURST_KEYS} keys`,
      median(rawBurst),
      median(holdfastBurst),
      statements,
      median(ratios),
      Math.min(...ratios),
      '≥ 3.00',
    ]);

    // 1b. the same burst with a new key for every write: batching alone, no coalescing
    const distinctH: number[] = [];
    const distinctR: number[] = [];
    let distinctStatements = 0;
    for (let r = 0; r < rounds; r++) {
      const before = metrics.writeCalls;
      let t = performance.now();
      await pool(writes, BURST_CONCURRENCY, (i) => quotes.quote(`R${r}-${i}`, i));
      await executor.flush();
      distinctH.push(writes / ((performance.now() - t) / 1000));
      distinctStatements = metrics.writeCalls - before;
      t = performance.now();
      await pool(writes, BURST_CONCURRENCY, (i) => {
        const asOf = new Date();
        return raw.run(upsert, [
          'raw',
          failoverKey('raw', `R${r}-${i}`),
          d.timestampParam(asOf),
          d.timestampParam(new Date(asOf.getTime() + 3_600_000)),
          JSON.stringify({ key: `R${r}-${i}`, n: i, at: Date.now() }),
          'Object',
        ]);
      });
      distinctR.push(writes / ((performance.now() - t) / 1000));
    }
    const distinctRatios = distinctH.map((h, i) => h / distinctR[i]);
    burstRows.push([
      db,
      'every write a new key',
      median(distinctR),
      median(distinctH),
      distinctStatements,
      median(distinctRatios),
      Math.min(...distinctRatios),
      '(no goal)',
    ]);

    // 2. hot key: 1,000 calls a second on one key for 5 s
    await executor.flush();
    const callsBefore = metrics.writeCalls;
    const started = performance.now();
    for (let tick = 0; tick < 500; tick++) {
      const due = started + tick * 10;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      await Promise.all(Array.from({ length: 10 }, (_, j) => quotes.quote('HOT', tick * 10 + j)));
    }
    const elapsed = (performance.now() - started) / 1000;
    const inWindow = metrics.writeCalls - callsBefore;
    await executor.flush();
    const withDrain = metrics.writeCalls - callsBefore;
    hotRows.push([db, Math.round(5_000 / elapsed), inWindow / elapsed, `${withDrain - inWindow}`, '≤ 10']);

    // 3. call rate with a 1 ms upstream
    const ms = seconds * 1000;
    const rate = await compare(
      () => opsPerSecond((i) => quotes.slowQuoteUndecorated(`S${i % 100}`), 10, ms),
      () => opsPerSecond((i) => quotes.slowQuote(`S${i % 100}`), 10, ms),
      rounds,
    );
    rateRows.push([db, rate.baseline, rate.candidate, rate.ratio, Math.min(...rate.ratios), '≥ 0.95']);

    await app.close();
    await raw.close();
    await sql.execute(statement(`DROP TABLE ${table}`));
    await dataSource.destroy();
  }

  printTable(
    `failover-async 1. burst: ${writes} writes, ${BURST_CONCURRENCY} callers, ${BURST_KEYS} keys; medians of ${rounds} alternating rounds`,
    [
      'database',
      'keys',
      'raw upsert per write (writes/s)',
      'write-behind (writes/s, until drained)',
      'statements sent (last round)',
      'ratio',
      'worst round',
      'goal',
    ],
    burstRows,
  );
  printTable(
    'failover-async 2. hot key: 1,000 calls/s on one key for 5 s',
    ['database', 'calls/s', 'store statements/s during the 5 s', 'statements to drain at the end', 'goal'],
    hotRows,
  );
  printTable(
    `failover-async 3. call rate, 1 ms upstream, 10 callers, ${rounds} alternating rounds of ${seconds}s`,
    ['database', 'undecorated calls/s', '@Failover + async SQL calls/s', 'ratio', 'worst round', 'goal'],
    rateRows,
  );
}
