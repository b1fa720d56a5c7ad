import type { QueryRunner } from 'typeorm';
import type { LockQueryResolver, RowLockAcquire } from '../store/lock-query.resolver';
import type { HeldTransaction } from './held-transaction';
import type { LockConnection } from './lock-connection';

/** What a RowLockTransaction holds its lock with. */
export interface RowLockContext {
  readonly connection: LockConnection;
  readonly queries: LockQueryResolver;
  readonly lockName: string;
  readonly holderId: string;
  /** How long the server lets the lock transaction sit silent before ending it (0: never). */
  readonly idleTimeout: number;
}

/** The driver's own connection under a QueryRunner (pg's Client), for a multi-statement query's results. */
interface ScriptConnection {
  query(sql: string): Promise<{ rowCount: number | null } | { rowCount: number | null }[]>;
}

/**
 * pg's Client under the runner, which answers a query of several statements with one result each
 * (TypeORM keeps none of them); undefined under another driver.
 */
function scriptConnection(runner: QueryRunner): ScriptConnection | undefined {
  const driver = (runner as unknown as { databaseConnection?: Partial<ScriptConnection> }).databaseConnection;
  return typeof driver?.query === 'function' ? (driver as ScriptConnection) : undefined;
}

/**
 * PostgreSQL, MySQL, MariaDB: SELECT ... FOR UPDATE in a transaction kept open on the lock
 * connection. An attempt is one round trip where the database takes it in one message
 * (`LockQueryResolver.acquireRowLock`; on PostgreSQL a second one rolls back an attempt that
 * found the row held); elsewhere the transaction is opened, the row locked, the idle bound set and
 * the row claimed one statement at a time.
 */
export class RowLockTransaction implements HeldTransaction {
  private holding = false;
  /** The open transaction was begun by a statement of ours, not by TypeORM's startTransaction. */
  private begunBySql = false;

  constructor(private readonly context: RowLockContext) {}

  get held(): boolean {
    return this.holding;
  }

  async acquire(): Promise<boolean> {
    const { connection, queries, lockName, holderId, idleTimeout } = this.context;
    const oneMessage = queries.acquireRowLock(lockName, holderId, idleTimeout);
    // A failure anywhere destroys the connection, and the server rolls the transaction back.
    return connection.run('Acquiring the lock', async (tx) => {
      const runner = connection.queryRunner!;
      if (oneMessage && (oneMessage.kind === 'compound' || scriptConnection(runner))) {
        const held = await this.acquireInOneMessage(runner, oneMessage);
        this.holding = held;
        this.begunBySql = held;
        return held;
      }
      await runner.startTransaction();
      const lockRow = queries.lockRow(lockName);
      const rows = await tx.query(lockRow);
      if (rows.length === 0) {
        await runner.rollbackTransaction();
        return false;
      }
      if (idleTimeout > 0) {
        for (const s of queries.holdTimeouts(idleTimeout)) await tx.query(s);
      }
      const claim = queries.claimRow(lockName, holderId);
      await tx.execute(claim);
      this.holding = true;
      this.begunBySql = false;
      return true;
    });
  }

  /** True when the row was taken (its transaction left open); otherwise no transaction is left open. */
  private async acquireInOneMessage(runner: QueryRunner, attempt: RowLockAcquire): Promise<boolean> {
    if (attempt.kind === 'script') {
      const results = await scriptConnection(runner)!.query(attempt.sql);
      const claim = Array.isArray(results) ? results[results.length - 1] : results;
      if (claim?.rowCount === 1) return true;
      await runner.query('ROLLBACK');
      return false;
    }
    // On the QueryRunner itself, not a SqlClient: the compound opens the transaction that holds the
    // lock on this reserved connection, and its first result set (the `held` row) comes only in
    // TypeORM's structured result.
    const { sql, params } = attempt;
    const result = (await runner.query(sql, [...params], true)) as { records?: unknown[] };
    // The compound's SELECT comes as a result set of its own, before the compound's OK.
    const [rows] = (result.records ?? []) as { held?: unknown }[][];
    return Array.isArray(rows) && Number(rows[0]?.held) === 1;
  }

  async touch(): Promise<boolean> {
    if (!this.holding) return false;
    const { connection, queries, lockName } = this.context;
    try {
      const touch = queries.touchRow(lockName);
      const changed = await connection.run('Keep-alive of the lock', (tx) => tx.execute(touch));
      if (changed === 1) return true;
    } catch {
      // The connection is destroyed: the transaction, and the row lock with it, are gone.
    }
    await this.release();
    return false;
  }

  /**
   * Lets the lock go and gives up the reserved connection: a standby that stops must not keep a
   * pooled connection checked out (the DataSource's pool waits for it when it closes).
   */
  async release(): Promise<void> {
    const { connection } = this.context;
    const wasHolding = this.holding;
    this.holding = false;
    if (wasHolding && connection.connected) {
      // A quick rollback frees the row for a standby at once; bounded, and the connection is
      // destroyed either way (it carries the lock's session settings).
      await connection
        .run('Releasing the lock', async () => {
          const runner = connection.queryRunner!;
          if (this.begunBySql) await runner.query('ROLLBACK');
          else if (runner.isTransactionActive) await runner.rollbackTransaction();
        })
        .catch(() => undefined);
    }
    connection.destroy();
  }

  async dispose(): Promise<void> {
    this.holding = false;
    this.context.connection.destroy();
  }
}
