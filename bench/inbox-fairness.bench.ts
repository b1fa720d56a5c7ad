/**
 * npm run bench -- inbox-fairness [--db sqlite,postgres,mariadb] [--hot 100000] [--tenants 20]
 *                                 [--each 300] [--per-key 100]
 *
 * A hot tenant beside quiet ones: `--hot` messages of one type wait (accepted before delivery
 * starts); then, while the inbox drains them at its defaults (one node; SQLite as the leader),
 * `--tenants` quiet types bring `--each` messages each, in 15 waves 100 ms apart. Per quiet
 * tenant: the p99 of its messages' waits, from the accept call to the handler's start, with
 * the plain claim (acceptance order) and with `fairShare: { perKey: --per-key }`. The tenant is
 * the message type name, as fair share counts it. Printed: the best, median and worst quiet
 * tenant's p99, the time until every quiet message was handled, and the hot messages handled
 * meanwhile per second.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { sqlClientFor, statement, type SqlClient } from '@holdfast/core/kit';
import {
  createTestDataSource,
  tempSqliteFile,
  uniqueTablePrefix,
  type TestDatabase,
} from '@holdfast/testing';
import { InboxHandler, InboxModule, MessageAcceptor, type InboxMessage } from '@holdfast/inbox';
import { SimbaModule } from '@holdfast/simba';
import { benchDatabases, median, numberArg, printTable } from './support/bench-kit';

const HOT = 'hot';
const WAVES = 15;

/** Accept times (performance.now()) of the quiet messages, and their waits once handled. */
interface Watch {
  acceptedAt: Map<string, number>;
  waits: Map<string, number[]>;
  quietLeft: number;
  hotHandled: number;
  allQuiet?: () => void;
}

let watch: Watch | undefined;

