import { Mutex } from 'async-mutex';
import type { DataSource, QueryRunner } from 'typeorm';
import { SqlDialect } from '../dialect/sql-dialect';
import { parseDuration, type Duration } from '../time/duration';
import { InvalidOptionsError } from '../errors/holdfast.error';
import {
  DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  finishTransaction,
  ISOLATION_LEVELS,
  needsSessionReset,
  openBoundedTransaction,
  resetBoundedSession,
  runInTransaction,
  type IsolationLevel,
} from './transaction-bound';
import {
  directChannel,
  type DriverChannel,
  type StatementResult,
  type SyncRowReader,
} from './driver-channel';
import {
  boundedWait,
  ConnectionTrust,
  destroyRunnerConnection,
  driverConnectionOf,
  SqlTimeoutError,
} from './connection-bound';
import type { CoordinationPool } from './coordination-pool';

type Row = Record<string, unknown>;

/** One in-process gate per SQLite DataSource: TypeORM shares one connection between runners. */
const sqliteGates = new WeakMap<DataSource, Mutex>();
/** One direct channel per DataSource (it owns a prepared-statement cache on SQLite). */
const channels = new WeakMap<DataSource, DriverChannel | null>();

function channelFor(dataSource: DataSource): DriverChannel | undefined {
  if (!channels.has(dataSource)) channels.set(dataSource, directChannel(dataSource) ?? null);
  return channels.get(dataSource) ?? undefined;
}

function sqliteGate(dataSource: DataSource): Mutex {
  let gate = sqliteGates.get(dataSource);
  if (!gate) sqliteGates.set(dataSource, (gate = new Mutex()));
  return gate;
}

/** BIGINT and DECIMAL come back as strings from mysql2 and pg: converted here, in one place. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '') return Number(value);
  if (value === null || value === undefined) return NaN;
  return Number(value);
}

export interface SqlClientOptions {
  /**
   * How long the server lets a transaction of this client sit idle (the client sending nothing
   * inside it) before it ends the transaction and its connection, releasing its locks: a frozen
   * or partitioned process holds nobody's rows for longer. Milliseconds or a string like '30s';
   * 0 turns the bound off. Default 30 s. PostgreSQL `idle_in_transaction_session_timeout`
   * (SET LOCAL), MariaDB `idle_transaction_timeout`, MySQL `wait_timeout` (whole seconds, rounded up).
   */
  idleInTransactionTimeout?: Duration;
  /**
   * A client-side bound on every wait of this client on a server database (PostgreSQL, MySQL,
   * MariaDB; SQLite has no network to wait on): the wait for a pooled connection, and each
   * statement's answer, BEGIN and COMMIT included. A wait past it fails with a `SqlTimeoutError`;
   * a statement that timed out has its connection's socket destroyed (never returned to the pool,
   * nothing more sent on it; a transaction on it is rolled back by the server when it sees the
   * socket close, or by its idle bound), and the pooled connections that have not answered since
   * are destroyed when next checked out, so one silent network path costs one bound, not one per
   * connection. Milliseconds or a string like '10s'; 0 (default) turns the bound off.
   */
  statementTimeout?: Duration;
}

const BOUNDED_DIALECTS: readonly string[] = ['postgres', 'mysql', 'mariadb'];
/** Suspect connections destroyed in a row at one checkout before the next is taken as it comes. */
const MAX_SUSPECT_CHECKOUTS = 64;

/** Options of one statement run by `SqlClient.query` or `execute`. */
export interface StatementOptions {
  /**
   * A hot statement of fixed text, run again and again: PostgreSQL keeps it parsed and planned
   * per pooled connection (a named statement, see PgStatementNames), outside transactions. No
   * effect on other databases (SQLite statements are always kept compiled) or in a transaction.
   */
  prepared?: boolean;
  /**
   * In a `transaction()`: this is its last statement. MariaDB sends it together with the COMMIT
   * (one round trip for both); elsewhere the COMMIT follows as usual. Anything the transaction's
   * work runs after it runs outside the transaction.
   */
  commit?: boolean;
}

