import { Logger } from '@nestjs/common';
import { isDuplicateKeyError, statement } from '@holdfast/core/kit';
import type { CallerTransaction } from '../accept-tx/caller-transaction';
import type { InboxClock } from '../inbox.clock';
import type { InboxMetrics } from '../metrics/inbox.metrics';
import type { CorMessageAccept } from '../store/cor-message.accept';
import type { NewMessageRow, Now } from '../store/cor-message.rows';
import type { InboxConnection } from '../store/inbox-connection';

/** Chunks of one acceptAll inserted at the same time (each on its own pooled connection). */
const ACCEPT_PARALLELISM = 4;

/**
 * The inserts of accepted messages: an id that exists already is not touched (the insert tells
 * which ids it stored), on the application's pool or in the caller's transaction.
 */
export class MessageInserter {
  private readonly logger = new Logger('MessageAcceptor');

  constructor(
    private readonly connection: InboxConnection,
    private readonly clock: InboxClock,
    private readonly metrics: InboxMetrics,
    private readonly chunkSize: number,
  ) {}

  /**
   * `rows` in chunks of `chunkSize`, up to ACCEPT_PARALLELISM chunks at a time, all with the same
   * INSERTED (`now`); returns the ids stored. After a failure no new chunk starts; the ones
   * running finish before the error is thrown.
   */
  async insertChunks(rows: readonly NewMessageRow[], now: Now): Promise<string[]> {
    const size = this.chunkSize;
    const chunks: NewMessageRow[][] = [];
    for (let i = 0; i < rows.length; i += size) chunks.push(rows.slice(i, i + size));
    const stored: string[] = [];
    let next = 0;
    let failure: { error: unknown } | undefined;
    await Promise.all(
      Array.from({ length: Math.min(ACCEPT_PARALLELISM, chunks.length) }, async () => {
        while (next < chunks.length && !failure) {
          try {
            stored.push(...(await this.insertChunk(chunks[next++], now)));
          } catch (error) {
            failure ??= { error };
          }
        }
      }),
    );
    if (failure) throw failure.error;
    return stored;
  }

  /**
   * Inserts the rows that do not exist yet in the caller's transaction; returns the ids stored.
   * As outside a transaction, the common case (no id exists yet) is one INSERT per chunk; after a
   * duplicate, the ids that exist are read and the others inserted. A duplicate must not end the
   * caller's transaction: on PostgreSQL a failed statement aborts the whole transaction, so each
   * insert runs under a savepoint there; MariaDB and SQLite undo only the failed statement.
   * Nothing is retried: a deadlock or a lock wait timeout is the caller's transaction's to handle.
   */
  async insertInTransaction(
    tx: CallerTransaction,
    rows: readonly NewMessageRow[],
    now: Now,
  ): Promise<string[]> {
    const store = this.connection.accept.through(tx.sql);
    const savepoints = tx.sql.dialect.name === 'postgres';
    const size = this.chunkSize;
    const stored: string[] = [];
    for (let i = 0; i < rows.length; i += size) {
      const chunk = rows.slice(i, i + size);
      if (await this.tryInsert(tx, store, chunk, now, savepoints)) {
        stored.push(...chunk.map((r) => r.id));
        continue;
      }
      const existing = await store.existingIds(chunk.map((r) => r.id));
      const todo = chunk.filter((r) => !existing.has(r.id));
      if (!todo.length) continue;
      if (await this.tryInsert(tx, store, todo, now, savepoints)) {
        stored.push(...todo.map((r) => r.id));
        continue;
      }
      // An id stored meanwhile by a transaction this one's snapshot does not see: row by row.
      for (const row of todo)
        if (await this.tryInsert(tx, store, [row], now, savepoints)) stored.push(row.id);
    }
    return stored;
  }

  /** true: inserted; false: a duplicate id (the caller's transaction goes on). */
  private async tryInsert(
    tx: CallerTransaction,
    store: CorMessageAccept,
    rows: NewMessageRow[],
    now: Now,
    savepoint: boolean,
  ): Promise<boolean> {
    if (savepoint) await tx.sql.execute(statement('SAVEPOINT holdfast_accept'));
    try {
      await store.insert(rows, now);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      if (savepoint) await tx.sql.execute(statement('ROLLBACK TO SAVEPOINT holdfast_accept'));
      return false;
    }
    if (savepoint) await tx.sql.execute(statement('RELEASE SAVEPOINT holdfast_accept'));
    return true;
  }

  /** Inserts the rows that do not exist yet; returns the ids this call stored. */
  private async insertChunk(chunk: NewMessageRow[], now: Now): Promise<string[]> {
    try {
      // The common case (no id exists yet) costs one statement.
      await this.metrics.retry('accept', () => this.connection.accept.insert(chunk, now));
      return chunk.map((r) => r.id);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      this.logger.debug(`Some ids of a chunk exist already; inserting the others`);
    }
    const existing = await this.metrics.retry('accept', () =>
      this.connection.accept.existingIds(chunk.map((r) => r.id)),
    );
    const todo = chunk.filter((r) => !existing.has(r.id));
    if (!todo.length) return [];
    try {
      await this.metrics.retry('accept', () => this.connection.accept.insert(todo, now));
      return todo.map((r) => r.id);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // Someone stored one of these ids in the meantime: settle it row by row, which tells
      // exactly which ids were ours.
      const ids: string[] = [];
      for (const row of todo) if (await this.insertOne(row)) ids.push(row.id);
      return ids;
    }
  }

  /** true: stored; false: the id existed. A failure for any other reason is rethrown. */
  async insertOne(row: NewMessageRow): Promise<boolean> {
    try {
      // A deadlock victim is retried (core's bounded retry); a retry that then finds the id
      // stored by someone else reports a duplicate, so the call stays idempotent by id.
      const now = await this.clock.bindable();
      await this.metrics.retry('accept', () => this.connection.accept.insert([row], now));
      return true;
    } catch (error) {
      // A plain INSERT (not ON CONFLICT…) because MariaDB's affected-row count cannot tell an
      // ignored duplicate from an insert: the id is the only unique key, so a duplicate-key
      // error means the message exists already.
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }
}
