import type { LockQueryResolver } from '../store/lock-query.resolver';
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

/** PostgreSQL, MySQL, MariaDB: SELECT ... FOR UPDATE in a transaction kept open on the lock connection. */
export class RowLockTransaction implements HeldTransaction {
  private holding = false;

  constructor(private readonly context: RowLockContext) {}

  get held(): boolean {
    return this.holding;
  }

  async acquire(): Promise<boolean> {
    const { connection, queries, lockName, holderId, idleTimeout } = this.context;
    // A failure anywhere destroys the connection, and the server rolls the transaction back.
    return connection.run('Acquiring the lock', async (tx) => {
      const runner = connection.queryRunner!;
      await runner.startTransaction();
      const lockRow = queries.lockRow(lockName);
      const rows = await tx.query(lockRow.sql, lockRow.params);
      if (rows.length === 0) {
        await runner.rollbackTransaction();
        return false;
      }
      if (idleTimeout > 0) {
        for (const s of queries.holdTimeouts(idleTimeout)) await tx.query(s.sql, s.params);
      }
      const claim = queries.claimRow(lockName, holderId);
      await tx.execute(claim.sql, claim.params);
      this.holding = true;
      return true;
    });
  }

  async touch(): Promise<boolean> {
    if (!this.holding) return false;
    const { connection, queries, lockName } = this.context;
    try {
      const touch = queries.touchRow(lockName);
      const changed = await connection.run('Keep-alive of the lock', (tx) =>
        tx.execute(touch.sql, touch.params),
      );
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
          if (runner.isTransactionActive) await runner.rollbackTransaction();
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
