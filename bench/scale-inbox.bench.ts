/**
 * npm run bench -- scale-inbox [--db sqlite,postgres,mariadb] [--waiting 0,100000,1000000]
 *                              [--deliver 50000] [--accept-ms 3000]
 *
 * How the inbox's cost grows with the backlog, per database. For each number of waiting (due)
 * messages W:
 *  - accept: `MessageAcceptor.accept` at concurrency 10 for `--accept-ms`, with W waiting;
 *  - delivery: the claim → delete cycle of the delivery loop (batch 100, no-op handler) for the
 *    oldest `--deliver` messages of W + deliver waiting.
 * The ratio column compares each rate with the same database's rate with nothing else waiting
 * (#17 asks for delivery at 1,000,000 waiting ≥ 0.9× the rate at 50,000).
 * `runScaleInbox` is exported for a combined `npm run bench -- scale`.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchemaManager, sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import { createTestDataSource, uniqueTablePrefix, type TestDatabase } from '@holdfast/testing';
import { InboxModule, MessageAcceptor, INBOX_TABLES } from '@holdfast/inbox';
import { CorMessageStore } from '@holdfast/inbox/internal';
import { fillBacklog } from '../libs/inbox/test/backlog';
import { benchDatabases, opsPerSecond, printTable } from './support/bench-kit';

export interface ScaleInboxRow {
  db: TestDatabase;
  waiting: number;
  acceptPerSecond: number;
  deliverPerSecond: number;
}

export interface ScaleInboxOptions {
  databases?: TestDatabase[];
  waiting?: number[];
  deliver?: number;
  acceptMs?: number;
}

async function acceptRate(db: TestDatabase, sql: SqlClient, prefix: string, ms: number): Promise<number> {
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource: sql.dataSource,
        tablePrefix: prefix,
        schema: 'check',
        deliver: false,
      }),
    ],
  })
  class AcceptModule {}
  const app = await NestFactory.createApplicationContext(AcceptModule, { logger: ['error'] });
  try {
    const acceptor = app.get(MessageAcceptor);
    const type = { namespace: 'bench', name: 'scale' };
    return await opsPerSecond((i) => acceptor.accept({ id: `acc-${db}-${i}`, type, payload: { i } }), 10, ms);
  } finally {
    await app.close();
  }
}

/** The delivery loop's database work for `count` messages: claim a batch, delete it. */
async function deliverRate(store: CorMessageStore, count: number): Promise<number> {
  const started = performance.now();
  let done = 0;
  while (done < count) {
    const { rows } = await store.claims.claim(Math.min(100, count - done), undefined, 300_000);
    if (!rows.length) throw new Error(`only ${done} of ${count} messages could be claimed`);
    await store.completion.deleteDelivered(rows.map((r) => r.id));
    done += rows.length;
  }
  return done / ((performance.now() - started) / 1000);
}

export async function runScaleInbox(options: ScaleInboxOptions = {}): Promise<ScaleInboxRow[]> {
  const databases = options.databases ?? ['sqlite', 'postgres', 'mariadb'];
  const waitingList = options.waiting ?? [0, 100_000, 1_000_000];
  const deliver = options.deliver ?? 50_000;
  const acceptMs = options.acceptMs ?? 3_000;
  const rows: ScaleInboxRow[] = [];
  for (const db of databases) {
    const dataSource = await createTestDataSource(db, { poolSize: 12 });
    const sql = sqlClientFor(dataSource);
    try {
      // A short warm-up round (JIT, pools, plan caches), not reported.
      const warm = uniqueTablePrefix(`scale_inbox_warm_${db}`);
      try {
        await new SchemaManager(sql).apply(INBOX_TABLES.message, warm, 'create');
        await new SchemaManager(sql).apply(INBOX_TABLES.lease, warm, 'create');
        await fillBacklog(sql, `${warm}COR_MESSAGE`, 3_000);
        const warmStore = new CorMessageStore(sql, warm);
        await warmStore.detectLayout();
        await acceptRate(db, sql, warm, 500);
        await deliverRate(warmStore, 3_000);
      } finally {
        await sql.execute(statement(`DROP TABLE IF EXISTS ${warm}COR_MESSAGE`)).catch(() => undefined);
        await sql
          .execute(statement(`DROP TABLE IF EXISTS ${warm}HOLDFAST_INBOX_LEASE`))
          .catch(() => undefined);
      }
      for (const waiting of waitingList) {
        const prefix = uniqueTablePrefix(`scale_inbox_${db}`);
        const table = `${prefix}COR_MESSAGE`;
        try {
          await new SchemaManager(sql).apply(INBOX_TABLES.message, prefix, 'create');
          await new SchemaManager(sql).apply(INBOX_TABLES.lease, prefix, 'create');
          // The oldest `deliver` are delivered; `waiting` more wait behind them.
          await fillBacklog(sql, table, waiting + deliver);
          const store = new CorMessageStore(sql, prefix);
          await store.detectLayout();
          const acceptPerSecond = await acceptRate(db, sql, prefix, acceptMs);
          const deliverPerSecond = await deliverRate(store, deliver);
          rows.push({ db, waiting, acceptPerSecond, deliverPerSecond });
          process.stderr.write(
            `  ${db} waiting ${waiting}: accept ${Math.round(acceptPerSecond)}/s, deliver ${Math.round(deliverPerSecond)}/s\n`,
          );
        } finally {
          await sql.execute(statement(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined);
          await sql
            .execute(statement(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_INBOX_LEASE`))
            .catch(() => undefined);
        }
      }
    } finally {
      await dataSource.destroy();
    }
  }
  return rows;
}

export function printScaleInbox(rows: ScaleInboxRow[], deliver: number): void {
  const base = (db: TestDatabase) =>
    rows.find((r) => r.db === db && r.waiting === 0) ?? rows.find((r) => r.db === db)!;
  printTable(
    `Inbox at scale: accept and delivery (${deliver.toLocaleString('en-US')} delivered, batch 100) by messages waiting`,
    ['database', 'waiting', 'accept/s', 'accept ratio', 'deliver/s', 'deliver ratio'],
    rows.map((r) => [
      r.db,
      r.waiting.toLocaleString('en-US'),
      r.acceptPerSecond,
      (r.acceptPerSecond / base(r.db).acceptPerSecond).toFixed(2),
      r.deliverPerSecond,
      (r.deliverPerSecond / base(r.db).deliverPerSecond).toFixed(2),
    ]),
  );
}

function listArg(args: string[], name: string): number[] | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1].split(',').map(Number) : undefined;
}

export async function main(args: string[]): Promise<void> {
  const deliver = listArg(args, '--deliver')?.[0] ?? 50_000;
  const rows = await runScaleInbox({
    databases: benchDatabases(args),
    waiting: listArg(args, '--waiting'),
    deliver,
    acceptMs: listArg(args, '--accept-ms')?.[0],
  });
  printScaleInbox(rows, deliver);
}
