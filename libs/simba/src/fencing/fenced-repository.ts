import {
  Brackets,
  Column,
  MoreThan,
  type ColumnOptions,
  type DataSource,
  type EntityManager,
  type FindOptionsWhere,
  type ObjectLiteral,
  type Repository,
} from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import {
  beginBoundedTransaction,
  DatabaseResolver,
  endBoundedTransaction,
  parseDuration,
  sqlDialect,
  sqliteGate,
  UnsupportedDialectError,
  type Dialect,
  type Duration,
} from '@holdfast/core/kit';
import { FenceColumnNotFoundError, InvalidFencingTokenError, StaleFencingTokenError } from '../errors';

/** The property that keeps a row's fence when none is named. */
export const DEFAULT_FENCE_PROPERTY = 'fence';

/**
 * The column a fenced table keeps the highest fencing token that wrote it in: a nullable BIGINT
 * (NULL = never written under a fence), read back as a number.
 */
export function FenceColumn(options: ColumnOptions = {}): PropertyDecorator {
  return Column({
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: {
      to: (value: unknown) => value,
      from: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
    },
    ...options,
  });
}

/** How long the server lets a fenced write's transaction sit silent before it ends it (5 s). */
export const DEFAULT_FENCED_IDLE_TIMEOUT_MS = 5_000;

export interface FencedOptions {
  /** The entity property holding the fence (default 'fence'). */
  fenceProperty?: string;
  /**
   * How long the server lets a fenced write's own transaction sit silent (its writer frozen or
   * cut off between the UPDATE and the COMMIT) before it ends it and frees the rows, so a newer
   * owner's write never waits longer than this on a vanished one (default 5 s; 0: no bound).
   * PostgreSQL `SET LOCAL idle_in_transaction_session_timeout`, MariaDB `idle_transaction_timeout`,
   * MySQL `wait_timeout` for that transaction. Not applied inside the caller's own transaction.
   */
  idleInTransactionTimeout?: Duration;
}

/** What a fenced update did; `refused` rows hold a newer fence than the token. */
export interface FencedUpdateResult {
  /** Rows that matched the criteria and accepted the write (their fence is now the token). */
  written: number;
  /** Rows that matched the criteria but carry a newer fence: the write was refused for them. */
  refused: number;
  /** True when no matching row refused the write (`refused === 0`). */
  accepted: boolean;
}

type Criteria<T> = FindOptionsWhere<T> | FindOptionsWhere<T>[];

/** The dialect of `dataSource`, or undefined where Holdfast has none (the write then runs as TypeORM runs it). */
function dialectOf(dataSource: DataSource): Dialect | undefined {
  try {
    return new DatabaseResolver().resolve(dataSource);
  } catch (error) {
    if (error instanceof UnsupportedDialectError) return undefined;
    throw error;
  }
}

/**
 * TypeORM's SQLite drivers have one connection per DataSource, on which two transactions cannot
 * overlap ("cannot start a transaction within a transaction"): on SQLite, fenced writes take
 * turns through core's gate of that DataSource, the one its SqlClients take too.
 */
function inTurn<R>(manager: EntityManager, work: () => Promise<R>): Promise<R> {
  if (manager.queryRunner?.isTransactionActive) return work();
  const dialect = dialectOf(manager.connection);
  if (!dialect || !sqlDialect(dialect).singleConnection) return work();
  return sqliteGate(manager.connection).runExclusive(work);
}

/**
 * Writes that a row accepts only from the current owner of a mutex: each write carries the
 * owner's fencing token, is applied only where the row's stored fence is not above it, and
 * stores the token as the new fence. The database does the check in the same UPDATE, so an owner
 * that was paused past its lease (GC, a partition, a suspended VM) and wakes up still believing
 * it owns the mutex cannot overwrite what a newer owner wrote, however late its write arrives.
 *
 * Equal tokens are accepted: one owner writes many times under one token. Tokens are compared as
 * numbers; Simba's grow on every acquire and renewal, so a newer owner always holds a larger one.
 */
export class FencedRepository<T extends ObjectLiteral> {
  readonly fenceProperty: string;
  private readonly fenceColumn: string;
  private readonly idleMs: number;

  constructor(
    readonly repository: Repository<T>,
    options: FencedOptions = {},
  ) {
    this.fenceProperty = options.fenceProperty ?? DEFAULT_FENCE_PROPERTY;
    this.idleMs = parseDuration(
      options.idleInTransactionTimeout ?? DEFAULT_FENCED_IDLE_TIMEOUT_MS,
      'idleInTransactionTimeout',
    );
    const column = repository.metadata.findColumnWithPropertyName(this.fenceProperty);
    if (!column) throw new FenceColumnNotFoundError(repository.metadata.name, this.fenceProperty);
    this.fenceColumn = column.databaseName;
  }

