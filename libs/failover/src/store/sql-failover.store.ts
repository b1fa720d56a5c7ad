import { Logger } from '@nestjs/common';
import { SchemaManager, declarePoolNeed, isDuplicateKeyError, type SqlClient } from '@holdfast/core/kit';
import type { PayloadType } from '../payload/payload-type';
import {
  NOT_NOW,
  type CleanupBatchOptions,
  type FailoverEntry,
  type FailoverStore,
  type StoreManyItem,
  type SynchronousFind,
  type SynchronousStore,
} from './failover-store';
import { FailoverSqlCleanup } from './failover-sql.cleanup';
import { FailoverSqlReads } from './failover-sql.reads';
import { FailoverSqlWrites } from './failover-sql.writes';
import { FAILOVER_STORE_TABLE } from './failover-store.table';
import type { FailoverRowValues } from './failover-store-query.resolver';
import { SqlStoreState, retried, type SqlFailoverStoreConfig } from './sql-store.state';

export type { SqlFailoverStoreConfig } from './sql-store.state';

/**
 * The durable store on `<prefix>FAILOVER_STORE`: checks (or creates) the table at init and
 * hands each operation to its part (writes, reads, cleanup). Writes are one native upsert; if
 * the database rejects its syntax once, or the dialect is unknown, it switches for good to
 * INSERT, then UPDATE on a duplicate key, with one bounded re-INSERT when that UPDATE finds no
 * row (the row was cleaned in between).
 */
export class SqlFailoverStore implements FailoverStore, SynchronousFind, SynchronousStore {
  readonly description: string;
  private readonly logger = new Logger(SqlFailoverStore.name);
  private readonly state: SqlStoreState;
  private readonly writes: FailoverSqlWrites;
  private readonly reads: FailoverSqlReads;
  private readonly cleanup: FailoverSqlCleanup;
  private initialized = false;

  constructor(private readonly config: SqlFailoverStoreConfig) {
    this.state = new SqlStoreState(config);
    this.description = `sql:${this.state.table}`;
    this.writes = new FailoverSqlWrites(this.state, this.logger, (row) => this.fallbackStore(row));
    this.reads = new FailoverSqlReads(this.state);
    this.cleanup = new FailoverSqlCleanup(this.state, (row) => this.tryInsert(row));
  }

  /** Nest calls this on the provider; direct users call `init()`. */
  async onModuleInit(): Promise<void> {
    await this.init();
  }

  async init(): Promise<this> {
    if (this.initialized) return this;
    const state = this.state;
    const atInit = this.config.rows?.atInit;
    const parts = atInit
      ? await atInit()
      : { queries: state.queries, payloadColumn: state.rows.payloadColumn };
    void state.sql; // resolves the client (and the dialect) before anything else
    if (state.dialectUnknown) {
      this.logger.warn(
        `Dialect unknown: table ${state.table} was not checked; create it with 'npm run ddl'.`,
      );
    } else {
      await new SchemaManager(state.maintenanceSql).apply(
        FAILOVER_STORE_TABLE,
        this.config.tablePrefix ?? '',
        this.config.schema ?? 'check',
      );
      // A caller's store write (or the write-behind flush), bounded by storeTimeout.
      declarePoolNeed(state.sql, { component: `failover (${state.table})`, connections: 1 });
    }
    // The statements are built anew from here on (the resolvers found, the dialect known).
    state.compile(parts.queries, parts.payloadColumn);
    this.writes.reset();
    this.reads.reset();
    this.initialized = true;
    if (!state.dialectUnknown) await state.dbClock.sync();
    return this;
  }

  /**
   * Switches to INSERT then UPDATE for good (unknown dialect, or an upsert the server rejects).
   * With an unknown dialect the table cannot be introspected either: it is not checked.
   */
  useFallback(reason: string, options: { unknownDialect?: boolean } = {}): void {
    if (options.unknownDialect) this.state.dialectUnknown = true;
    this.writes.useFallback(reason);
  }