/** Options of one `SqlClient.transaction()`. */
export interface TransactionOptions {
  /**
   * The transaction's isolation level: 'read committed', 'repeatable read' or 'serializable'
   * (default: the session's, which is the server's). SQLite's transactions are always
   * serializable, which satisfies any level asked for.
   */
  isolation?: IsolationLevel;
}

/**
 * Holdfast's way to run SQL through the application's DataSource: raw statements with bound
 * parameters, affected-row counts, transactions, and the database clock. On SQLite it
 * serializes access (one shared connection) and opens write transactions with BEGIN IMMEDIATE
 * so that several processes on one file wait for each other instead of failing.
 */
export class SqlClient {
  private readonly gate?: Mutex;
  /** Set once the DataSource is connected (at once, unless it is a coordination pool not opened yet). */
  private channel?: DriverChannel;
  /** True once `coordination`, when there is one, is connected. */
  private opened: boolean;

  /** Milliseconds after which the server ends a transaction whose client went quiet (0: never). */
  readonly idleInTransactionTimeout: number;
  /** Milliseconds this client waits for a pooled connection or an answer (0: no bound). */
  readonly statementTimeout: number;
  private readonly trust?: ConnectionTrust;
  /** Runners whose connection this client destroyed (nothing more is sent on them). */
  private readonly destroyed: WeakSet<QueryRunner>;

  constructor(
    readonly dataSource: DataSource,
    readonly dialect: SqlDialect,
    private readonly runner?: QueryRunner,
    private readonly options: SqlClientOptions = {},
    private readonly insideTransaction = false,
    /** The module's own pool behind `dataSource`, connected on this client's first statement. */
    private readonly coordination?: CoordinationPool,
  ) {
    if (!runner && dialect.name === 'sqlite') this.gate = sqliteGate(dataSource);
    this.opened = !coordination || coordination.isOpen;
    if (!runner && this.opened) this.channel = channelFor(dataSource);
    this.idleInTransactionTimeout = parseDuration(
      options.idleInTransactionTimeout ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      'idleInTransactionTimeout',
    );
    const bound = parseDuration(options.statementTimeout ?? 0, 'statementTimeout');
    this.statementTimeout = BOUNDED_DIALECTS.includes(dialect.name) ? bound : 0;
    if (this.statementTimeout > 0) this.trust = ConnectionTrust.of(dataSource);
    this.destroyed = destroyedRunners(dataSource);
  }

  /** True on the client a `transaction()` hands to its work. */
  get inTransaction(): boolean {
    return this.insideTransaction;
  }

  /** Runs a SELECT (or a statement with RETURNING) and returns its rows. */
  query<T = Row>(sql: string, params: readonly unknown[] = [], options?: StatementOptions): Promise<T[]> {
    const result = this.run(sql, params, options?.prepared, options?.commit);
    return result instanceof Promise
      ? result.then((r) => (r.records ?? []) as T[])
      : Promise.resolve((result.records ?? []) as T[]);
  }

  /**
   * The rows at once, when the statement can run synchronously now: SQLite, outside a
   * transaction, with no transaction holding the shared connection. Undefined otherwise (use
   * `query`). Lets a hot read skip the promise hops a driver call needs on other databases.
   */
  querySync<T = Row>(sql: string, params: readonly unknown[] = []): T[] | undefined {
    const channel = this.channel;
    if (!channel?.runSync || !this.gate || this.gate.isLocked()) return undefined;
    return (channel.runSync(sql, params).records ?? []) as T[];
  }

  /**
   * True when statements can sometimes run synchronously (`querySync`, `executeSync`): SQLite,
   * outside a transaction.
   */
  get runsSynchronously(): boolean {
    return this.channel?.runSync !== undefined && this.gate !== undefined;
  }

  /**
   * `execute` at once, when the statement can run synchronously now (as `querySync`): the rows
   * it changed, or undefined when it cannot (use `execute`). Lets a hot write skip the promise
   * hops a driver call needs on other databases. A driver error is thrown, not returned.
   */
  executeSync(sql: string, params: readonly unknown[] = []): number | undefined {
    const channel = this.channel;
    if (!channel?.runSync || !this.gate || this.gate.isLocked()) return undefined;
    return this.dialect.affectedRows(channel.runSync(sql, params));
  }

