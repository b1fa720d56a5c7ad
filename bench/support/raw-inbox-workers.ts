/**
 * The inbox's delivery done by hand with each database's driver, for the benches' baseline: claim
 * the oldest due messages under a lease (the inbox's largest claim at a time, one claim ahead on
 * the servers), make each row the message a handler gets (payload decoded), call the handler,
 * then delete the claim's rows with its lease. What someone who did not use Holdfast would write
 * for the same job, with the same table and the same guarantees (nobody else takes a leased row,
 * a lost lease is not deleted), and nothing more (no heartbeats, no retries, no expiry of a
 * claimed message, no metrics).
 */
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import { Client } from 'pg';
import type { InboxMessage } from '@holdfast/inbox';

/** What a raw worker does with each message (the bench's counting handler). */
export type RawHandler = (message: InboxMessage) => Promise<void>;

/** A running raw worker. */
export interface RawInboxWorker {
  /** Stops claiming, waits for the claim in flight and the deletes sent, then closes the connections. */
  stop(): Promise<void>;
}

export interface RawInboxTarget {
  /** `<prefix>COR_MESSAGE`. */
  table: string;
  /** `<prefix>COR_MESSAGE_ORDER_IDX` (MariaDB's locking read walks it, as the inbox's does). */
  orderIndex: string;
  /** Messages per claim. */
  claimSize: number;
  /** A PostgreSQL or MySQL URL, or the SQLite file. */
  location: string;
}

/** Rows as each claim below names them. */
interface RawRow {
  id: string;
  ns: string;
  name: string;
  revision: string | null;
  payload: Buffer;
  inserted: Date | string | number;
  retries: number;
}

/** What a handler gets from a row (the inbox's InboxMessage: type, decoded payload, times). */
function messageOf(row: RawRow, inserted: Date): InboxMessage {
  return {
    id: row.id,
    type:
      row.revision === null
        ? { namespace: row.ns, name: row.name }
        : { namespace: row.ns, name: row.name, revision: row.revision },
    encoding: 'json',
    payload: JSON.parse(row.payload.toString('utf8')),
    inserted,
    retries: row.retries,
  };
}

const LEASE_MS = 300_000;
const DUE = (now: string) =>
  `RETRIES < 5 AND (NEXT_RETRY IS NULL OR NEXT_RETRY <= ${now}) AND (EXPIRATION IS NULL OR EXPIRATION > ${now})`;

/**
 * The servers' loop: one claim ahead while a batch is handled (as the inbox prefetches), each
 * batch's delete sent without waiting for it, deletes one after the other on their own connection.
 * Once stopped it ends after the claim in flight and the deletes sent, so that nothing is sent on
 * a connection being closed (the claim ahead keeps its rows leased: the bench is over).
 */
async function claimLoop<L>(
  claim: () => Promise<{ lease: L; rows: InboxMessage[] }>,
  remove: (ids: string[], lease: L) => Promise<unknown>,
  handler: RawHandler,
  stopped: () => boolean,
): Promise<void> {
  let deleting: Promise<unknown> = Promise.resolve();
  let next = claim();
  next.catch(() => undefined);
  try {
    while (!stopped()) {
      const { lease, rows } = await next;
      if (!rows.length) {
        await new Promise((r) => setTimeout(r, 50));
        next = claim();
        next.catch(() => undefined); // awaited below; not a rejection left unhandled meanwhile
        continue;
      }
      next = claim();
      next.catch(() => undefined);
      const ids: string[] = [];
      await Promise.all(
        rows.map(async (message) => {
          await handler(message);
          ids.push(message.id);
        }),
      );
      deleting = deleting.then(() => remove(ids, lease));
      deleting.catch(() => undefined); // awaited at the end
    }
  } finally {
    // Whatever ended the loop, the claim ahead and the deletes are answered before it returns.
    await Promise.allSettled([next, deleting]);
  }
  await deleting;
}

/**
 * Runs until `stop`, which lets the loop end (its claim in flight and its deletes answered)
 * before it closes the connections.
 */
