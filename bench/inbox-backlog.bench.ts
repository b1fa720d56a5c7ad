/**
 * npm run bench -- inbox-backlog [--db sqlite,postgres,mariadb] [--waiting 1000000] [--deliver 50000]
 *                                [--rounds 3] [--loop store 100] [--no-settle]
 *
 * Delivery of the oldest `--deliver` messages with `--waiting` more behind them ("deep"),
 * against the same delivery from a table holding only those `--deliver` ("alone"), per
 * database. Goal: deep ÷ alone ≥ 0.9. By default the inbox delivers at its defaults (one node,
 * no-op handler; SQLite as the leader); `--loop store N` runs the store's claim of N → delete
 * loop instead, one statement after the other (what scale-inbox.bench.ts times).
 *
 * Each round fills both tables anew by one statement (ids and INSERTED in delivery order, as the
 * inbox's UUIDv7 ids are) and lets them settle as a backlog that has lived a while would have
 * (see settle), then delivers from both in turns (deep first in even rounds, alone first in
 * odd); each round's ratio is taken within the round, and a first round, not reported, warms up.
 * `--no-settle` leaves the tables as the fill left them (scale-inbox.bench.ts's way); both
 * deliveries of a round then share the server's writing out of both fills.
 * A delivery is timed from the first message handled to the `--deliver`th (start-up left out);
 * beside the rate, the node's CPU time per message over the same window. SQLite: each table in
 * a file of its own.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  tempSqliteFile,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage, INBOX_TABLES } from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';
import { CorMessageStore } from '@holdfast/inbox/internal';
import { fillBacklog } from '../libs/inbox/test/backlog';
import { benchDatabases, median, numberArg, printTable } from './support/bench-kit';

/** The type fillBacklog writes. */
const TYPE = { namespace: 'test', name: 'order-placed' };

/** What the handler of the running delivery reports to. */
let sink: ((message: InboxMessage) => void) | undefined;

@Injectable()
class CountingHandler {
  @InboxHandler(TYPE)
  async handle(message: InboxMessage): Promise<void> {
    sink?.(message);
  }
}

interface Delivery {
  rate: number;
  /** The node's CPU time per message (µs), from its first message to the last counted. */
  cpu: number;
}

/**
 * Delivers `count` messages of `prefix`'s table with the inbox at its defaults, then stops.
 * SQLite delivers as the leader (one writer), elsewhere as a competing node.
 */
async function inboxDelivery(dataSource: DataSource, prefix: string, count: number): Promise<Delivery> {
  const leader = dataSource.options.type === 'better-sqlite3';
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        cluster: leader ? 'leader' : 'competing',
      }),
      ...(leader ? [SimbaModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create' })] : []),
    ],
    providers: [CountingHandler],
  })
  class BacklogModule {}
  let handled = 0;
  let first: { at: number; cpu: NodeJS.CpuUsage } | undefined;
  let last: { at: number; cpu: NodeJS.CpuUsage } | undefined;
  const done = new Promise<void>((resolve) => {
    sink = () => {
      if (handled++ === 0) first = { at: performance.now(), cpu: process.cpuUsage() };
      if (handled === count) {
        last = { at: performance.now(), cpu: process.cpuUsage() };
        resolve();
      }
    };
  });
  const app = await NestFactory.createApplicationContext(BacklogModule, { logger: ['error'] });
  try {
    await done;
  } finally {
    sink = undefined;
    await app.close();
  }
  const cpu = (last!.cpu.user + last!.cpu.system - first!.cpu.user - first!.cpu.system) / (count - 1);
  return { rate: ((count - 1) / (last!.at - first!.at)) * 1000, cpu };
}

/**
 * `--loop store`: the delivery loop's database work alone, as scale-inbox.bench.ts runs it: a
 * claim of `batch`, then a delete of what it claimed, one after the other, no handler.
 */
async function storeLoop(
  dataSource: DataSource,
  prefix: string,
  count: number,
  batch: number,
): Promise<Delivery> {
  const store = new CorMessageStore(sqlClientFor(dataSource), prefix);
  await store.detectLayout();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let done = 0;
  while (done < count) {
    const { rows } = await store.claims.claim(Math.min(batch, count - done), undefined, 300_000);
    if (!rows.length) throw new Error(`only ${done} of ${count} messages could be claimed`);
    await store.completion.deleteDelivered(rows.map((r) => r.id));
    done += rows.length;
  }
  const used = process.cpuUsage(cpu);
  return { rate: (done / (performance.now() - started)) * 1000, cpu: (used.user + used.system) / done };
}

async function createTables(sql: SqlClient, prefix: string): Promise<void> {
  await new SchemaManager(sql).apply(INBOX_TABLES.message, prefix, 'create');
  await new SchemaManager(sql).apply(INBOX_TABLES.lease, prefix, 'create');
}