  /**
   * A point read for hot paths, compiled once: `row(params)` answers with the first row as an
   * array of column values (in `columns` order) or null, synchronously, when the statement can
   * run now (as `querySync`), and undefined when it cannot (use `query`). Undefined for a
   * database that cannot read synchronously (anything but SQLite) or inside a transaction.
   */
  rowReader(sql: string): SqlRowReader | undefined {
    const channel = this.channel;
    const gate = this.gate;
    if (!channel?.rowReader || !gate) return undefined;
    const reader = channel.rowReader(sql);
    return {
      columns: reader.columns,
      row: (params) => (gate.isLocked() ? undefined : reader.row(params)),
    };
  }

  /** Runs a write statement and returns the number of rows it changed. */
  execute(sql: string, params: readonly unknown[] = [], options?: StatementOptions): Promise<number> {
    const result = this.run(sql, params, options?.prepared, options?.commit);
    return result instanceof Promise
      ? result.then((r) => this.dialect.affectedRows(r))
      : Promise.resolve(this.dialect.affectedRows(result));
  }

  /** The database clock in epoch milliseconds. */
  async nowMillis(): Promise<number> {
    const [row] = await this.query<{ now: unknown }>(
      this.dialect.selectRow(`${this.dialect.nowMillis} AS now`),
    );
    return toNumber(row.now);
  }

  /**
   * Runs `work` in one transaction on one connection; rolls back if it throws. The server ends
   * the transaction if this client sends nothing inside it for `idleInTransactionTimeout`.
   * `options.isolation` sets its isolation level. Inside a transaction, `work` runs in the
   * enclosing one (whose level it cannot change).
   */
  async transaction<T>(work: (tx: SqlClient) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const isolation = options.isolation;
    if (isolation !== undefined && !(ISOLATION_LEVELS as readonly unknown[]).includes(isolation)) {
      throw new InvalidOptionsError('SqlClient.transaction', [
        `isolation must be one of ${ISOLATION_LEVELS.map((l) => `'${l}'`).join(', ')}, got ${JSON.stringify(isolation)}`,
      ]);
    }
    if (this.runner) return work(this);
    if (!this.opened) await this.open();
    const dialect = this.dialect.name;
    const idle = this.idleInTransactionTimeout;
    const exec = async () => {
      const runner = await this.connectRunner();
      let releasing = false;
      try {
        // MariaDB: sent with the first statement (see openBoundedTransaction).
        await this.guard(runner, openBoundedTransaction(runner, dialect, idle, isolation));
        let result: T;
        try {
          result = await work(new SqlClient(this.dataSource, this.dialect, runner, this.options, true));
          await this.guard(runner, finishTransaction(runner, dialect, 'commit'));
        } catch (error) {
          if (
            !this.destroyed.has(runner) &&
            (await this.guard(runner, finishTransaction(runner, dialect, 'rollback')).catch(() => false))
          )
            await this.guard(runner, resetBoundedSession(runner, dialect, idle)).catch(() => undefined);
          throw error;
        }
        if (needsSessionReset(dialect, idle)) {
          // The outcome is settled at COMMIT: the caller goes on while the connection's session
          // is reset, and the connection returns to the pool after that.
          releasing = true;
          void this.guard(runner, resetBoundedSession(runner, dialect, idle))
            .then(() => runner.release())
            .catch(() => undefined);
        }
        return result;
      } finally {
        if (!releasing && !this.destroyed.has(runner)) await runner.release();
      }
    };
    return this.gate ? this.gate.runExclusive(exec) : exec();
  }

