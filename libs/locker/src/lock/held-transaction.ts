/**
 * How the database locker physically holds its lock: a row lock in a transaction kept open
 * (RowLockTransaction), or SQLite's write lock on a companion file (SqliteWriteLock).
 */
export interface HeldTransaction {
  /** One attempt; true when the lock is now held. */
  acquire(): Promise<boolean>;
  /** Touches the row in the open transaction; false (and let go) when the transaction is gone. */
  touch(): Promise<boolean>;
  release(): Promise<void>;
  /** Closes what the lock kept open while not held (the reserved connection). */
  dispose?(): Promise<void>;
  readonly held: boolean;
}
