import { Logger } from '@nestjs/common';
import { isSyntaxError, isTransientConflictError } from '@holdfast/core/kit';
import type { PayloadType } from '../payload/payload-type';
import { NOT_NOW, type FailoverEntry, type StoreManyItem } from './failover-store';
import type { FailoverRowValues } from './failover-store-query.resolver';
import { retried, type SqlStoreState } from './sql-store.state';

/** The one-row upsert: a fixed text, kept planned per connection on PostgreSQL. */
const PREPARED = { prepared: true } as const;

/** The rows per multi-row upsert of `storeMany`. */
const CHUNK_ROWS = 500;

/**
 * The INSERT-then-UPDATE write, for dialects (or servers) without the native upsert: the store
 * runs it, with its own overridable INSERT and UPDATE.
 */
export type FallbackWrite = (row: FailoverRowValues) => Promise<void>;

/**
 * The writes of the SQL store: one native upsert per entry, one multi-row upsert per chunk of
 * a batch, or (after the server rejected the upsert once, or for an unknown dialect) the
 * store's INSERT then UPDATE for good.
 */
export class FailoverSqlWrites {
  /** The one-row upsert's text (built once; see FailoverStoreQueryResolver). */
  private upsertText?: string;

  constructor(
    private readonly state: SqlStoreState,
    private readonly logger: Logger,
    private readonly fallback: FallbackWrite,
  ) {}

  /** Forgets the statements built so far (the resolvers changed). */
  reset(): void {
    this.upsertText = undefined;
  }

  /** Switches to INSERT then UPDATE for good, saying why once. */
  useFallback(reason: string): void {
    if (!this.state.native) return;
    this.state.native = false;
    this.logger.warn(reason);
  }

  private row(entry: FailoverEntry<unknown>, type?: PayloadType): FailoverRowValues {
    return this.state.rows.values(entry, this.state.sql.dialect, type);
  }

  /** The one-row upsert of `row`: its text once built, the row's values in the default order. */
  private upsertOne(row: FailoverRowValues): { sql: string; params: unknown[] } {
    if (this.upsertText === undefined) {
      const { queries, ctx } = this.state;
      const built = queries.upsert(ctx, [row]);
      this.upsertText = built.sql;
      return { sql: built.sql, params: [...built.params] };
    }
    return {
      sql: this.upsertText,
      params: [row.name, row.key, row.asOf, row.expireOn, row.payload, row.payloadClass],
    };
  }

  /**
   * One multi-row upsert per chunk of up to 500 rows, keys sorted so that concurrent batches
   * lock rows in the same order (no deadlock between two flushers on MariaDB).
   */
  async storeMany(items: readonly StoreManyItem[]): Promise<void> {
    if (!this.state.native) {
      for (const item of items) await this.store(item.entry, item.type);
      return;
    }
    const sorted = [...items].sort((a, b) =>
      a.entry.name === b.entry.name
        ? a.entry.key < b.entry.key
          ? -1
          : 1
        : a.entry.name < b.entry.name
          ? -1
          : 1,
    );
    const { sql, queries, ctx, table } = this.state;
    for (let start = 0; start < sorted.length; start += CHUNK_ROWS) {
      const chunk = sorted.slice(start, start + CHUNK_ROWS);
      const s = queries.upsert(
        ctx,
        chunk.map((item) => this.row(item.entry, item.type)),
      );
      try {
        await retried(() => sql.execute(s));
      } catch (error) {
        if (!isSyntaxError(error)) throw error;
        this.useFallback(
          `Multi-row upsert on ${table} was rejected as a syntax error; using INSERT then UPDATE from now on.`,
        );
        for (const item of chunk) await this.store(item.entry, item.type);
      }
    }
  }

  async store<T>(entry: FailoverEntry<T>, type?: PayloadType): Promise<void> {
    const row = this.row(entry, type);
    if (this.state.native) {
      const s = this.upsertOne(row);
      try {
        await retried(() => this.state.sql.execute(s, PREPARED));
        return;
      } catch (error) {
        if (!isSyntaxError(error)) throw error;
        this.useFallback(
          `Native upsert on ${this.state.table} was rejected as a syntax error; using INSERT then UPDATE from now on. ` +
            `(${(error as Error).message})`,
        );
      }
    }
    await this.fallback(row);
  }

  /**
   * The same upsert, run synchronously when the database can (SQLite with its connection free):
   * the success path with `async: false` then costs no promise hop. NOT_NOW when it cannot, and
   * for what `store` handles with waits or more statements (a conflict retried with backoff, the
   * INSERT-then-UPDATE fallback): the caller then uses `store`.
   */
  storeNow<T>(entry: FailoverEntry<T>, type?: PayloadType): void | typeof NOT_NOW {
    const sql = this.state.sql;
    if (!this.state.native || !sql.runsSynchronously) return NOT_NOW;
    const s = this.upsertOne(this.row(entry, type));
    let changed: number | undefined;
    try {
      changed = sql.executeSync(s);
    } catch (error) {
      if (isTransientConflictError(error) || isSyntaxError(error)) return NOT_NOW;
      throw error;
    }
    return changed === undefined ? NOT_NOW : undefined;
  }
}