  /**
   * Runs `work` on one connection of the pool, outside any transaction: for session state such
   * as MySQL's GET_LOCK, which belongs to the connection that took it.
   */
  async session<T>(work: (connection: SqlClient) => Promise<T>): Promise<T> {
    if (this.runner) return work(this);
    if (!this.opened) await this.open();
    const exec = async () => {
      const runner = await this.connectRunner();
      try {
        return await work(new SqlClient(this.dataSource, this.dialect, runner, this.options));
      } finally {
        if (!this.destroyed.has(runner)) await runner.release();
      }
    };
    return this.gate ? this.gate.runExclusive(exec) : exec();
  }

  /** A StatementResult right away when SQLite could run it synchronously, else a promise of one. */
  private run(
    sql: string,
    params: readonly unknown[],
    prepared?: boolean,
    commit?: boolean,
  ): StatementResult | Promise<StatementResult> {
    if (this.runner) return this.guard(this.runner, runInTransaction(this.runner, sql, params, commit));
    if (!this.opened) return this.open().then(() => this.run(sql, params, prepared));
    const channel = this.channel;
    if (this.statementTimeout > 0) return this.runBounded(sql, params, prepared);
    if (channel) {
      // SQLite runs synchronously: with no transaction holding the connection it can go at once.
      if (channel.runSync && this.gate && !this.gate.isLocked()) return channel.runSync(sql, params);
      return this.gate
        ? this.gate.runExclusive(() => channel.run(sql, params))
        : channel.run(sql, params, prepared);
    }
    const exec = async (): Promise<StatementResult> => {
      const runner = this.dataSource.createQueryRunner();
      try {
        return await runner.query(sql, params as unknown[], true);
      } finally {
        await runner.release();
      }
    };
    return this.gate ? this.gate.runExclusive(exec) : exec();
  }

  /**
   * Connects the coordination pool (once for all its clients), within `statementTimeout` when
   * set: a server that does not answer fails the statement like a pooled connection that does not come.
   */
  private async open(): Promise<void> {
    const opening = this.coordination!.open();
    if (this.statementTimeout > 0)
      await boundedWait(opening, this.statementTimeout, 'connection', () => undefined);
    else await opening;
    this.opened = true;
    this.channel = channelFor(this.dataSource);
  }

  /** One statement outside a transaction, each wait within `statementTimeout`. */
  private async runBounded(
    sql: string,
    params: readonly unknown[],
    prepared?: boolean,
  ): Promise<StatementResult> {
    const checkout = this.channel?.checkout;
    if (!checkout) {
      const runner = await this.connectRunner();
      try {
        return await this.guard(runner, runner.query(sql, params as unknown[], true));
      } finally {
        if (!this.destroyed.has(runner)) await runner.release();
      }
    }
    const ms = this.statementTimeout;
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

  /**
   * A QueryRunner with a connection of the pool; with a bound, the wait for it is bounded and a
   * connection that has not answered since the last timeout is destroyed instead of used.
   */
  private async connectRunner(): Promise<QueryRunner> {
    const ms = this.statementTimeout;
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
   * `work`, a call on `runner`'s connection, within `statementTimeout` (when set): past it the
   * connection is destroyed and nothing more is sent on it.
   */
  private guard<R>(runner: QueryRunner, work: Promise<R>): Promise<R> {
    if (this.destroyed.has(runner)) {
      work.catch(() => undefined);
      return Promise.reject(new SqlTimeoutError('answer', this.statementTimeout));
    }
    if (this.statementTimeout <= 0) return work;
    return boundedWait(work, this.statementTimeout, 'answer', () => {
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
}

/** See `SqlClient.rowReader`. */
export interface SqlRowReader extends Omit<SyncRowReader, 'row'> {
  /** The first row (null: none), or undefined when the statement cannot run synchronously now. */
  row(params: readonly unknown[]): unknown[] | null | undefined;
}

/** The runners whose connection a bounded client destroyed, shared by the clients of a DataSource. */
const destroyedByDataSource = new WeakMap<DataSource, WeakSet<QueryRunner>>();
function destroyedRunners(dataSource: DataSource): WeakSet<QueryRunner> {
  let set = destroyedByDataSource.get(dataSource);
  if (!set) destroyedByDataSource.set(dataSource, (set = new WeakSet()));
  return set;
}
