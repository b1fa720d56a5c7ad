import {
  HoldfastTimers,
  monotonicMillis,
  sqlRetryCounter,
  toNumber,
  withTimeout,
  withTransientRetry,
  type SqlClient,
  type Statement,
  type StatementOptions,
} from '@holdfast/core/kit';

import { ContenderIdTooLongError, MutexStatementTimeoutError } from '../errors';
import type { AcquireResult, BatchRequest, BatchSource } from './mutex-batch';
import { MutexContendLoop } from './mutex-contend.loop';
import { MutexOwner } from './mutex-owner';
import { MutexQueryResolver, type TickStatements } from '../store/mutex-query.resolver';

/** `holdfast.simba.sql.retries`: ticks retried after a deadlock or serialization failure. */
const countRetry = sqlRetryCounter('simba');

/** A `simba_mutex` row as the repositories select it, with the database clock's `now_ms`. */
export interface MutexRowRecord {
  mutex?: unknown;
  owner_id: unknown;
  acquired_at: unknown;
  ttl_at: unknown;
  transition_at: unknown;
  version: unknown;
  now_ms: unknown;
}

export type { AcquireResult, BatchRequest } from './mutex-batch';

/** Mutexes per statement in a batch: keeps every statement well under each driver's parameter limit. */
const BATCH_CHUNK = 500;

