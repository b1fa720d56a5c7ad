import { Logger } from '@nestjs/common';
import {
  SchemaManager,
  declarePoolNeed,
  SqlClient,
  isDuplicateKeyError,
  isSyntaxError,
  isTransientConflictError,
  sleep,
  tableName,
  toNumber,
  sqlRetryCounter,
  withTransientRetry,
  type SchemaMode,
  type SqlRowReader,
} from '@holdfast/core/kit';
import { FailoverTypeRegistry } from '../payload/failover-type.registry';
import { PayloadCodec } from '../payload/payload-codec';
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
import { DatabaseClock } from './database-clock';
import { FAILOVER_STORE_TABLE } from './failover-store.table';
import { FailoverQueryContext, FailoverStoreQueryResolver } from './failover-store-query.resolver';
import { PayloadColumnResolver } from './payload-column.resolver';

/** The point read and the one-row upsert: fixed texts, kept planned per connection on PostgreSQL. */
const PREPARED = { prepared: true } as const;

/** Deadlock victims and serialization failures are retried, and counted in `holdfast.failover.sql.retries`. */
const countRetry = sqlRetryCounter('failover');
function retried<T>(work: () => Promise<T>): Promise<T> {
  return withTransientRetry(work, { onRetry: countRetry });
}

export interface SqlFailoverStoreConfig {
  /** The SQL client, or a function giving it once the DataSource is up (module wiring). */
  sql: SqlClient | (() => SqlClient);
  tablePrefix?: string;
  queries?: FailoverStoreQueryResolver;
  payloadColumn?: PayloadColumnResolver;
  /**
   * The SQL and PAYLOAD resolvers found at `init()` (module wiring: Nest providers the app may
   * replace, which exist only once the app is built); they win over `queries`/`payloadColumn`.
   */
  parts?: () => Promise<{ queries: FailoverStoreQueryResolver; payloadColumn: PayloadColumnResolver }>;
  codec?: PayloadCodec;
  /** What to do with the table at init: default 'check' (index missing: a warning with the DDL). */
  schema?: SchemaMode;
  /** false: INSERT then UPDATE-on-duplicate from the start (unknown dialects). Default true. */
  nativeUpsert?: boolean;
  /** The database clock (shared by the stores of one database). */
  clock?: DatabaseClock;
}

/** The cleanup lease row's FAILOVER_NAME (reserved) and FAILOVER_KEY. */
export const CLEANUP_LEASE_NAME = '$holdfast-cleanup';
const CLEANUP_LEASE_KEY = 'lease';

interface FindReader {
  reader: SqlRowReader;
  /** Where each column sits in a row of the reader. */
  asOf: number;
  expireOn: number;
  payload: number;
  payloadClass: number;
}

interface Row {
  db_now?: unknown;
  as_of: unknown;
  expire_on: unknown;
  payload: unknown;
  payload_class: string;
}

/**
 * The durable store on `<prefix>FAILOVER_STORE`. Writes are one native upsert; if the database
 * rejects its syntax once, or the dialect is unknown, it switches for good to INSERT, then UPDATE
 * on a duplicate key, with one bounded re-INSERT when that UPDATE finds no row (the row was
 * cleaned in between).
 */
export class SqlFailoverStore implements FailoverStore, SynchronousFind, SynchronousStore {
  readonly description: string;
  private readonly logger = new Logger(SqlFailoverStore.name);
  private queries: FailoverStoreQueryResolver;
  private payloadColumn: PayloadColumnResolver;
  private readonly codec: PayloadCodec;
  private readonly table: string;
  private client?: SqlClient;
  private ctx?: FailoverQueryContext;
  private native: boolean;
  private dialectUnknown = false;
  private sqlText?: Record<
    | 'upsert'
    | 'insert'
    | 'update'
    | 'find'
    | 'findWithClock'
    | 'findAll'
    | 'delete'
    | 'clean'
    | 'countLive'
    | 'claimLease',
    string
  >;
  private readonly multiRowUpserts = new Map<number, string>();
  private readonly cleanBatches = new Map<number, string>();
  private readonly dbClock: DatabaseClock;
  /**
   * The find statement as a synchronous row reader (SQLite) and where its columns sit in a row;
   * null when the client cannot read synchronously or the (custom) query lacks a column.
   */
  private findReader?: FindReader | null;

