import type { Mutex } from 'async-mutex';
import type { DataSource, QueryRunner } from 'typeorm';
import { SqlDialect } from '../dialect/sql-dialect';
import { parseDuration } from '../time/duration';
import { DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, runInTransaction } from './transaction-bound';
import { sharedChannel, type DriverChannel, type StatementResult } from './driver-channel';
import { BoundedConnections } from './bounded-connections';
import { inBoundedTransaction, validateIsolation } from './bounded-transaction';
import type { CoordinationPool } from './coordination-pool';
import { sqliteGate } from './sqlite-gate';
import { toNumber } from './to-number';
import { statement, type Statement } from './statement';
import type { StatementTemplate } from './statement-template';
import type {
  SqlClientOptions,
  SqlRowReader,
  StatementOptions,
  TransactionOptions,
} from './sql-client.options';

export { toNumber } from './to-number';
export type {
  SqlClientOptions,
  SqlRowReader,
  StatementOptions,
  TransactionOptions,
} from './sql-client.options';

type Row = Record<string, unknown>;

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
  /** The client's connections, and the bound on its waits for them. */
  private readonly connections: BoundedConnections;

  constructor(
    readonly dataSource: DataSource,
    readonly dialect: SqlDialect,
    private readonly runner?: QueryRunner,
    private readonly options: SqlClientOptions = {},
    private readonly insideTransaction = false,
    /** The module's own pool behind `dataSource`, connected on this client's first statement. */
    private readonly coordination?: CoordinationPool,
  ) {
    if (!runner && dialect.singleConnection) this.gate = sqliteGate(dataSource);
    this.opened = !coordination || coordination.isOpen;
    if (!runner && this.opened) this.channel = sharedChannel(dataSource);
    this.idleInTransactionTimeout = parseDuration(
      options.idleInTransactionTimeout ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      'idleInTransactionTimeout',
    );
    const bound = parseDuration(options.statementTimeout ?? 0, 'statementTimeout');
    this.statementTimeout = dialect.boundsWaits ? bound : 0;
    this.connections = new BoundedConnections(dataSource, this.statementTimeout);
  }

  /**
   * This client with each wait bounded by at least `ms` (itself when its bound is that long, or
   * off, or inside a transaction): for statements that may wait longer than a module's statements
   * do, such as the schema step's wait for another instance's step at startup.
   */
  withStatementTimeoutAtLeast(ms: number): SqlClient {
    if (this.runner || this.statementTimeout === 0 || this.statementTimeout >= ms) return this;
    return new SqlClient(
      this.dataSource,
      this.dialect,
      undefined,
      { ...this.options, statementTimeout: ms },
      false,
      this.coordination,
    );
  }

  /** True on the client a `transaction()` hands to its work. */
  get inTransaction(): boolean {
    return this.insideTransaction;
  }

  /** Runs a SELECT (or a statement with RETURNING) and returns its rows. */
  query<T = Row>(statement: Statement, options?: StatementOptions): Promise<T[]> {
    const result = this.runStatement(statement, options);
    return result instanceof Promise
      ? result.then((r) => (r.records ?? []) as T[])
      : Promise.resolve((result.records ?? []) as T[]);
  }

  /**
   * The rows at once, when the statement can run synchronously now: SQLite, outside a
   * transaction, with no transaction holding the shared connection. Undefined otherwise (use
   * `query`). Lets a hot read skip the promise hops a driver call needs on other databases.
   */
  querySync<T = Row>(statement: Statement): T[] | undefined {
    const channel = this.channel;
    if (!channel?.runSync || !this.gate || this.gate.isLocked()) return undefined;
    const result = channel.runSync(statement.sql, statement.params);
    return (result.records ?? []) as T[];
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
  executeSync(statement: Statement): number | undefined {
    const channel = this.channel;
    if (!channel?.runSync || !this.gate || this.gate.isLocked()) return undefined;
    const result = channel.runSync(statement.sql, statement.params);
    return this.dialect.affectedRows(result);
  }

  /**
   * A point read for hot paths, compiled once: `row(values)` binds the template's slots to
   * `values` and answers with the first row as an array of column values (in `columns` order) or
   * null, synchronously, when the statement can run now (as `querySync`), and undefined when it
   * cannot (use `query(template.bind(values))`). Undefined for a database that cannot read
   * synchronously (anything but SQLite) or inside a transaction.
   */
  rowReader<V extends object>(source: StatementTemplate<V>): SqlRowReader<V> | undefined {
    const channel = this.channel;
    const gate = this.gate;
    if (!channel?.rowReader || !gate) return undefined;
    const reader = channel.rowReader(source.sql);
    return {
      columns: reader.columns,
      row: (values: V) => (gate.isLocked() ? undefined : reader.row(source.params(values))),
    };
  }

  /** Runs a write statement and returns the number of rows it changed. */
  execute(statement: Statement, options?: StatementOptions): Promise<number> {
    const result = this.runStatement(statement, options);
    return result instanceof Promise
      ? result.then((r) => this.dialect.affectedRows(r))
      : Promise.resolve(this.dialect.affectedRows(result));
  }

  /** The database clock in epoch milliseconds. */
  async nowMillis(): Promise<number> {
    const [row] = await this.query<{ now: unknown }>(
      statement(this.dialect.selectRow(`${this.dialect.nowMillis} AS now`)),
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
    validateIsolation(options.isolation);
    if (this.runner) return work(this);
    if (!this.opened) await this.open();
    const exec = () =>
      inBoundedTransaction(
        {
          connections: this.connections,
          dialect: this.dialect,
          idleMs: this.idleInTransactionTimeout,
          isolation: options.isolation,
        },
        (runner) => work(new SqlClient(this.dataSource, this.dialect, runner, this.options, true)),
      );
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
      const runner = await this.connections.connectRunner();
      try {
        return await work(new SqlClient(this.dataSource, this.dialect, runner, this.options));
      } finally {
        await this.connections.release(runner);
      }
    };
    return this.gate ? this.gate.runExclusive(exec) : exec();
  }

  /** `run` for a statement and its options. */
  private runStatement(
    statement: Statement,
    options: StatementOptions | undefined,
  ): StatementResult | Promise<StatementResult> {
    return this.run(statement.sql, statement.params, options?.prepared, options?.commit);
  }

  /** A StatementResult right away when SQLite could run it synchronously, else a promise of one. */
  private run(
    sql: string,
    params: readonly unknown[],
    prepared?: boolean,
    commit?: boolean,
  ): StatementResult | Promise<StatementResult> {
    if (this.runner)
      return this.connections.guard(this.runner, runInTransaction(this.runner, sql, params, commit));
    if (!this.opened) return this.open().then(() => this.run(sql, params, prepared));
    const channel = this.channel;
    if (this.statementTimeout > 0) {
      return channel?.checkout
        ? this.connections.runPooled(channel.checkout, sql, params, prepared)
        : this.connections.runOnRunner(sql, params);
    }
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
    await this.connections.open(this.coordination!.open());
    this.opened = true;
    this.channel = sharedChannel(this.dataSource);
  }
}
