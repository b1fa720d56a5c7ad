/**
 * npm run bench -- inbox-path [--messages 30000] [--batch 1000] [--rounds 5]
 *
 * The inbox's own CPU per delivered message, without a claim statement or a server: claimed rows
 * made in memory are delivered by the inbox's delivery run (DeliveryRuns and ClaimLedger, as
 * BatchDelivery uses them: take, deliver, the last flush, finish) to an async no-op handler, and
 * their deletes go to a SQLite table (the rows are not there: a delete finds nothing). The
 * baseline is the same job by hand in the same process, as bench/support/raw-inbox-workers.ts
 * does it: each row made into the message a handler gets (payload decoded), the handler called,
 * one delete by ids and lease per batch on the same SQLite connection. One process, the two
 * taking turns in each round, a full collection before each; printed per round: µs per message
 * (see microsPerMessage) and by hand ÷ inbox. This is the part of
 * inbox-steady's gap to the driver by hand that is the delivery's JavaScript.
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DataSource } from 'typeorm';
import { tempSqliteFile, testDataSourceOptions } from '@holdfast/testing';
import { InboxHandler, InboxModule, type InboxMessage } from '@holdfast/inbox';
import { ClaimLedger } from '../libs/inbox/src/delivery/claim-ledger';
import { DeliveryRuns } from '../libs/inbox/src/delivery/delivery-runs';
import { DeliveryState } from '../libs/inbox/src/delivery/delivery-state';
import type { MessageRow } from '../libs/inbox/src/store/cor-message.rows';
import { median, numberArg, printTable } from './support/bench-kit';

const PREFIX = 'hf_path_';
const TABLE = `${PREFIX}COR_MESSAGE`;
const PAYLOAD = JSON.stringify({
  order: 12345,
  customer: 'c-778',
  lines: [1, 2, 3],
  note: 'a typical small payload',
});

/** The last message handled (kept, so that no engine can drop the work of making it). */
export let seen: InboxMessage | undefined;

@Injectable()
class NoopHandler {
  @InboxHandler({ namespace: 'bench', name: 'noop' })
  async handle(message: InboxMessage): Promise<void> {
    seen = message;
  }
}

let sequence = 0;

/** A full collection before each measure, so that none measured pays for the garbage of another. */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** A claim's rows as the claim statement reads them: one lease end for the batch. */
function claimedRows(n: number): MessageRow[] {
  const lease = Date.now() + 300_000;
  const inserted = Date.now();
  return Array.from({ length: n }, () => ({
    id: `path-${sequence++}-0123456789abcdef`,
    encoding: 'json',
    namespace: 'bench',
    name: 'noop',
    revision: null,
    payload: Buffer.from(PAYLOAD),
    inserted,
    ttl: null,
    expiration: null,
    retries: 0,
    nextRetry: lease,
    error: null,
  }));
}

/**
 * µs per message over `messages`, delivered `batch` at a time by `deliver`: wall-clock time, which
 * is the main thread's CPU time here (nothing waits for I/O: SQLite answers synchronously and the
 * handlers at once), without the collector's helper threads that `process.cpuUsage` adds.
 */
async function microsPerMessage(
  messages: number,
  batch: number,
  deliver: (rows: MessageRow[]) => Promise<void>,
): Promise<number> {
  const batches = Math.ceil(messages / batch);
  const rows = Array.from({ length: batches }, () => claimedRows(batch));
  collectGarbage();
  const started = performance.now();
  for (const claim of rows) await deliver(claim);
  return ((performance.now() - started) * 1_000) / (batches * batch);
}

/** The inbox's way: as BatchDelivery runs a claimed batch (no claim ahead: nothing to claim). */
function inboxDelivery(app: INestApplicationContext): (rows: MessageRow[]) => Promise<void> {
  const runs = app.get(DeliveryRuns, { strict: false });
  const ledger = app.get(ClaimLedger, { strict: false });
  return async (rows) => {
    const now = Date.now();
    const started = performance.now();
    ledger.take(rows, now, started);
    await runs.deliver({ rows, now, started });
    await ledger.flush();
    ledger.finish(rows);
  };
}

/** By hand: the message made from the row, the handler called, one delete by ids and lease. */
function byHand(dataSource: DataSource): (rows: MessageRow[]) => Promise<void> {
  const db = (dataSource.driver as unknown as { databaseConnection: import('better-sqlite3').Database })
    .databaseConnection;
  const statements = new Map<number, import('better-sqlite3').Statement>();
  const remove = (n: number) => {
    let s = statements.get(n);
    if (!s) {
      s = db.prepare(
        `DELETE FROM ${TABLE} WHERE ID IN (${Array(n).fill('?').join(', ')}) AND NEXT_RETRY = ?`,
      );
      statements.set(n, s);
    }
    return s;
  };
  const handler = async (message: InboxMessage) => {
    seen = message;
  };
  return async (rows) => {
    const ids: string[] = [];
    await Promise.all(
      rows.map(async (row) => {
        await handler({
          id: row.id,
          type: { namespace: row.namespace!, name: row.name },
          encoding: 'json',
          payload: JSON.parse((row.payload as Buffer).toString('utf8')),
          inserted: new Date(row.inserted),
          retries: row.retries,
        });
        ids.push(row.id);
      }),
    );
    remove(ids.length).run(...ids, new Date(rows[0].nextRetry!).toISOString());
  };
}

export async function main(args: string[]): Promise<void> {
  const messages = numberArg(args, '--messages', 30_000);
  const batch = numberArg(args, '--batch', 1_000);
  const rounds = numberArg(args, '--rounds', 5);
  const dataSource = new DataSource(
    testDataSourceOptions('sqlite', { sqliteFile: tempSqliteFile('inbox-path') }) as never,
  );
  await dataSource.initialize();
  @Module({
    imports: [InboxModule.forRoot({ dataSource, tablePrefix: PREFIX, schema: 'create', deliver: false })],
    providers: [NoopHandler],
  })
  class PathModule {}
  const app = await NestFactory.createApplicationContext(PathModule, { logger: ['error'] });
  // The delivery runs as on a node whose loop has started (deliver: false keeps the loop itself off).
  const state = app.get(DeliveryState, { strict: false });
  state.start();
  try {
    const inbox = inboxDelivery(app);
    const raw = byHand(dataSource);
    await microsPerMessage(messages, batch, raw); // warm-up
    await microsPerMessage(messages, batch, inbox);
    const table: (string | number)[][] = [];
    const ratios: number[] = [];
    const [raws, inboxes]: number[][] = [[], []];
    for (let r = 1; r <= rounds; r++) {
      const rawUs = await microsPerMessage(messages, batch, raw);
      const inboxUs = await microsPerMessage(messages, batch, inbox);
      raws.push(rawUs);
      inboxes.push(inboxUs);
      ratios.push(rawUs / inboxUs);
      table.push([String(r), rawUs.toFixed(2), inboxUs.toFixed(2), (rawUs / inboxUs).toFixed(2)]);
    }
    table.push([
      'median',
      median(raws).toFixed(2),
      median(inboxes).toFixed(2),
      `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    ]);
    printTable(
      `The delivery's CPU per message, ${messages} messages in batches of ${batch}, no claim statement (SQLite deletes)`,
      ['round', 'by hand, µs/msg', 'inbox, µs/msg', 'by hand ÷ inbox'],
      table,
    );
  } finally {
    state.stop();
    state.release();
    await app.close();
    await dataSource.destroy();
  }
}
