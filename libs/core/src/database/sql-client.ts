import { Mutex } from 'async-mutex';
import type { DataSource, QueryRunner } from 'typeorm';
import { SqlDialect } from '../dialect/sql-dialect';
import { parseDuration, type Duration } from '../time/duration';
import { InvalidOptionsError } from '../errors/holdfast.error';
import {
  beginBoundedTransaction,
  DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  finishTransaction,
  ISOLATION_LEVELS,
  needsSessionReset,
  resetBoundedSession,
  type IsolationLevel,
} from './transaction-bound';
import { directChannel, type DriverChannel, type StatementResult } from './driver-channel';

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
  private readonly channel?: DriverChannel;

  /** Milliseconds after which the server ends a transaction whose client went quiet (0: never). */
  readonly idleInTransactionTimeout: number;

  constructor(
    readonly dataSource: DataSource,
    readonly dialect: SqlDialect,
    private readonly runner?: QueryRunner,
    private readonly options: SqlClientOptions = {},
    private readonly insideTransaction = false,
  ) {
    if (!runner && dialect.name === 'sqlite') this.gate = sqliteGate(dataSource);
    if (!runner) this.channel = channelFor(dataSource);
    this.idleInTransactionTimeout = parseDuration(
      options.idleInTransactionTimeout ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      'idleInTransactionTimeout',
    );
  }

  /** True on the client a `transaction()` hands to its work. */
  get inTransaction(): boolean {
    return this.insideTransaction;
  }

  /** Runs a SELECT (or a statement with RETURNING) and returns its rows. */
  query<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = this.run(sql, params);
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

  /** Runs a write statement and returns the number of rows it changed. */
  execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    const result = this.run(sql, params);
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
    const dialect = this.dialect.name;
    const idle = this.idleInTransactionTimeout;
    const exec = async () => {
      const runner = this.dataSource.createQueryRunner();
      let releasing = false;
      try {
        await runner.connect();
        await beginBoundedTransaction(runner, dialect, idle, isolation);
        let result: T;
        try {
          result = await work(new SqlClient(this.dataSource, this.dialect, runner, this.options, true));
          await finishTransaction(runner, dialect, 'commit');
        } catch (error) {
          if (await finishTransaction(runner, dialect, 'rollback'))
            await resetBoundedSession(runner, dialect, idle);
          throw error;
        }
        if (needsSessionReset(dialect, idle)) {
          // The outcome is settled at COMMIT: the caller goes on while the connection's session
          // is reset, and the connection returns to the pool after that.
          releasing = true;
          void resetBoundedSession(runner, dialect, idle)
            .then(() => runner.release())
            .catch(() => undefined);
        }
        return result;
      } finally {
        if (!releasing) await runner.release();
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
    const exec = async () => {
      const runner = this.dataSource.createQueryRunner();
      try {
        await runner.connect();
        return await work(new SqlClient(this.dataSource, this.dialect, runner, this.options));
      } finally {
        await runner.release();
      }
    };
    return this.gate ? this.gate.runExclusive(exec) : exec();
  }

  /** A StatementResult right away when SQLite could run it synchronously, else a promise of one. */
  private run(sql: string, params: readonly unknown[]): StatementResult | Promise<StatementResult> {
    if (this.runner) return this.runner.query(sql, params as unknown[], true);
    const channel = this.channel;
    if (channel) {
      // SQLite runs synchronously: with no transaction holding the connection it can go at once.
      if (channel.runSync && this.gate && !this.gate.isLocked()) return channel.runSync(sql, params);
      return this.gate ? this.gate.runExclusive(() => channel.run(sql, params)) : channel.run(sql, params);
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
}