  constructor(private readonly config: SqlFailoverStoreConfig) {
    this.table = tableName(config.tablePrefix, FAILOVER_STORE_TABLE.name);
    this.queries = config.queries ?? new FailoverStoreQueryResolver();
    this.payloadColumn = config.payloadColumn ?? new PayloadColumnResolver();
    this.codec = config.codec ?? new PayloadCodec(new FailoverTypeRegistry());
    this.native = config.nativeUpsert !== false;
    this.description = `sql:${this.table}`;
    this.dbClock = config.clock ?? new DatabaseClock(() => this.sql.nowMillis());
  }

  /** Nest calls this on the provider; direct users call `init()`. */
  async onModuleInit(): Promise<void> {
    await this.init();
  }

  async init(): Promise<this> {
    if (this.sqlText) return this;
    if (this.config.parts)
      ({ queries: this.queries, payloadColumn: this.payloadColumn } = await this.config.parts());
    void this.sql; // resolves the client (and the dialect) before anything else
    if (this.dialectUnknown) {
      this.logger.warn(`Dialect unknown: table ${this.table} was not checked; create it with 'npm run ddl'.`);
    } else {
      await new SchemaManager(this.sql).apply(
        FAILOVER_STORE_TABLE,
        this.config.tablePrefix ?? '',
        this.config.schema ?? 'check',
      );
      // A caller's store write (or the write-behind flush), bounded by storeTimeout.
      declarePoolNeed(this.sql, { component: `failover (${this.table})`, connections: 1 });
    }
    this.compile();
    if (!this.dialectUnknown) await this.dbClock.sync();
    return this;
  }

  /**
   * Switches to INSERT then UPDATE for good (unknown dialect, or an upsert the server rejects).
   * With an unknown dialect the table cannot be introspected either: it is not checked.
   */
  useFallback(reason: string, options: { unknownDialect?: boolean } = {}): void {
    if (options.unknownDialect) this.dialectUnknown = true;
    if (!this.native) return;
    this.native = false;
    this.logger.warn(reason);
  }

  /** A store on another table (a tenant's), sharing this one's client, SQL and codec. */
  withTablePrefix(tablePrefix: string): SqlFailoverStore {
    return new SqlFailoverStore({
      ...this.config,
      sql: () => this.sql,
      tablePrefix,
      parts: undefined,
      queries: this.queries,
      payloadColumn: this.payloadColumn,
      codec: this.codec,
      nativeUpsert: this.native,
      clock: this.dbClock,
    });
  }

  get usesNativeUpsert(): boolean {
    return this.native;
  }

  get tableName(): string {
    return this.table;
  }

  get sql(): SqlClient {
    if (!this.client) {
      this.client = typeof this.config.sql === 'function' ? this.config.sql() : this.config.sql;
    }
    return this.client;
  }

  private compile(): void {
    const ctx = (this.ctx = { table: this.table, dialect: this.sql.dialect, clock: !this.dialectUnknown });
    this.sqlText = {
      upsert: this.queries.upsert(ctx),
      insert: this.queries.insert(ctx),
      update: this.queries.update(ctx),
      find: this.queries.find({ ...ctx, clock: false }),
      findWithClock: this.queries.find(ctx),
      findAll: this.queries.findAll(ctx),
      delete: this.queries.delete(ctx),
      clean: this.queries.cleanByExpiry(ctx),
      countLive: this.queries.countLive(ctx),
      claimLease: this.queries.claimLease(ctx),
    };
    this.multiRowUpserts.clear();
    this.cleanBatches.clear();
    this.findReader = undefined;
  }

