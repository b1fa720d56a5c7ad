import {
  SqlClient,
  sqlRetryCounter,
  tableName,
  withTransientRetry,
  type SchemaMode,
} from '@holdfast/core/kit';
import { FailoverTypeRegistry } from '../payload/failover-type.registry';
import { PayloadCodec } from '../payload/payload-codec';
import { DatabaseClock } from './database-clock';
import { FailoverRowCodec } from './failover-row.codec';
import { FAILOVER_STORE_TABLE } from './failover-store.table';
import { FailoverStoreQueryResolver, type FailoverQueryContext } from './failover-store-query.resolver';
import { PayloadColumnResolver } from './payload-column.resolver';

/**
 * How one store's rows are written and read: the statement builders, the PAYLOAD column's
 * resolver, the payload codec and the write's shape. Each has Holdfast's default.
 */
export interface SqlFailoverStoreRows {
  queries?: FailoverStoreQueryResolver;
  payloadColumn?: PayloadColumnResolver;
  /**
   * The SQL and PAYLOAD resolvers found at `init()` (module wiring: Nest providers the app may
   * replace, which exist only once the app is built); they win over `queries`/`payloadColumn`.
   */
  atInit?: () => Promise<{ queries: FailoverStoreQueryResolver; payloadColumn: PayloadColumnResolver }>;
  codec?: PayloadCodec;
  /** false: INSERT then UPDATE-on-duplicate from the start (unknown dialects). Default true. */
  nativeUpsert?: boolean;
}

/** A SqlFailoverStore's clients, table, clock, and how its rows are written and read. */
export interface SqlFailoverStoreConfig {
  /** The SQL client, or a function giving it once the DataSource is up (module wiring). */
  sql: SqlClient | (() => SqlClient);
  /**
   * The client for the store's upkeep, whose statements no caller waits for and which may take
   * longer than a caller's storeTimeout: the table's check at init, the clock readings, the
   * expiry cleanup, counts. Default `sql`.
   */
  maintenanceSql?: SqlClient | (() => SqlClient);
  tablePrefix?: string;
  /** What to do with the table at init: default 'check' (index missing: a warning with the DDL). */
  schema?: SchemaMode;
  /** The database clock (shared by the stores of one database). */
  clock?: DatabaseClock;
  /** The statements, the PAYLOAD column and the codec (see SqlFailoverStoreRows). */
  rows?: SqlFailoverStoreRows;
}

/** Deadlock victims and serialization failures are retried, and counted in `holdfast.failover.sql.retries`. */
const countRetry = sqlRetryCounter('failover');
export function retried<T>(work: () => Promise<T>): Promise<T> {
  return withTransientRetry(work, { onRetry: countRetry });
}

/**
 * What the parts of one SqlFailoverStore (writes, reads, cleanup) share: the client, the table,
 * the statement builders and the PAYLOAD resolver (replaced once at init by the app's providers),
 * whether the native upsert is in use, and the database clock.
 */
export class SqlStoreState {
  readonly table: string;
  queries: FailoverStoreQueryResolver;
  rows: FailoverRowCodec;
  readonly codec: PayloadCodec;
  native: boolean;
  /** The dialect is unknown: the table is not checked and no statement reads the database clock. */
  dialectUnknown = false;
  readonly dbClock: DatabaseClock;
  private client?: SqlClient;
  private maintenanceClient?: SqlClient;
  private context?: FailoverQueryContext;

  constructor(private readonly config: SqlFailoverStoreConfig) {
    this.table = tableName(config.tablePrefix, FAILOVER_STORE_TABLE.name);
    const rows = config.rows ?? {};
    this.queries = rows.queries ?? new FailoverStoreQueryResolver();
    this.codec = rows.codec ?? new PayloadCodec(new FailoverTypeRegistry());
    this.rows = new FailoverRowCodec(rows.payloadColumn ?? new PayloadColumnResolver(), this.codec);
    this.native = rows.nativeUpsert !== false;
    this.dbClock = config.clock ?? new DatabaseClock(() => this.maintenanceSql.nowMillis());
  }

  get sql(): SqlClient {
    if (!this.client) {
      this.client = typeof this.config.sql === 'function' ? this.config.sql() : this.config.sql;
    }
    return this.client;
  }

  /** The client for the store's upkeep (see SqlFailoverStoreConfig.maintenanceSql). */
  get maintenanceSql(): SqlClient {
    if (!this.maintenanceClient) {
      const option = this.config.maintenanceSql;
      this.maintenanceClient =
        option === undefined ? this.sql : typeof option === 'function' ? option() : option;
    }
    return this.maintenanceClient;
  }

  /** What the statement builders get (fixed once the dialect is known). */
  get ctx(): FailoverQueryContext {
    return (this.context ??= { table: this.table, dialect: this.sql.dialect, clock: !this.dialectUnknown });
  }

  /** Takes the resolvers found at init, and fixes the statement context. */
  compile(queries: FailoverStoreQueryResolver, payloadColumn: PayloadColumnResolver): void {
    this.queries = queries;
    this.rows = new FailoverRowCodec(payloadColumn, this.codec);
    this.context = undefined;
  }
}