/** One handler method per type (the decorator applied as the compiler would). */
function handlersFor(tenants: readonly string[]): new () => object {
  @Injectable()
  class Handlers {}
  const proto = Handlers.prototype as unknown as Record<string, unknown>;
  for (const name of [HOT, ...tenants]) {
    const key = `handle_${name.replace(/\W/g, '_')}`;
    proto[key] = (message: InboxMessage) => {
      const w = watch;
      if (!w) return;
      if (name === HOT) {
        w.hotHandled++;
        return;
      }
      const at = w.acceptedAt.get(message.id);
      if (at === undefined) return;
      w.acceptedAt.delete(message.id);
      w.waits.get(name)!.push(performance.now() - at);
      if (--w.quietLeft === 0) w.allQuiet?.();
    };
    const descriptor = Object.getOwnPropertyDescriptor(proto, key)!;
    InboxHandler({ name })(proto, key, descriptor);
  }
  return Handlers;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

interface Outcome {
  mode: string;
  p99s: number[];
  allQuietMs: number;
  hotRate: number;
}

async function runMode(
  db: TestDatabase,
  mode: 'plain' | 'fair',
  options: { hot: number; tenants: string[]; each: number; perKey: number },
): Promise<Outcome> {
  const dataSource: DataSource = await createTestDataSource(db, {
    sqliteFile: tempSqliteFile(`fairness-${mode}`),
  });
  const sql: SqlClient = sqlClientFor(dataSource);
  const prefix = uniqueTablePrefix(`fair_${mode}_${db}`);
  const leader = db === 'sqlite';
  const inbox = (deliver: boolean) =>
    InboxModule.forRoot({
      dataSource,
      tablePrefix: prefix,
      schema: 'create',
      cluster: leader ? 'leader' : 'competing',
      deliver,
      ...(mode === 'fair' ? { fairShare: { perKey: options.perKey } } : {}),
    });
  @Module({ imports: [inbox(false)] })
  class FillModule {}
  @Module({
    imports: [
      inbox(true),
      ...(leader ? [SimbaModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create' })] : []),
    ],
    providers: [handlersFor(options.tenants)],
  })
  class DeliverModule {}
  const quiet = options.tenants.length * options.each;
  const w: Watch = {
    acceptedAt: new Map(),
    waits: new Map(options.tenants.map((t) => [t, []])),
    quietLeft: quiet,
    hotHandled: 0,
  };
  try {
    // The hot tenant's backlog, accepted by a node that does not deliver.
    const filler = await NestFactory.createApplicationContext(FillModule, { logger: ['error'] });
    const acceptor = filler.get(MessageAcceptor);
    const batch = 5_000;
    for (let i = 0; i < options.hot; i += batch)
      await acceptor.acceptAll(
        Array.from({ length: Math.min(batch, options.hot - i) }, () => ({
          type: { name: HOT },
          payload: {},
        })),
      );
    if (db === 'postgres') await sql.execute(statement(`VACUUM ANALYZE ${prefix}COR_MESSAGE`));
    watch = w;
    const allQuiet = new Promise<void>((resolve) => (w.allQuiet = resolve));
    const node = await NestFactory.createApplicationContext(DeliverModule, { logger: ['error'] });
    const started = performance.now();
    try {
      // The quiet tenants' messages arrive while the hot backlog drains.
      const perWave = Math.ceil(options.each / WAVES);
      let sent = 0;
      for (let wave = 0; sent < options.each; wave++) {
        const n = Math.min(perWave, options.each - sent);
        const messages = options.tenants.flatMap((name) =>
          Array.from({ length: n }, (_, i) => ({ id: `${name}-${sent + i}`, type: { name }, payload: {} })),
        );
        const at = performance.now();
        for (const m of messages) w.acceptedAt.set(m.id, at);
        await acceptor.acceptAll(messages);
        sent += n;
        await new Promise((r) => setTimeout(r, 100));
      }
      await allQuiet;
    } finally {
      const allQuietMs = performance.now() - started;
      const hotHandled = w.hotHandled;
      await node.close();
      await filler.close();
      watch = undefined;
      Object.assign(w, { allQuietMs, hotRate: (hotHandled / allQuietMs) * 1000 });
    }
    const done = w as Watch & { allQuietMs: number; hotRate: number };
    return {
      mode,
      p99s: options.tenants.map((t) => p99(w.waits.get(t)!)),
      allQuietMs: done.allQuietMs,
      hotRate: done.hotRate,
    };
  } finally {
    for (const table of ['COR_MESSAGE', 'HOLDFAST_INBOX_PAUSE', 'HOLDFAST_INBOX_LEASE', 'simba_mutex'])
      await sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}${table}`)).catch(() => undefined);
    await dataSource.destroy();
  }
}

export async function main(args: string[]): Promise<void> {
  const hot = numberArg(args, '--hot', 100_000);
  const count = numberArg(args, '--tenants', 20);
  const each = numberArg(args, '--each', 300);
  const perKey = numberArg(args, '--per-key', 100);
  const tenants = Array.from({ length: count }, (_, i) => `quiet-${String(i).padStart(2, '0')}`);
  const rows: (string | number)[][] = [];
  for (const db of benchDatabases(args)) {
    for (const mode of ['plain', 'fair'] as const) {
      const r = await runMode(db, mode, { hot, tenants, each, perKey });
      const sorted = [...r.p99s].sort((a, b) => a - b);
      process.stderr.write(
        `  ${db} ${mode}: quiet p99 ${Math.round(sorted[0])}–${Math.round(sorted[sorted.length - 1])} ms, ` +
          `all quiet in ${Math.round(r.allQuietMs)} ms, hot ${Math.round(r.hotRate)}/s\n`,
      );
      rows.push([
        db,
        mode === 'fair' ? `fairShare perKey ${perKey}` : 'plain (acceptance order)',
        Math.round(sorted[0]),
        Math.round(median(sorted)),
        Math.round(sorted[sorted.length - 1]),
        Math.round(r.allQuietMs),
        Math.round(r.hotRate),
      ]);
    }
  }
  printTable(
    `${hot.toLocaleString('en-US')} hot messages waiting, ${count} quiet tenants × ${each} arriving in ${WAVES} waves 100 ms apart; ` +
      `the inbox at its defaults, one node; per quiet tenant the p99 wait (accept → handler start)`,
    [
      'database',
      'claim',
      'best tenant p99 ms',
      'median tenant p99 ms',
      'worst tenant p99 ms',
      'all quiet handled ms',
      'hot msg/s meanwhile',
    ],
    rows,
  );
}