function chunks<T>(items: readonly T[], size = BATCH_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Where a tick is (for the timeout's message) and when its connection came. */
interface TickClock {
  stage: 'connection' | 'answer';
  txStarted: number;
  answerStarted: number;
  connectMs: number;
}

/**
 * Runs the `simba_mutex` statements with a timeout on every call: server-side where the
 * database has one (PostgreSQL, MariaDB) and always client-side, so a connection that hangs
 * (a network partition) cannot keep a caller waiting past the transition.
 */
export class MutexRepository implements BatchSource {
  private readonly ensured = new Set<string>();
  private _loop?: MutexContendLoop;
  private graceMarked = false;
  /** The declared length of the live `owner_id` column, set by SimbaConnection at startup. */
  ownerIdColumnLength?: number;

  constructor(
    readonly sql: SqlClient,
    readonly queries: MutexQueryResolver,
    readonly statementTimeoutMs: number,
    /** The module's timers (the tick loop and the owners' deadlines). */
    readonly timers: HoldfastTimers = new HoldfastTimers(),
  ) {}

  /** The loop that batches the attempts of every contend service on this repository. */
  get loop(): MutexContendLoop {
    return (this._loop ??= new MutexContendLoop(this, undefined, this.timers));
  }

  /**
   * One tick of many contend services: creates missing rows, then the tick's statements
   * (`MutexQueryResolver.tick`): every acquire and renewal (Simba's condition per row) and a read
   * of every row asked about, with the database clock; on PostgreSQL and MariaDB in one round
   * trip. Returns the rows and how long the connection took to come and the whole call took.
   */
  batch(
    requests: readonly BatchRequest[],
    timeoutMs = this.statementTimeoutMs,
  ): Promise<{ rows: Map<string, MutexOwner>; timing: { connectMs: number; totalMs: number } }> {
    const label = requests.length === 1 ? requests[0].mutex : `${requests.length} mutexes`;
    const clock: TickClock = { stage: 'answer', txStarted: 0, answerStarted: 0, connectMs: 0 };
    return this.bounded(
      label,
      'acquire/renew/read',
      async () => {
        const acquires = requests.filter((r) => r.attempt === 'acquire');
        const missing = [...new Set(acquires.map((r) => r.mutex))].filter((m) => !this.ensured.has(m));
        for (const part of chunks(missing)) {
          await this.insertRows(part);
          part.forEach((m) => this.ensured.add(m));
        }
        if (acquires.length) await this.markTimeline();
        const tick = this.queries.tick(
          acquires,
          [...new Set(requests.map((r) => r.mutex))],
          acquires.length ? Math.max(...acquires.map((r) => r.ttl + r.transition)) : 0,
          this.statementTimeoutMs,
        );
        // Creating rows (once per mutex) is not part of what a tick costs.
        clock.txStarted = clock.answerStarted = monotonicMillis();
        clock.connectMs = 0;
        clock.stage = 'connection';
        const run = this.stepRunner(tick, clock);
        const rows = await withTransientRetry(() => this.onConnection(tick.alone, run), {
          operation: 'tick',
          onRetry: countRetry,
        });
        // A row someone deleted is created again at the next attempt; a row read exists.
        for (const r of acquires) if (!rows.has(r.mutex)) this.ensured.delete(r.mutex);
        for (const mutex of rows.keys()) this.ensured.add(mutex);
        return {
          rows,
          timing: { connectMs: clock.connectMs, totalMs: monotonicMillis() - clock.answerStarted },
        };
      },
      timeoutMs,
      () => clock.stage,
    );
  }

  /**
   * Sends a tick's steps on one connection and returns the rows they read; notes in `clock` when
   * the connection came (the answer stage starts there).
   */
  private stepRunner(
    tick: TickStatements,
    clock: TickClock,
  ): (connection: SqlClient) => Promise<Map<string, MutexOwner>> {
    return async (connection) => {
      clock.stage = 'answer';
      clock.answerStarted = monotonicMillis();
      clock.connectMs = clock.answerStarted - clock.txStarted;
      const found = new Map<string, MutexOwner>();
      for (const [i, step] of tick.steps.entries()) {
        // In a transaction, the last statement goes with the COMMIT (MariaDB: one round trip).
        const records = await connection.query<MutexRowRecord>(step.statement, {
          commit: i === tick.steps.length - 1,
        });
        if (step.read) for (const record of records) found.set(String(record.mutex), this.toOwner(record));
      }
      return found;
    };
  }

  /**
   * Where connections come from a pool, a tick always takes one first (a session, or a
   * transaction), so that waiting for the pool is told apart from waiting for the database.
   */
  private onConnection<T>(alone: boolean, run: (connection: SqlClient) => Promise<T>): Promise<T> {
    return !alone
      ? this.inTransaction(true, run)
      : this.sql.dialect.singleConnection
        ? run(this.sql)
        : this.sql.session(run);
  }

  private async insertRows(mutexes: string[]): Promise<void> {
    const insert = () =>
      this.inTransaction(false, (tx) => this.execute(tx, this.queries.ensureRows(mutexes)));
    try {
      await insert();
    } catch {
      // Concurrent first inserts of one key can deadlock on InnoDB; the rows exist afterwards.
      await insert();
    }
  }

  /** One acquire-or-renew attempt: conditional UPDATE then SELECT, in one transaction. */
  acquire(mutex: string, contenderId: string, ttlMs: number, transitionMs: number): Promise<AcquireResult> {
    return this.bounded(mutex, 'acquire', async () => {
      if (!this.ensured.has(mutex)) {
        await this.ensureRow(mutex);
        this.ensured.add(mutex);
      }
      await this.markTimeline();
      return this.inTransaction(true, async (tx) => {
        await this.afterFailover(tx, ttlMs + transitionMs);
        const changed = await this.execute(tx, this.queries.acquire(mutex, contenderId, ttlMs, transitionMs));
        const owner = await this.readOwner(tx, mutex);
        if (!owner) {
          // Someone deleted the row: create it again next time.
          this.ensured.delete(mutex);
          return { acquired: false, owner: MutexOwner.NONE };
        }
        return { acquired: changed === 1 && owner.ownerId === contenderId, owner };
      });
    });
  }

  /** Releases the mutex if `contenderId` owns it; true when a row changed. */
  release(mutex: string, contenderId: string): Promise<boolean> {
    return this.bounded(mutex, 'release', () =>
      this.inTransaction(
        false,
        async (tx) => (await this.execute(tx, this.queries.release(mutex, contenderId))) > 0,
      ),
    );
  }

  /** The current row (or NONE when there is none yet), read with the database clock. */
  peek(mutex: string): Promise<MutexOwner> {
    return this.bounded(mutex, 'read', () =>
      this.inTransaction(false, async (tx) => (await this.readOwner(tx, mutex)) ?? MutexOwner.NONE),
    );
  }

  /**
   * Throws ContenderIdTooLongError when `contenderId` does not fit the live `owner_id` column
   * (known once the module checked its table at startup).
   */
  assertContenderFits(contenderId: string, mutex: string): void {
    if (this.ownerIdColumnLength !== undefined && contenderId.length > this.ownerIdColumnLength) {
      throw new ContenderIdTooLongError(contenderId, mutex, this.queries.table, this.ownerIdColumnLength);
    }
  }

  /** The owners of a spread group's live member rows (see MutexSpread), read with the database clock. */
  members(group: string): Promise<string[]> {
    return this.bounded('-', 'member read', async () => {
      const s = this.queries.timed(this.queries.selectMembers(group), this.statementTimeoutMs);
      const rows = await this.sql.query<{ owner_id: unknown }>(s);
      return rows.map((r) => String(r.owner_id).trimEnd());
    });
  }

  /** The database clock (health check). */
  now(): Promise<number> {
    return this.bounded('-', 'clock read', () =>
      this.inTransaction(false, async (tx) => {
        const [row] = await this.query<{ now_ms: unknown }>(tx, this.queries.now());
        return toNumber(row.now_ms);
      }),
    );
  }

  /** Creates the timeline marker row once (PostgreSQL). */
  private async markTimeline(): Promise<void> {
    const marker = this.queries.grace.ensureMarker();
    if (this.graceMarked || !marker) return;
    await this.inTransaction(false, (tx) => this.execute(tx, marker));
    this.graceMarked = true;
  }

  /** Before a grant (PostgreSQL): starts the grace of `graceMs` if the server was promoted since the last write. */
  private async afterFailover(tx: SqlClient, graceMs: number): Promise<void> {
    const check = this.queries.grace.check(graceMs);
    if (check) await this.execute(tx, check);
  }

  private async ensureRow(mutex: string): Promise<void> {
    const insert = () =>
      this.inTransaction(false, (tx) => this.execute(tx, this.queries.ensureRows([mutex])));
    try {
      await insert();
    } catch {
      // Concurrent first inserts of one key can deadlock on InnoDB; the row exists afterwards.
      await insert();
    }
  }

  private async readOwner(tx: SqlClient, mutex: string): Promise<MutexOwner | undefined> {
    const [row] = await this.query<MutexRowRecord>(tx, this.queries.select(mutex));
    return row ? this.toOwner(row) : undefined;
  }

  private toOwner(row: MutexRowRecord): MutexOwner {
    return new MutexOwner(
      // CHAR(32) (Simba's DDL) comes back space-padded from PostgreSQL.
      row.owner_id == null ? '' : String(row.owner_id).trimEnd(),
      toNumber(row.acquired_at),
      toNumber(row.ttl_at),
      toNumber(row.transition_at),
      toNumber(row.version),
      toNumber(row.now_ms),
    );
  }

  /** Runs `s` on `tx`, bounded server-side where the database can (MutexQueryResolver.timed). */
  private execute(tx: SqlClient, s: Statement): Promise<number> {
    const timed = this.queries.timed(s, this.statementTimeoutMs);
    return tx.execute(timed);
  }

  /** As `execute`, for a statement that returns rows. */
  private query<T>(tx: SqlClient, s: Statement, options?: StatementOptions): Promise<T[]> {
    const timed = this.queries.timed(s, this.statementTimeoutMs);
    return tx.query<T>(timed, options);
  }

  /**
   * Writes always run in a transaction; reads only where the timeout needs one (PostgreSQL's
   * transaction-scoped setting), so SQLite standbys do not take the write lock to look.
   */
  private inTransaction<T>(write: boolean, work: (tx: SqlClient) => Promise<T>): Promise<T> {
    const setup = this.queries.transactionTimeout(this.statementTimeoutMs);
    if (!write && !setup) return work(this.sql);
    return this.sql.transaction(async (tx) => {
      if (setup) await tx.query(setup);
      return work(tx);
    });
  }

  private bounded<T>(
    mutex: string,
    operation: string,
    work: () => Promise<T>,
    timeoutMs = this.statementTimeoutMs,
    waitingFor: () => 'connection' | 'answer' = () => 'answer',
  ): Promise<T> {
    return withTimeout(work, timeoutMs, () => {
      throw new MutexStatementTimeoutError(mutex, operation, timeoutMs, waitingFor());
    });
  }
}
