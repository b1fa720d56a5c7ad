/**
 * npm run bench -- inbox-slow-worker [--db postgres,mariadb] [--messages 20000] [--delay 100]
 *
 * #19: a healthy worker B beside a worker A whose link delays every packet (`--delay` ms, both
 * ways, through a TCP proxy). B's delivery rate beside A, as a ratio to B's rate alone, on the
 * same backlog (competing mode, batch 20, no-op handler). The goal is ≥ 0.8×.
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchemaManager, sqlClientFor, type SqlClient, statement } from '@holdfast/core/kit';
import { createTestDataSource, uniqueTablePrefix } from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage, INBOX_TABLES } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';
import { fillBacklog } from '../libs/inbox/test/backlog';
import { SlowSilentProxy } from '../test/inbox/support/slow-silent-proxy';
import { benchDatabases, numberArg, printTable } from './support/bench-kit';

type Server = 'postgres' | 'mariadb';

async function node(
  dataSource: DataSource,
  prefix: string,
  count: { n: number },
): Promise<INestApplicationContext> {
  @Injectable()
  class Handler {
    @InboxHandler({ namespace: 'test', name: 'order-placed' })
    async handle(_message: InboxMessage): Promise<void> {
      count.n++;
    }
  }
  @Module({
    imports: [
      InboxModule.forRoot({
        dataSource,
        tablePrefix: prefix,
        schema: 'check',
        cluster: 'competing',
        batchSize: 20,
        pollInterval: '50ms',
      }),
    ],
    providers: [Handler],
  })
  class NodeModule {}
  return NestFactory.createApplicationContext(NodeModule, { logger: false });
}

async function drained(sql: SqlClient, table: string): Promise<void> {
  for (;;) {
    const [row] = await sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table}`));
    if (Number(row.c) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** B's messages per second draining `messages`, alone or beside a slow A. */
async function run(db: Server, messages: number, delayMs: number, withSlow: boolean): Promise<number> {
  const direct = await createTestDataSource(db, { poolSize: 10 });
  const sql = sqlClientFor(direct);
  const prefix = uniqueTablePrefix(`slow_worker_${db}`);
  const table = `${prefix}COR_MESSAGE`;
  const url = new URL(
    db === 'postgres'
      ? (process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
      : (process.env.HOLDFAST_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test'),
  );
  const proxy = new SlowSilentProxy(Number(url.port || (db === 'postgres' ? 5432 : 3306)), 0);
  let slowSource: DataSource | undefined;
  const apps: INestApplicationContext[] = [];
  try {
    await new SchemaManager(sql).apply(INBOX_TABLES.message, prefix, 'create');
    await new SchemaManager(sql).apply(INBOX_TABLES.lease, prefix, 'create');
    await fillBacklog(sql, table, messages);
    const a = { n: 0 };
    const b = { n: 0 };
    if (withSlow) {
      await proxy.start();
      slowSource = await createTestDataSource(db, { port: proxy.port, poolSize: 4 });
      apps.push(await node(slowSource, prefix, a));
      proxy.delayMs = delayMs;
    }
    const started = performance.now();
    apps.push(await node(direct, prefix, b));
    await drained(sql, table);
    const seconds = (performance.now() - started) / 1000;
    process.stderr.write(
      `  ${db} ${withSlow ? 'beside slow A' : 'alone'}: B ${b.n} in ${seconds.toFixed(1)} s` +
        (withSlow ? `, A ${a.n}` : '') +
        '\n',
    );
    return b.n / seconds;
  } finally {
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    await proxy.stop();
    await slowSource?.destroy().catch(() => undefined);
    await sql.execute(statement(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined);
    await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_INBOX_LEASE`)).catch(() => undefined);
    await direct.destroy();
  }
}

export async function main(args: string[]): Promise<void> {
  const databases = benchDatabases(args.includes('--db') ? args : ['--db', 'postgres,mariadb']).filter(
    (d): d is Server => d !== 'sqlite',
  );
  const messages = numberArg(args, '--messages', 20_000);
  const delay = numberArg(args, '--delay', 100);
  const rows: (string | number)[][] = [];
  for (const db of databases) {
    const alone = await run(db, messages, delay, false);
    const beside = await run(db, messages, delay, true);
    rows.push([db, alone, beside, (beside / alone).toFixed(2)]);
  }
  printTable(
    `Inbox: healthy worker B beside a worker A on a ${delay} ms link (${messages.toLocaleString('en-US')} messages, batch 20)`,
    ['database', 'B alone msg/s', 'B beside slow A msg/s', 'ratio'],
    rows,
  );
}