  /**
   * Applies `changes` to the rows matching `criteria` whose fence is NULL or not above `token`,
   * and sets their fence to `token`. Rows with a newer fence are left untouched and counted in
   * `refused`. Runs in one transaction, so `refused` counts exactly the rows this write skipped.
   */
  async update(
    criteria: Criteria<T>,
    changes: QueryDeepPartialEntity<T>,
    token: number,
  ): Promise<FencedUpdateResult> {
    checkToken(token);
    return inTurn(this.repository.manager, () =>
      this.transaction((manager) => this.updateIn(manager, criteria, changes, token)),
    );
  }

  /** The write itself, on `manager`'s transaction: the conditional UPDATE, then the refused count. */
  private async updateIn(
    manager: EntityManager,
    criteria: Criteria<T>,
    changes: QueryDeepPartialEntity<T>,
    token: number,
  ): Promise<FencedUpdateResult> {
    const target = this.repository.metadata.target;
    const fence = manager.connection.driver.escape(this.fenceColumn);
    const update = manager
      .createQueryBuilder()
      .update(target)
      .set({ ...changes, [this.fenceProperty]: token } as QueryDeepPartialEntity<T>)
      .where(criteria)
      .andWhere(
        new Brackets((qb) => {
          qb.where(`${fence} IS NULL`).orWhere(`${fence} <= :holdfastFenceToken`, {
            holdfastFenceToken: token,
          });
        }),
      );
    const result = await update.execute();
    const written = result.affected ?? 0;
    const refused = await this.countNewer(manager, criteria, token);
    return { written, refused, accepted: refused === 0 };
  }

  /**
   * Runs `work` in one transaction: inside the caller's own transaction when there is one (a
   * savepoint of it), else in a transaction of its own that the server ends once it has been
   * silent for `idleInTransactionTimeout`.
   */
  private async transaction<R>(work: (manager: EntityManager) => Promise<R>): Promise<R> {
    const manager = this.repository.manager;
    if (manager.queryRunner?.isTransactionActive || this.idleMs <= 0) return manager.transaction(work);
    const dataSource = manager.connection;
    const dialect = dialectOf(dataSource);
    if (!dialect) return manager.transaction(work);
    // One connection that every statement takes in turn (SQLite): no server, nothing to bound.
    if (sqlDialect(dialect).singleConnection) return manager.transaction(work);
    const runner = dataSource.createQueryRunner();
    try {
      await runner.connect();
      await beginBoundedTransaction(runner, dialect, this.idleMs);
      let result: R;
      try {
        result = await work(runner.manager);
      } catch (error) {
        await endBoundedTransaction(runner, dialect, this.idleMs, 'rollback');
        throw error;
      }
      await endBoundedTransaction(runner, dialect, this.idleMs, 'commit');
      return result;
    } finally {
      await runner.release();
    }
  }

  /** As `update`, but a refused write throws StaleFencingTokenError (nothing is written then). */
  async updateOrThrow(
    criteria: Criteria<T>,
    changes: QueryDeepPartialEntity<T>,
    token: number,
  ): Promise<number> {
    checkToken(token);
    return inTurn(this.repository.manager, () =>
      this.transaction(async (manager) => {
        const result = await this.updateIn(manager, criteria, changes, token);
        // Throwing rolls back the rows that did accept it: all or nothing.
        if (!result.accepted) {
          throw new StaleFencingTokenError(this.repository.metadata.tableName, token, result.refused);
        }
        return result.written;
      }),
    );
  }

  /** Inserts rows stamped with `token` as their fence. */
  async insert(rows: QueryDeepPartialEntity<T> | QueryDeepPartialEntity<T>[], token: number): Promise<void> {
    checkToken(token);
    const list = Array.isArray(rows) ? rows : [rows];
    await this.repository.insert(
      list.map((row) => ({ ...row, [this.fenceProperty]: token }) as QueryDeepPartialEntity<T>),
    );
  }

  private async countNewer(manager: EntityManager, criteria: Criteria<T>, token: number): Promise<number> {
    const newer = MoreThan(token);
    const where = (Array.isArray(criteria) ? criteria : [criteria]).map(
      (c) => ({ ...c, [this.fenceProperty]: newer }) as FindOptionsWhere<T>,
    );
    return manager.count(this.repository.metadata.target, { where });
  }
}

/** `fenced(repo).update(criteria, changes, token)`: see FencedRepository. */
export function fenced<T extends ObjectLiteral>(
  repository: Repository<T>,
  options?: FencedOptions,
): FencedRepository<T> {
  return new FencedRepository(repository, options);
}

function checkToken(token: unknown): asserts token is number {
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token < 0) {
    throw new InvalidFencingTokenError(token);
  }
}