function untilStopped(
  loop: (stopped: () => boolean) => Promise<void>,
  close: () => Promise<unknown>,
): RawInboxWorker {
  let stopped = false;
  const running = loop(() => stopped);
  // A failure before stop() ends the worker loudly; after it, stop() reports it.
  running.catch((error) => {
    if (!stopped) throw error;
  });
  return {
    stop: async () => {
      stopped = true;
      try {
        await running;
      } finally {
        await close();
      }
    },
  };
}

/** InnoDB's deadlock (1213) and lock wait timeout (1205): the statement or transaction is to be run again. */
const DEADLOCK_ERRNOS = new Set([1213, 1205]);

/** Runs `work` again while InnoDB refuses it with a deadlock (at most 5 tries). */
async function retryDeadlock<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 5 || !DEADLOCK_ERRNOS.has((error as { errno?: number }).errno ?? 0)) throw error;
    }
  }
}

const millis = (t: string) => `CAST(FLOOR(EXTRACT(EPOCH FROM ${t}) * 1000) AS BIGINT)`;

/**
 * PostgreSQL: the inbox's own claim written by hand (the oldest due rows locked with SKIP LOCKED
 * and leased in one UPDATE … RETURNING, by their address), prepared; the delete by ids and lease.
 */
export async function rawPostgresWorker(
  target: RawInboxTarget,
  handler: RawHandler,
): Promise<RawInboxWorker> {
  const { table, claimSize, location } = target;
  const now = `date_trunc('milliseconds', statement_timestamp())`;
  const claimSql =
    `WITH claimed AS (UPDATE ${table} SET NEXT_RETRY = CAST($1 AS TIMESTAMPTZ) WHERE ctid = ANY(ARRAY(` +
    `SELECT ctid FROM ${table} WHERE COALESCE((${DUE(now)}), FALSE) ORDER BY INSERTED, ID LIMIT ${claimSize} ` +
    `FOR UPDATE SKIP LOCKED)) RETURNING ID AS id, PAYLOAD_TYPE_NAMESPACE AS ns, PAYLOAD_TYPE_NAME AS name, ` +
    `PAYLOAD_TYPE_REVISION AS revision, PAYLOAD AS payload, ${millis('INSERTED')} AS inserted, RETRIES AS retries, ` +
    `INSERTED AS ord_inserted) SELECT id, ns, name, revision, payload, inserted, retries FROM claimed ` +
    `ORDER BY ord_inserted, id`;
  const deleteSql = `DELETE FROM ${table} WHERE ID = ANY($1::VARCHAR[]) AND NEXT_RETRY = CAST($2 AS TIMESTAMPTZ)`;
  const claims = new Client({ connectionString: location });
  const deletes = new Client({ connectionString: location });
  await Promise.all([claims.connect(), deletes.connect()]);
  return untilStopped(
    (stopped) =>
      claimLoop(
        async () => {
          const lease = new Date(Date.now() + LEASE_MS).toISOString();
          const r = await claims.query({ name: 'claim', text: claimSql, values: [lease] });
          return {
            lease,
            rows: r.rows.map((row: RawRow) => messageOf(row, new Date(Number(row.inserted)))),
          };
        },
        (ids, lease) => deletes.query({ name: 'delete', text: deleteSql, values: [ids, lease] }),
        handler,
        stopped,
      ),
    () => Promise.all([claims.end(), deletes.end()]),
  );
}

/**
 * MariaDB: a locking read of the oldest due rows through the delivery-order index with SKIP
 * LOCKED at READ COMMITTED (rows the WHERE refuses are not kept locked), the lease UPDATE of
 * those ids, COMMIT; the delete by ids and lease.
 */