  private rowReader(): FindReader | null {
    if (this.findReader !== undefined) return this.findReader;
    const find = this.q.find;
    let reader = this.sql.rowReader(find);
    const needed = ['as_of', 'expire_on', 'payload', 'payload_class'];
    if (!reader || !needed.every((c) => reader!.columns.includes(c))) return (this.findReader = null);
    // The timestamps in epoch ms when the database computes them more cheaply than Date parses them.
    const millis = this.sql.dialect.timestampSql().millis;
    if (millis) {
      try {
        reader = this.sql.rowReader(
          `SELECT ${millis('as_of')} AS as_of, ${millis('expire_on')} AS expire_on, payload, payload_class FROM (${find})`,
        )!;
      } catch {
        // A (custom) find that cannot be a subquery: read as it is.
      }
    }
    const [asOf, expireOn, payload, payloadClass] = needed.map((c) => reader!.columns.indexOf(c));
    return (this.findReader = { reader, asOf, expireOn, payload, payloadClass });
  }

  private get q() {
    if (!this.sqlText) this.compile();
    return this.sqlText!;
  }

  private params(entry: FailoverEntry<unknown>, type?: PayloadType): unknown[] {
    const { payload, payloadClass } = this.codec.encode(entry.payload, type, entry.name);
    const d = this.sql.dialect;
    return [
      entry.name,
      entry.key,
      d.timestampParam(entry.asOf),
      d.timestampParam(entry.expireOn),
      this.payloadColumn.bind(payload, d),
      payloadClass,
    ];
  }

