import type { DataSource, QueryRunner } from 'typeorm';
import {
  boundedWait,
  ConnectionTrust,
  destroyRunnerConnection,
  driverConnectionOf,
} from './connection-bound';
import { SqlTimeoutError } from '../errors/holdfast.error';
import type { PooledConnection, StatementResult } from './driver-channel';

/** Suspect connections destroyed in a row at one checkout before the next is taken as it comes. */
const MAX_SUSPECT_CHECKOUTS = 64;

/** The runners whose connection a bounded client destroyed, shared by the clients of a DataSource. */
const destroyedByDataSource = new WeakMap<DataSource, WeakSet<QueryRunner>>();

function destroyedRunners(dataSource: DataSource): WeakSet<QueryRunner> {
  let set = destroyedByDataSource.get(dataSource);
  if (!set) destroyedByDataSource.set(dataSource, (set = new WeakSet()));
  return set;
}

/**
 * A SqlClient's connections and the bound on its waits (`SqlClientOptions.statementTimeout`): the
 * wait for a pooled connection and each answer, the destruction of a connection whose answer did
 * not come, and the distrust of the pooled connections that have not answered since.
 */
export class BoundedConnections {
  private readonly trust?: ConnectionTrust;
  /** Runners whose connection a client of this DataSource destroyed (nothing more is sent on them). */
  private readonly destroyed: WeakSet<QueryRunner>;

  constructor(
    private readonly dataSource: DataSource,
    /** Milliseconds of each wait (0: no bound). */
    readonly timeoutMs: number,
  ) {
    if (timeoutMs > 0) this.trust = ConnectionTrust.of(dataSource);
    this.destroyed = destroyedRunners(dataSource);
  }

  /** True when the bound destroyed `runner`'s connection: it is neither used nor released again. */
  isDestroyed(runner: QueryRunner): boolean {
    return this.destroyed.has(runner);
  }

  /** Gives `runner` back to the pool, unless its connection was destroyed. */
  async release(runner: QueryRunner): Promise<void> {
    if (!this.destroyed.has(runner)) await runner.release();
  }

  /** Waits for `opening` (a pool being connected) within the bound. */
  async open(opening: Promise<void>): Promise<void> {
    if (this.timeoutMs > 0) await boundedWait(opening, this.timeoutMs, 'connection', () => undefined);
    else await opening;
  }

  /**
   * A QueryRunner with a connection of the pool; with a bound, the wait for it is bounded and a
   * connection that has not answered since the last timeout is destroyed instead of used.
   */
  async connectRunner(): Promise<QueryRunner> {
    const ms = this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const runner = this.dataSource.createQueryRunner();
      const connecting = runner.connect();
      try {
        if (ms <= 0) await connecting;
        else
          await boundedWait(connecting, ms, 'connection', () => {
            // A connection handed out after we gave up goes back to the pool.
            connecting.then(
              () => runner.release(),
              () => undefined,
            );
          });
      } catch (error) {
        if (!(error instanceof SqlTimeoutError)) await runner.release().catch(() => undefined);
        throw error;
      }
      if (ms <= 0) return runner;
      if (attempt < MAX_SUSPECT_CHECKOUTS && !this.trust!.trusted(driverConnectionOf(runner))) {
        this.destroyed.add(runner);
        destroyRunnerConnection(runner, 'suspect connection destroyed');
        continue;
      }
      return runner;
    }
  }

  /**
   * `work`, a call on `runner`'s connection, within the bound (when set): past it the connection
   * is destroyed and nothing more is sent on it.
   */
  guard<R>(runner: QueryRunner, work: Promise<R>): Promise<R> {
    if (this.destroyed.has(runner)) {
      work.catch(() => undefined);
      return Promise.reject(new SqlTimeoutError('answer', this.timeoutMs));
    }
    if (this.timeoutMs <= 0) return work;
    return boundedWait(work, this.timeoutMs, 'answer', () => {
      this.trust!.timedOut();
      this.destroyed.add(runner);
      destroyRunnerConnection(runner, 'statementTimeout passed');
    }).then(
      (result) => {
        this.trust!.answered(driverConnectionOf(runner));
        return result;
      },
      (error: unknown) => {
        // An error from the server is an answer too; a timeout is not.
        if (!(error instanceof SqlTimeoutError)) this.trust!.answered(driverConnectionOf(runner));
        throw error;
      },
    );
  }

  /** One statement on a runner of its own, outside a transaction, each wait within the bound. */
  async runOnRunner(sql: string, params: readonly unknown[]): Promise<StatementResult> {
    const runner = await this.connectRunner();
    try {
      return await this.guard(runner, runner.query(sql, params as unknown[], true));
    } finally {
      await this.release(runner);
    }
  }

  /**
   * One statement on a connection checked out of the driver's pool (`checkout`), outside a
   * transaction, each wait within the bound (which must be set).
   */
  async runPooled(
    checkout: () => Promise<PooledConnection>,
    sql: string,
    params: readonly unknown[],
    prepared?: boolean,
  ): Promise<StatementResult> {
    const ms = this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const pending = checkout();
      const pooled = await boundedWait(pending, ms, 'connection', () => {
        // A connection handed out after we gave up goes back to the pool.
        pending.then(
          (late) => late.release(),
          () => undefined,
        );
      });
      if (attempt < MAX_SUSPECT_CHECKOUTS && !this.trust!.trusted(pooled.connection)) {
        pooled.destroy();
        continue;
      }
      let result: StatementResult;
      try {
        result = await boundedWait(pooled.run(sql, params, prepared), ms, 'answer', () => {
          this.trust!.timedOut();
          pooled.destroy();
        });
      } catch (error) {
        if (!(error instanceof SqlTimeoutError)) {
          this.trust!.answered(pooled.connection);
          pooled.release();
        }
        throw error;
      }
      this.trust!.answered(pooled.connection);
      pooled.release();
      return result;
    }
  }
}