export async function rawMariadbWorker(target: RawInboxTarget, handler: RawHandler): Promise<RawInboxWorker> {
  const { table, orderIndex, claimSize, location } = target;
  const now = 'UTC_TIMESTAMP(3)';
  const claimSql =
    `SELECT ID AS id, PAYLOAD_TYPE_NAMESPACE AS ns, PAYLOAD_TYPE_NAME AS name, PAYLOAD_TYPE_REVISION AS revision, ` +
    `PAYLOAD AS payload, INSERTED AS inserted, RETRIES AS retries FROM ${table} FORCE INDEX (${orderIndex}) ` +
    `WHERE ${DUE(now)} ORDER BY INSERTED, ID LIMIT ${claimSize} FOR UPDATE SKIP LOCKED`;
  const claims = await mysql.createConnection({ uri: location, timezone: 'Z' });
  const deletes = await mysql.createConnection({ uri: location, timezone: 'Z' });
  await claims.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
  const claimOnce = async () => {
    const lease = new Date(Date.now() + LEASE_MS);
    await claims.beginTransaction();
    try {
      const [rows] = (await claims.query(claimSql)) as unknown as [RawRow[]];
      if (rows.length)
        await claims.query(`UPDATE ${table} SET NEXT_RETRY = ? WHERE ID IN (?)`, [
          lease,
          rows.map((r) => r.id),
        ]);
      await claims.commit();
      return { lease, rows: rows.map((row) => messageOf(row, row.inserted as Date)) };
    } catch (error) {
      await claims.rollback().catch(() => undefined);
      throw error;
    }
  };
  return untilStopped(
    (stopped) =>
      claimLoop(
        // InnoDB may pick the claim as a deadlock's victim (its locking read beside another
        // worker's delete of neighbouring index entries): the transaction is rolled back whole,
        // so it is claimed again, as anyone writing this by hand has to.
        () => retryDeadlock(claimOnce),
        (ids, lease) =>
          retryDeadlock(() =>
            deletes.query(`DELETE FROM ${table} WHERE ID IN (?) AND NEXT_RETRY = ?`, [ids, lease]),
          ),
        handler,
        stopped,
      ),
    () => Promise.all([claims.end(), deletes.end()]),
  );
}

/**
 * SQLite: one UPDATE … RETURNING leases the oldest due rows (the write lock lasts that statement),
 * sorted into delivery order here; the delete by ids and lease. Statements run synchronously, so
 * a claim waits for the batch before it; one process delivers (SQLite has one writer).
 */
export async function rawSqliteWorker(target: RawInboxTarget, handler: RawHandler): Promise<RawInboxWorker> {
  const { table, claimSize, location } = target;
  const db = new Database(location, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  const now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
  const claim = db.prepare(
    `UPDATE ${table} SET NEXT_RETRY = ? WHERE ID IN (SELECT ID FROM ${table} WHERE ${DUE(now)} ` +
      `ORDER BY INSERTED, ID LIMIT ${claimSize}) RETURNING ID AS id, PAYLOAD_TYPE_NAMESPACE AS ns, ` +
      `PAYLOAD_TYPE_NAME AS name, PAYLOAD_TYPE_REVISION AS revision, PAYLOAD AS payload, INSERTED AS inserted, ` +
      `RETRIES AS retries`,
  );
  const deletes = new Map<number, Database.Statement>();
  const remove = (ids: string[], lease: string) => {
    let statement = deletes.get(ids.length);
    if (!statement)
      deletes.set(
        ids.length,
        (statement = db.prepare(
          `DELETE FROM ${table} WHERE ID IN (${ids.map(() => '?').join(', ')}) AND NEXT_RETRY = ?`,
        )),
      );
    statement.run(...ids, lease);
  };
  const byOrder = (a: RawRow, b: RawRow) =>
    a.inserted < b.inserted ? -1 : a.inserted > b.inserted ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return untilStopped(
    async (stopped) => {
      while (!stopped()) {
        const lease = new Date(Date.now() + LEASE_MS).toISOString();
        const rows = (claim.all(lease) as RawRow[]).sort(byOrder);
        if (!rows.length) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        const ids: string[] = [];
        await Promise.all(
          rows.map(async (row) => {
            await handler(messageOf(row, new Date(row.inserted as string)));
            ids.push(row.id);
          }),
        );
        remove(ids, lease);
      }
    },
    async () => db.close(),
  );
}