  /** A store on another table (a tenant's), sharing this one's client, SQL and codec. */
  withTablePrefix(tablePrefix: string): SqlFailoverStore {
    const state = this.state;
    return new SqlFailoverStore({
      ...this.config,
      sql: () => state.sql,
      maintenanceSql: () => state.maintenanceSql,
      tablePrefix,
      clock: state.dbClock,
      rows: {
        queries: state.queries,
        payloadColumn: state.rows.payloadColumn,
        codec: state.codec,
        nativeUpsert: state.native,
      },
    });
  }

  get usesNativeUpsert(): boolean {
    return this.state.native;
  }

  get tableName(): string {
    return this.state.table;
  }

  get sql(): SqlClient {
    return this.state.sql;
  }

  /** The client of the store's upkeep (see SqlFailoverStoreConfig.maintenanceSql). */
  get maintenanceSql(): SqlClient {
    return this.state.maintenanceSql;
  }

  storeMany(items: readonly StoreManyItem[]): Promise<void> {
    return this.writes.storeMany(items);
  }

  store<T>(entry: FailoverEntry<T>, type?: PayloadType): Promise<void> {
    return this.writes.store(entry, type);
  }

  storeNow<T>(entry: FailoverEntry<T>, type?: PayloadType): void | typeof NOT_NOW {
    return this.writes.storeNow(entry, type);
  }

  /** INSERT; on a duplicate key UPDATE; if the UPDATE finds no row, INSERT once more. */
  protected async fallbackStore(row: FailoverRowValues): Promise<void> {
    if (await this.tryInsert(row)) return;
    const updated = await this.update(row);
    if (updated > 0) return;
    if (!(await this.tryInsert(row))) {
      // Warn, as the seed does when its INSERT/UPDATE retries give up: this value was not
      // written (the other writer's row stays, and the next good call writes again).
      this.logger.warn(
        `Write of ${row.name}/${row.key} lost a race on ${this.state.table}: the row was removed after the ` +
          `INSERT found it, and another writer inserted it again before the re-INSERT; keeping that writer's row.`,
      );
    }
  }

  /** true when inserted, false on a duplicate key. */
  protected async tryInsert(row: FailoverRowValues): Promise<boolean> {
    const { sql, queries, ctx } = this.state;
    const s = queries.insert(ctx, row);
    try {
      await retried(() => sql.execute(s));
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** Rows updated (0 when the row vanished since the INSERT failed). */
  protected update(row: FailoverRowValues): Promise<number> {
    const { sql, queries, ctx } = this.state;
    const s = queries.update(ctx, row);
    return retried(() => sql.execute(s));
  }

  find<T>(name: string, key: string, type?: PayloadType): Promise<FailoverEntry<T> | undefined> {
    return this.reads.find(name, key, type);
  }

  findNow<T>(name: string, key: string, type?: PayloadType): FailoverEntry<T> | undefined | typeof NOT_NOW {
    return this.reads.findNow(name, key, type);
  }

  findAll<T>(name: string, type?: PayloadType): Promise<FailoverEntry<T>[]> {
    return this.reads.findAll(name, type);
  }

  countLive(name: string, now: Date): Promise<number> {
    return this.reads.countLive(name, now);
  }

  async delete(name: string, key: string): Promise<void> {
    const { sql, queries, ctx } = this.state;
    const s = queries.delete(ctx, name, key);
    await retried(() => sql.execute(s));
  }

  cleanByExpiry(expiry: Date, options?: CleanupBatchOptions): Promise<number> {
    return this.cleanup.cleanByExpiry(expiry, options);
  }

  /** Takes the cleanup lease for `leaseMs` (see FailoverSqlCleanup.claim). */
  claimCleanup(leaseMs: number, owner: string): Promise<boolean> {
    return this.cleanup.claim(leaseMs, owner, this.clock());
  }

  async now(): Promise<Date> {
    return new Date(await this.state.maintenanceSql.nowMillis());
  }

  /** The database clock, estimated without a round trip (see DatabaseClock). */
  clock(monotonic?: number): number {
    // An unknown dialect has no clock expression we trust: the process clock, as before.
    return this.state.dialectUnknown ? Date.now() : this.state.dbClock.now(monotonic);
  }

  async ping(): Promise<void> {
    await this.state.sql.nowMillis();
  }
}