  /**
   * One multi-row upsert per chunk of up to 500 rows, keys sorted so that concurrent batches
   * lock rows in the same order (no deadlock between two flushers on MariaDB).
   */
  async storeMany(items: readonly StoreManyItem[]): Promise<void> {
    if (!this.native) {
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
    for (let start = 0; start < sorted.length; start += 500) {
      const chunk = sorted.slice(start, start + 500);
      const params = chunk.flatMap((item) => this.params(item.entry, item.type));
      let sql = this.multiRowUpserts.get(chunk.length);
      if (!sql)
        this.multiRowUpserts.set(
          chunk.length,
          (sql = this.queries.upsert(
            this.ctx ?? { table: this.table, dialect: this.sql.dialect },
            chunk.length,
          )),
        );
      try {
        await retried(() => this.sql.execute(sql!, params));
      } catch (error) {
        if (!isSyntaxError(error)) throw error;
        this.useFallback(
          `Multi-row upsert on ${this.table} was rejected as a syntax error; using INSERT then UPDATE from now on.`,
        );
        for (const item of chunk) await this.store(item.entry, item.type);
      }
    }
  }

  async store<T>(entry: FailoverEntry<T>, type?: PayloadType): Promise<void> {
    const params = this.params(entry, type);
    if (this.native) {
      try {
        await retried(() => this.sql.execute(this.q.upsert, params, PREPARED));
        return;
      } catch (error) {
        if (!isSyntaxError(error)) throw error;
        this.useFallback(
          `Native upsert on ${this.table} was rejected as a syntax error; using INSERT then UPDATE from now on. ` +
            `(${(error as Error).message})`,
        );
      }
    }
    await this.fallbackStore(params);
  }

  /**
   * The same upsert, run synchronously when the database can (SQLite with its connection free):
   * the success path with `async: false` then costs no promise hop. NOT_NOW when it cannot, and
   * for what `store` handles with waits or more statements (a conflict retried with backoff, the
   * INSERT-then-UPDATE fallback): the caller then uses `store`.
   */
  storeNow<T>(entry: FailoverEntry<T>, type?: PayloadType): void | typeof NOT_NOW {
    const sql = this.sql;
    if (!this.native || !sql.runsSynchronously) return NOT_NOW;
    const params = this.params(entry, type);
    let changed: number | undefined;
    try {
      changed = sql.executeSync(this.q.upsert, params);
    } catch (error) {
      if (isTransientConflictError(error) || isSyntaxError(error)) return NOT_NOW;
      throw error;
    }
    return changed === undefined ? NOT_NOW : undefined;
  }

  /** INSERT; on a duplicate key UPDATE; if the UPDATE finds no row, INSERT once more. */
  protected async fallbackStore(params: unknown[]): Promise<void> {
    if (await this.tryInsert(params)) return;
    const [name, key, asOf, expireOn, payload, payloadClass] = params;
    const updated = await this.update([asOf, expireOn, payload, payloadClass, name, key]);
    if (updated > 0) return;
    if (!(await this.tryInsert(params))) {
      // Warn, as the seed does when its INSERT/UPDATE retries give up: this value was not
      // written (the other writer's row stays, and the next good call writes again).
      this.logger.warn(
        `Write of ${String(name)}/${String(key)} lost a race on ${this.table}: the row was removed after the ` +
          `INSERT found it, and another writer inserted it again before the re-INSERT; keeping that writer's row.`,
      );
    }
  }

  /** true when inserted, false on a duplicate key. */
  protected async tryInsert(params: unknown[]): Promise<boolean> {
    try {
      await retried(() => this.sql.execute(this.q.insert, params));
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** Rows updated (0 when the row vanished since the INSERT failed). */
  protected update(params: unknown[]): Promise<number> {
    return retried(() => this.sql.execute(this.q.update, params));
  }

  /** Written with `then` rather than `async`: it is the recovery path's read. */
  find<T>(name: string, key: string, type?: PayloadType): Promise<FailoverEntry<T> | undefined> {
    if (this.sql.runsSynchronously) {
      // SQLite with its connection free: the cached raw-mode read, no row object.
      try {
        const found = this.findNow<T>(name, key, type);
        if (found !== NOT_NOW) return Promise.resolve(found);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    // At most one read a second also reads the database clock (and corrects DatabaseClock).
    const sample = !this.dialectUnknown && this.dbClock.wantsSample();
    const sent = sample ? DatabaseClock.monotonic() : 0;
    return this.sql
      .query<Row>(sample ? this.q.findWithClock : this.q.find, [name, key], PREPARED)
      .then((rows) => {
        const row = rows[0];
        if (row && sample) this.observeClock(row, sent);
        return row && this.entryOfRow<T>(row, name, key, type);
      });
  }

  /**
   * The same read, answered synchronously when the database can (SQLite with its connection
   * free): the recovery path then costs no promise hop beyond the upstream's own rejection.
   * NOT_NOW when it cannot; the caller then uses `find`.
   */
  findNow<T>(name: string, key: string, type?: PayloadType): FailoverEntry<T> | undefined | typeof NOT_NOW {
    const sample = !this.dialectUnknown && this.dbClock.wantsSample();
    const fast = !sample && this.rowReader();
    if (fast) {
      // The common read: one cached statement, one row as an array, no object per row.
      const values = fast.reader.row([name, key]);
      if (values === undefined) return NOT_NOW;
      if (values === null) return undefined;
      return this.entryOf<T>(
        values[fast.asOf],
        values[fast.expireOn],
        values[fast.payload],
        values[fast.payloadClass] as string,
        name,
        key,
        type,
      );
    }
    const sent = sample ? DatabaseClock.monotonic() : 0;
    const rows = this.sql.querySync<Row>(sample ? this.q.findWithClock : this.q.find, [name, key]);
    if (!rows) return NOT_NOW;
    const row = rows[0];
    if (row && sample) this.observeClock(row, sent);
    return row && this.entryOfRow<T>(row, name, key, type);
  }

  private observeClock(row: Row, sent: number): void {
    if (row.db_now !== undefined && row.db_now !== null)
      this.dbClock.observe(toNumber(row.db_now), sent, DatabaseClock.monotonic());
  }

  private entryOfRow<T>(row: Row, name: string, key: string, type?: PayloadType): FailoverEntry<T> {
    return this.entryOf(row.as_of, row.expire_on, row.payload, row.payload_class, name, key, type);
  }

  private entryOf<T>(
    asOf: unknown,
    expireOn: unknown,
    payload: unknown,
    payloadClass: string,
    name: string,
    key: string,
    type?: PayloadType,
  ): FailoverEntry<T> {
    const d = this.sql.dialect;
    const json = this.payloadColumn.read(payload, name, payloadClass);
    return {
      name,
      key,
      asOf: d.readTimestamp(asOf),
      expireOn: d.readTimestamp(expireOn),
      payload: this.codec.decode<T>(name, json, payloadClass, type),
    };
  }

  async findAll<T>(name: string, type?: PayloadType): Promise<FailoverEntry<T>[]> {
    const rows = await this.sql.query<Row & { failover_key: string }>(this.q.findAll, [name]);
    const d = this.sql.dialect;
    return rows.map((row) => ({
      name,
      key: row.failover_key,
      asOf: d.readTimestamp(row.as_of),
      expireOn: d.readTimestamp(row.expire_on),
      payload: this.codec.decode<T>(
        name,
        this.payloadColumn.read(row.payload, name, row.payload_class),
        row.payload_class,
        type,
      ),
    }));
  }

  async countLive(name: string, now: Date): Promise<number> {
    const [row] = await this.sql.query<{ n: unknown }>(this.q.countLive, [
      name,
      this.sql.dialect.timestampParam(now),
    ]);
    return toNumber(row.n);
  }

  async delete(name: string, key: string): Promise<void> {
    await retried(() => this.sql.execute(this.q.delete, [name, key]));
  }

  /**
   * Deletes in statements of at most `batchSize` rows (autocommit: each its own short
   * transaction), yielding between them, until a statement removes nothing.
   */
  async cleanByExpiry(expiry: Date, options: CleanupBatchOptions = {}): Promise<number> {
    const cutoff = this.sql.dialect.timestampParam(expiry);
    if (this.dialectUnknown) {
      const removed = await retried(() => this.sql.execute(this.q.clean, [cutoff]));
      options.onBatch?.(removed);
      return removed;
    }
    const batchSize = options.batchSize ?? this.sql.dialect.cleanupBatchRows;
    let statement = this.cleanBatches.get(batchSize);
    if (!statement) {
      statement = this.queries.cleanBatch(
        this.ctx ?? { table: this.table, dialect: this.sql.dialect },
        batchSize,
      );
      this.cleanBatches.set(batchSize, statement);
    }
    let total = 0;
    for (;;) {
      const removed = await retried(() => this.sql.execute(statement, [cutoff]));
      total += removed;
      options.onBatch?.(removed);
      // Until a statement finds nothing: a short batch may only mean that a caller re-stored
      // some of its rows meanwhile (PostgreSQL rechecks EXPIRE_ON), not that none is left.
      if (removed === 0) return total;
      if (options.pause) await sleep(options.pause);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * The cleanup lease: a row of this table (name CLEANUP_LEASE_NAME) whose EXPIRE_ON is the end
   * of the lease on the database clock. Taken by an UPDATE that only matches an expired lease,
   * or by the INSERT of a first one; two instances never both get it.
   */
  async claimCleanup(leaseMs: number, owner: string): Promise<boolean> {
    const d = this.sql.dialect;
    const now = this.clock();
    const asOf = d.timestampParam(new Date(now));
    const until = d.timestampParam(new Date(now + leaseMs));
    const payload = this.payloadColumn.bind(JSON.stringify(owner), d);
    const claimed = await retried(() =>
      this.sql.execute(this.q.claimLease, [
        asOf,
        until,
        payload,
        CLEANUP_LEASE_NAME,
        CLEANUP_LEASE_KEY,
        asOf,
      ]),
    );
    if (claimed > 0) return true;
    return this.tryInsert([CLEANUP_LEASE_NAME, CLEANUP_LEASE_KEY, asOf, until, payload, 'String']);
  }

  async now(): Promise<Date> {
    return new Date(await this.sql.nowMillis());
  }

  /** The database clock, estimated without a round trip (see DatabaseClock). */
  clock(monotonic?: number): number {
    // An unknown dialect has no clock expression we trust: the process clock, as before.
    return this.dialectUnknown ? Date.now() : this.dbClock.now(monotonic);
  }

  async ping(): Promise<void> {
    await this.sql.nowMillis();
  }
}
