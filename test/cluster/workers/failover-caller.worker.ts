/**
 * A `@Failover` caller for the cluster suites (#36): FailoverModule on the cluster (SQL store,
 * `async: false`, so every call writes or reads the store on its own path) and, until it is
 * killed, two calls every `interval` ms, each timed here, in the caller's own process:
 * - `up`: the upstream answers; the caller gets the fresh value, and the synchronous store write
 *   on its path is bounded by `storeTimeout`;
 * - `down`: the upstream fails; the recovery read, bounded too, gives the last good value (stored
 *   at start) marked stale, or, when the store cannot answer in time, the upstream's own error
 *   (the default 'rethrow' policy).
 * argv: <db> <tablePrefix> <storeTimeout ms> <interval ms>  (the URL from HOLDFAST_TEST_PG_URL or
 * HOLDFAST_TEST_MARIADB_URL)
 * IPC out: {t:'ready', goodAt} once the last good value is stored and read back; then per call
 * {t:'call', kind:'up'|'down', at (epoch ms at the call), ms, outcome:'fresh'|'stale'|'error',
 * last (the stale value is the last good one), error?}.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createTestDataSource, type TestDatabase } from '@holdfast/testing';
import { Failover, FailoverModule, Referential } from '@holdfast/failover';

const [db, prefix, storeTimeout, interval] = process.argv.slice(2);
const send = (message: object) => {
  if (process.connected) process.send?.(message);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Quote extends Referential {
  constructor(
    readonly key: string,
    readonly at: number,
  ) {
    super();
  }
}

export class UpstreamDown extends Error {}

@Injectable()
class QuoteClient {
  /** Stored under the key alone: `fail` is the worker's switch for the upstream. */
  @Failover({
    name: 'cluster-quote',
    expiry: '1h',
    type: Quote,
    keyGenerator: { key: (args) => String(args[0]) },
  })
  async quote(key: string, fail: boolean): Promise<Quote> {
    if (fail) throw new UpstreamDown(`upstream down for ${key}`);
    return new Quote(key, Date.now());
  }
}

async function main(): Promise<void> {
  const dataSource = await createTestDataSource(db as TestDatabase, { poolSize: 2 });
  @Module({
    imports: [
      FailoverModule.forRoot({
        store: { type: 'sql', dataSource, tablePrefix: prefix, schema: 'create' },
        async: false,
        storeTimeout: Number(storeTimeout),
        cleanup: { enabled: false },
      }),
    ],
    providers: [QuoteClient],
  })
  class CallerModule {}
  const app = await NestFactory.createApplicationContext(CallerModule, { logger: ['error', 'warn'] });
  const quotes = app.get(QuoteClient);

  // The last good value: stored by a call whose upstream answers, then read back by one whose
  // upstream fails (a store write past storeTimeout is skipped, so try until it is there).
  let good: Quote | undefined;
  for (let i = 0; i < 50; i++) {
    const stored = await quotes.quote('cached', false);
    const back = await quotes.quote('cached', true).catch(() => undefined);
    if (back && back.upToDate === false && back.at === stored.at) {
      good = stored;
      break;
    }
    await sleep(200);
  }
  if (!good) throw new Error('the last good value could not be stored and read back');
  send({ t: 'ready', goodAt: good.at });

  for (;;) {
    for (const kind of ['up', 'down'] as const) {
      const at = Date.now();
      const started = performance.now();
      try {
        const value = await quotes.quote(kind === 'up' ? 'live' : 'cached', kind === 'down');
        const ms = performance.now() - started;
        send({
          t: 'call',
          kind,
          at,
          ms,
          outcome: value.upToDate === false ? 'stale' : 'fresh',
          last: value.at === good.at,
        });
      } catch (error) {
        const ms = performance.now() - started;
        send({
          t: 'call',
          kind,
          at,
          ms,
          outcome: 'error',
          last: false,
          error: `${(error as Error).name}${error instanceof UpstreamDown ? '(upstream)' : ''}: ${(error as Error).message}`,
        });
      }
    }
    await sleep(Number(interval));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