async function dropTables(sql: SqlClient, prefix: string): Promise<void> {
  await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}COR_MESSAGE`)).catch(() => undefined);
  await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_INBOX_LEASE`)).catch(() => undefined);
  await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}simba_mutex`)).catch(() => undefined);
}

interface DatabaseRun {
  db: TestDatabase;
  deep: Delivery[];
  alone: Delivery[];
}

/** How one side delivers: the inbox at its defaults, or the store's loop of `--loop store N`. */
type Deliver = (dataSource: DataSource, prefix: string, count: number) => Promise<Delivery>;

/** One side of a round: its own DataSource (SQLite: its own file) and a table filled with `rows`. */
interface Side {
  dataSource: DataSource;
  sql: SqlClient;
  prefix: string;
}

async function filledSide(db: TestDatabase, tag: string, rows: number, settled: boolean): Promise<Side> {
  const dataSource = await createTestDataSource(db, { sqliteFile: tempSqliteFile(`backlog-${tag}`) });
  const sql = sqlClientFor(dataSource);
  const prefix = uniqueTablePrefix(`backlog_${tag}_${db}`);
  await createTables(sql, prefix);
  await fillBacklog(sql, `${prefix}COR_MESSAGE`, rows);
  if (settled) await settle(sql, `${prefix}COR_MESSAGE`);
  return { dataSource, sql, prefix };
}

/**
 * A backlog that has lived a while rather than one written a second ago: on PostgreSQL vacuumed
 * (hint bits set, visibility map), on MariaDB with the fill's dirty pages written out (else
 * the first reads wait for them), on SQLite with the WAL checkpointed into the file.
 */
async function settle(sql: SqlClient, table: string): Promise<void> {
  switch (sql.dialect.name) {
    case 'postgres':
      await sql.execute(statement(`VACUUM ANALYZE ${table}`));
      break;
    case 'mysql':
    case 'mariadb':
      await sql.session(async (s) => {
        await s.query(statement(`FLUSH TABLES ${table} FOR EXPORT`));
        await s.query(statement('UNLOCK TABLES'));
      });
      break;
    case 'sqlite':
      await sql.query(statement('PRAGMA wal_checkpoint(TRUNCATE)'));
      break;
  }
}

async function dropSide(side: Side | undefined): Promise<void> {
  if (!side) return;
  await dropTables(side.sql, side.prefix);
  await side.dataSource.destroy();
}

/**
 * Each round fills both tables anew (the deep one with `waiting` more behind the `count` it
 * delivers), settles them, then delivers from both in turns (deep first in even rounds); round 0
 * warms the code up and is not reported.
 */
async function runDatabase(
  db: TestDatabase,
  waiting: number,
  count: number,
  rounds: number,
  deliver: Deliver,
  settled: boolean,
): Promise<DatabaseRun> {
  const run: DatabaseRun = { db, deep: [], alone: [] };
  for (let round = 0; round <= rounds; round++) {
    let deep: Side | undefined;
    let alone: Side | undefined;
    try {
      deep = await filledSide(db, 'deep', waiting + count, settled);
      alone = await filledSide(db, 'alone', count, settled);
      const results = new Map<Side, Delivery>();
      for (const side of round % 2 ? [alone, deep] : [deep, alone])
        results.set(side, await deliver(side.dataSource, side.prefix, count));
      const d = results.get(deep)!;
      const a = results.get(alone)!;
      process.stderr.write(
        `  ${db} ${round === 0 ? 'warm-up' : `round ${round}`}: deep ${Math.round(d.rate)}/s, alone ${Math.round(a.rate)}/s, ` +
          `ratio ${(d.rate / a.rate).toFixed(2)}\n`,
      );
      if (round === 0) continue;
      run.deep.push(d);
      run.alone.push(a);
    } finally {
      await dropSide(deep);
      await dropSide(alone);
    }
  }
  return run;
}

export async function main(args: string[]): Promise<void> {
  const waiting = numberArg(args, '--waiting', 1_000_000);
  const count = numberArg(args, '--deliver', 50_000);
  const rounds = numberArg(args, '--rounds', 3);
  const loop = args.indexOf('--loop');
  const batch = loop >= 0 ? Number(args[loop + 2] ?? 100) : 0;
  const how: Deliver =
    loop >= 0
      ? (ds, prefix, n) => storeLoop(ds, prefix, n, batch)
      : (ds, prefix, n) => inboxDelivery(ds, prefix, n);
  const runs: DatabaseRun[] = [];
  const settled = !args.includes('--no-settle');
  for (const db of benchDatabases(args))
    runs.push(await runDatabase(db, waiting, count, rounds, how, settled));
  const range = (xs: number[]) =>
    `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
  printTable(
    `${batch ? `The store's claim (${batch}) → delete loop` : 'Inbox delivery at its defaults'} of ${count.toLocaleString('en-US')} messages with ${waiting.toLocaleString('en-US')} ` +
      `waiting behind them (deep) and alone, ${rounds} rounds in turns${settled ? '' : ', tables not settled'}; medians, ratio (min–max) within each round; goal ≥ 0.90`,
    ['database', 'deep msg/s', 'alone msg/s', 'deep ÷ alone', 'CPU µs/msg deep', 'CPU µs/msg alone'],
    runs.map((r) => [
      r.db,
      median(r.deep.map((x) => x.rate)),
      median(r.alone.map((x) => x.rate)),
      range(r.deep.map((x, i) => x.rate / r.alone[i].rate)),
      median(r.deep.map((x) => x.cpu)),
      median(r.alone.map((x) => x.cpu)),
    ]),
  );
}
