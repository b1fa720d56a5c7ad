/**
 * npm run bench -- failover-single-flight [--db sqlite,postgres,mariadb] [--seconds 10] [--callers 100] [--attempt-ms 100]
 *
 * An outage of `--seconds` (default 10 s) seen by `--callers` (default 100) concurrent callers of
 * one key, each calling again as soon as it has its answer. Every upstream attempt fails after
 * `--attempt-ms` (default 100 ms: an upstream that times out rather than refuses). Measured per
 * variant, one after the other on one SQL store (the value stored just before each outage):
 *   plain          the method undecorated (the baseline)
 *   failover       @Failover as before: stale-if-error, each caller calls the upstream
 *   single-flight  @Failover({ singleFlight: true }): callers of one key share one attempt
 *   fresh+sf       singleFlight with fresh: '5s', refreshAfter: '1s' (the stored value served
 *                  for 5 s without the upstream, one background refresh per key at a time)
 * Each caller yields to the event loop between calls (as requests arriving over a socket do).
 * It prints the upstream calls, the answers (stale values served, errors) and the upstream
 * calls as a ratio of the plain method's.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { sleep, sqlClientFor, statement } from '@holdfast/core/kit';
import { createTestDataSource, tempSqliteFile, uniqueTablePrefix } from '@holdfast/testing';
import { Failover, FailoverModule } from '@holdfast/failover';
import { benchDatabases, numberArg, printTable } from './support/bench-kit';

class UpstreamDown extends Error {}

@Injectable()
class RateUpstream {
  calls = 0;
  down = false;
  attemptMs = 100;

  async fetch(pair: string): Promise<{ pair: string; value: number }> {
    this.calls++;
    if (!this.down) return { pair, value: 1.1 };
    await sleep(this.attemptMs);
    throw new UpstreamDown('upstream timed out');
  }
}

@Injectable()
class Rates {
  constructor(readonly upstream: RateUpstream) {}

  plain(pair: string) {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate', expiry: '1h' })
  failover(pair: string) {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate-sf', expiry: '1h', singleFlight: true })
  singleFlight(pair: string) {
    return this.upstream.fetch(pair);
  }

  @Failover({ name: 'rate-fresh-sf', expiry: '1h', singleFlight: true, fresh: '5s', refreshAfter: '1s' })
  freshSingleFlight(pair: string) {
    return this.upstream.fetch(pair);
  }
}

type Variant = 'plain' | 'failover' | 'singleFlight' | 'freshSingleFlight';
const VARIANTS: Array<[string, Variant]> = [
  ['plain', 'plain'],
  ['failover', 'failover'],
  ['single-flight', 'singleFlight'],
  ['fresh+sf', 'freshSingleFlight'],
];

export async function main(args: string[]): Promise<void> {
  const seconds = numberArg(args, '--seconds', 10);
  const callers = numberArg(args, '--callers', 100);
  const attemptMs = numberArg(args, '--attempt-ms', 100);
  const rows: (string | number)[][] = [];

  for (const db of benchDatabases(args)) {
    const sqliteFile = tempSqliteFile('bench-single-flight');
    const dataSource = await createTestDataSource(db, { sqliteFile, poolSize: 10 });
    const sql = sqlClientFor(dataSource);
    const prefix = uniqueTablePrefix('sflight');
    const moduleRef = await Test.createTestingModule({
      imports: [
        FailoverModule.forRoot({
          store: { type: 'sql', dataSource, tablePrefix: prefix, schema: 'create' },
          cleanup: { enabled: false },
          async: false,
        }),
      ],
      providers: [RateUpstream, Rates],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: ['error'] }).init();
    const rates = app.get(Rates);
    const upstream = app.get(RateUpstream);
    upstream.attemptMs = attemptMs;

    let plainCalls = 0;
    for (const [label, variant] of VARIANTS) {
      upstream.down = false;
      await rates[variant]('EURUSD'); // the value stored before the outage
      upstream.down = true;
      upstream.calls = 0;
      let stale = 0;
      let errors = 0;
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < end) {
            try {
              await rates[variant]('EURUSD');
              stale++;
            } catch {
              errors++;
            }
            // The next request arrives through the event loop, as a server's do (a loop of
            // microtasks alone would starve the timers of the upstream's attempts).
            await new Promise((resolve) => setImmediate(resolve));
          }
        }),
      );
      const calls = upstream.calls;
      if (variant === 'plain') plainCalls = calls;
      rows.push([db, label, calls, stale, errors, `${((calls / plainCalls) * 100).toFixed(2)} %`]);
    }
    await app.close();
    await sql.execute(statement(`DROP TABLE ${prefix}FAILOVER_STORE`));
    await dataSource.destroy();
  }
  printTable(
    `Upstream calls during a ${seconds} s outage, ${callers} concurrent callers of one key, each attempt failing after ${attemptMs} ms`,
    ['db', 'variant', 'upstream calls', 'values served', 'errors', 'calls / plain'],
    rows,
  );
}
