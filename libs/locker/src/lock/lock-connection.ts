import {
  declarePoolNeed,
  destroyRunnerConnection,
  SqlClient,
  watchRunnerSocket,
  withTimeout,
} from '@holdfast/core/kit';
import type { QueryRunner } from 'typeorm';
import { LockStatementTimeoutError } from '../errors';

/**
 * The one connection a database locker runs on: taken from the DataSource's pool once and kept
 * (reserved), so the lock's statements never queue behind the application's work on a busy pool,
 * and never returned to the pool: a connection that held the lock, timed out or failed is
 * destroyed (its socket closed), so a broken or session-modified connection is never reused and
 * the server sees the session end at once. Every wait is bounded: the wait for a pooled
 * connection and each statement; past the bound the connection is destroyed.
 */
export class LockConnection {
  private runner?: QueryRunner;
  private client?: SqlClient;
  /** Statements running on each connection, and connections to close once theirs have settled. */
  private readonly inFlight = new Map<QueryRunner, number>();
  private readonly retired = new Set<QueryRunner>();
  /** Called when the reserved connection's socket closes under us (not when we destroy it). */
  onClosed?: () => void;

  constructor(
    /** The module's client: the reserved connection is taken from its DataSource's pool. */
    private readonly shared: SqlClient,
    private readonly timeoutMs: number,
  ) {}

  get connected(): boolean {
    return this.runner !== undefined;
  }

  /** The reserved QueryRunner (for transaction control), while connected. */
  get queryRunner(): QueryRunner | undefined {
    return this.runner;
  }

  /** The reserved connection as a SqlClient, connecting first (bounded) when there is none. */
  async sql(): Promise<SqlClient> {
    if (this.client) return this.client;
    const runner = this.shared.dataSource.createQueryRunner();
    const connecting = runner.connect();
    try {
      await this.bounded(connecting, 'Waiting for a pooled connection for the lock');
    } catch (error) {
      // A connection handed out after we gave up must not leak out of the pool.
      connecting.then(
        () => runner.release(),
        () => undefined,
      );
      throw error;
    }
    this.runner = runner;
    this.client = new SqlClient(this.shared.dataSource, this.shared.dialect, runner);
    // TCP keepalive on the lock's socket: a dead peer is noticed even while the lock sits idle.
    watchRunnerSocket(runner, {
      keepAliveMs: 1_000,
      onClose: () => {
        if (this.runner !== runner) return; // destroyed by us
        this.destroy();
        this.onClosed?.();
      },
    });
    return this.client;
  }

  /** Runs `work` on the reserved connection within the bound; a timeout or error destroys it. */
  async run<T>(what: string, work: (sql: SqlClient) => Promise<T>): Promise<T> {
    let sql = await this.sql();
    // Destroyed or retired while this call waited its turn (a lease released by stop() while a
    // holder() read was starting): a closed mysql2 connection never answers, so take a new one.
    while (sql !== this.client) sql = await this.sql();
    const runner = this.runner!;
    this.inFlight.set(runner, (this.inFlight.get(runner) ?? 0) + 1);
    try {
      return await this.bounded(work(sql), what);
    } catch (error) {
      if (this.runner === runner) this.destroy();
      else if (this.retired.delete(runner)) this.close(runner);
      throw error;
    } finally {
      const left = (this.inFlight.get(runner) ?? 1) - 1;
      if (left > 0) this.inFlight.set(runner, left);
      else {
        this.inFlight.delete(runner);
        if (this.retired.delete(runner)) this.close(runner);
      }
    }
  }

  /** Closes the socket and drops the connection from the pool; never waits on the network. */
  destroy(): void {
    const runner = this.runner;
    this.runner = undefined;
    this.client = undefined;
    if (runner) this.close(runner);
  }

  /**
   * The normal end of a lock's connection (a released lease): the next `run` opens a new one at
   * once, and this one is destroyed as soon as the statements already sent on it have settled. A
   * destroyed mysql2 connection never answers what was queued on it, so destroying it under a
   * read that was waiting its turn (a `holder()` right after a demotion) would hang that read
   * until its bound.
   */
  retire(): void {
    const runner = this.runner;
    this.runner = undefined;
    this.client = undefined;
    if (!runner) return;
    if (this.inFlight.has(runner)) this.retired.add(runner);
    else this.close(runner);
  }

  /** Closes the socket and gives the connection up (never back to the pool for reuse). */
  private close(runner: QueryRunner): void {
    destroyRunnerConnection(runner, 'lock connection destroyed');
  }

  private bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    return withTimeout(promise, this.timeoutMs, () => {
      throw new LockStatementTimeoutError(what, this.timeoutMs);
    });
  }
}

/** The lockers on PostgreSQL/MySQL/MariaDB keep one pooled connection each (LockConnection). */
export function declareLockConnection(sql: SqlClient, lockName: string): void {
  declarePoolNeed(sql, { component: `locker '${lockName}'`, connections: 1, reserved: true });
}
