/**
 * npm run bench -- app-load [--db postgres,mariadb] [--seconds 30] [--roles simba,lease-database,database,inbox,failover]
 *
 * #31: Holdfast under the application's own load. The owner's DataSource pool of 5 is shared with
 * 30 application loops, each running a 200 ms sleep query back to back, for `--seconds`; an idle
 * standby runs in another process. Per role (real processes): the owner's lease losses, the
 * standby's takeovers, the owner's longest Holdfast call (connection wait included: a Simba tick,
 * a lease renewal, a claim or heartbeat; Simba with ttl 3 s and transition 2 s, so a statement
 * timeout of 667 ms); for the inbox (a claiming node under load beside an idle
 * one, 2 s leases, handlers of 1.5 s) duplicates and messages left undelivered.
 * failover: a @Failover method (1 ms upstream, SQL store) called by 10 callers in this process
 * beside the same 30 loops on its pool of 5: callers' latency, p50 / p99 / max.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { monotonicMillis, sleep } from '@holdfast/core/kit';
import { createTestDataSource, uniqueTablePrefix } from '@holdfast/testing';
import { Failover, FailoverModule } from '@holdfast/failover';
import { APP_LOAD, runAppLoad } from '../test/pool/support/app-load-run';
import { benchDatabases, numberArg, printTable } from './support/bench-kit';

const ROLES = ['simba', 'lease-database', 'database', 'inbox', 'failover'] as const;

@Injectable()
class Quotes {
  @Failover({ name: 'app-load-quote', expiry: '1h' })
  async quote(key: string): Promise<{ key: string }> {
    await sleep(1);
    return { key };
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
}

/** Callers' latency of a @Failover method whose SQL store shares the loaded pool. */
async function failoverLatency(
  db: 'postgres' | 'mariadb',
  seconds: number,
  loaded: boolean,
): Promise<number[]> {
  const dataSource = await createTestDataSource(db, { poolSize: APP_LOAD.poolSize });
  const moduleRef = await Test.createTestingModule({
    imports: [
      FailoverModule.forRoot({
        store: { type: 'sql', dataSource, tablePrefix: uniqueTablePrefix('load_fo'), schema: 'create' },
      }),
    ],
    providers: [Quotes],
  }).compile();
  await moduleRef.init();
  const quotes = moduleRef.get(Quotes);
  let running = true;
  const sleepSql =
    db === 'postgres'
      ? `SELECT pg_sleep(${APP_LOAD.queryMs / 1000})`
      : `SELECT SLEEP(${APP_LOAD.queryMs / 1000})`;
  const loops = loaded
    ? Array.from({ length: APP_LOAD.loops }, async () => {
        while (running) await dataSource.query(sleepSql).catch(() => undefined);
      })
    : [];
  const latencies: number[] = [];
  const callers = Array.from({ length: 10 }, async (_, c) => {
    for (let i = 0; running; i++) {
      const started = monotonicMillis();
      await quotes.quote(`k${c}-${i % 20}`).catch(() => undefined);
      latencies.push(monotonicMillis() - started);
      await sleep(20);
    }
  });
  await sleep(seconds * 1_000);
  running = false;
  await Promise.all([...loops, ...callers]);
  await moduleRef.close();
  await dataSource.destroy();
  return latencies;
}

export async function main(args: string[]): Promise<void> {
  const seconds = numberArg(args, '--seconds', 30);
  const i = args.indexOf('--roles');
  const roles = (i >= 0 ? args[i + 1].split(',') : [...ROLES]) as Array<(typeof ROLES)[number]>;
  const dbs = benchDatabases(args.includes('--db') ? args : ['--db', 'postgres,mariadb']).filter(
    (db): db is 'postgres' | 'mariadb' => db !== 'sqlite',
  );
  const rows: (string | number)[][] = [];
  const latencyRows: (string | number)[][] = [];
  for (const db of dbs) {
    for (const role of roles) {
      if (role === 'failover') {
        for (const loaded of [false, true]) {
          const l = await failoverLatency(db, seconds, loaded);
          latencyRows.push([
            db,
            loaded ? 'pool full' : 'idle pool',
            String(l.length),
            String(Math.round(percentile(l, 0.5))),
            String(Math.round(percentile(l, 0.99))),
            String(Math.round(Math.max(...l))),
          ]);
        }
        continue;
      }
      const seed = role === 'inbox' ? await createTestDataSource(db) : undefined;
      process.stderr.write(`app-load: ${db} ${role}…\n`);
      try {
        const r = await runAppLoad({
          role,
          db,
          seconds,
          dataSource: seed,
          messages: 200,
          visibilityTimeout: 2_000,
          handlerMs: 1_500,
          batchSize: 10,
          ttl: 3_000,
          transition: 2_000,
        });
        rows.push([
          db,
          role,
          String(r.losses),
          String(r.takeovers),
          String(r.longestMs),
          role === 'inbox' ? String(r.duplicates) : '-',
          role === 'inbox' ? String(r.undelivered) : '-',
          String(r.appQueries),
        ]);
        process.stderr.write(`app-load: ${rows[rows.length - 1].join(' | ')}\n`);
      } catch (error) {
        rows.push([db, role, `failed: ${(error as Error).message}`, '', '', '', '', '']);
      } finally {
        await seed?.destroy();
      }
    }
  }
  printTable(
    `Owner under the application's load: pool ${APP_LOAD.poolSize}, ${APP_LOAD.loops} loops of ${APP_LOAD.queryMs} ms queries, ${seconds} s`,
    [
      'db',
      'role',
      'lease losses',
      'takeovers',
      'longest Holdfast call ms',
      'duplicates',
      'undelivered',
      'app queries',
    ],
    rows,
  );
  if (latencyRows.length)
    printTable(
      `Failover callers (10, one call each 20 ms) with the store on the pool, ${seconds} s`,
      ['db', 'pool', 'calls', 'p50 ms', 'p99 ms', 'max ms'],
      latencyRows,
    );
}
