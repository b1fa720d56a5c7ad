import type { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  HoldfastDatabase,
  SqlClient,
  UnsupportedDialectError,
  type Dialect,
  type SqlClientOptions,
} from '@holdfast/core/kit';
import type { DataSource } from 'typeorm';
import type { SqlStoreOptions } from '../failover.options';

/**
 * The SQL store's way to its database (core's HoldfastDatabase, as the other modules'): the
 * default or named DataSource and the SqlClient on it, resolved on first use. The dialect is
 * detected by the store's own `databaseResolver` when it has one, else the module's; a dialect
 * neither knows is reported to `onUnknownDialect` and read as MySQL's (portable statements).
 * The store creates or checks its table itself (SqlFailoverStore.init).
 */
export class FailoverDatabase extends HoldfastDatabase {
  private maintenance?: SqlClient;

  constructor(
    moduleRef: ModuleRef,
    resolver: () => DatabaseResolver,
    store: SqlStoreOptions,
    onUnknownDialect: (error: UnsupportedDialectError) => void,
    /** The callers' bound on a store wait (0: none), which the client's own bound follows. */
    private readonly storeTimeout = 0,
  ) {
    super(moduleRef, new FallbackResolver(resolver, onUnknownDialect), 'FailoverModule', {
      dataSource: store.dataSource,
      dialect: store.dialect,
      tablePrefix: store.tablePrefix ?? '',
      schema: store.schema ?? 'check',
    });
  }

  /**
   * The store's statements are its callers' own work, at their rate, each bounded by storeTimeout
   * (past it the caller goes on and the store is skipped for a while): they stay on the
   * application's pool rather than a small pool of their own, where a burst of callers would
   * queue behind one another (#31).
   */
  protected override usesCoordinationPool(): boolean {
    return false;
  }

  /**
   * A store statement on a connection that stops answering (a firewall that lost its state) is
   * destroyed with its connection at the callers' bound (#43), not left checked out of the
   * application's pool with nobody waiting for it: a pool of silenced connections held the store,
   * and the application's own work, for good.
   */
  protected override clientOptions(): SqlClientOptions {
    return {
      statementTimeout: this.storeTimeout > 0 ? this.storeTimeout : MAINTENANCE_STATEMENT_TIMEOUT_MS,
    };
  }

  /**
   * The store's upkeep (the table's check, clock readings, cleanup, counts), which no caller
   * waits for and which may take longer than storeTimeout: on the same pool, with a bound of its own.
   */
  get maintenanceSql(): SqlClient {
    const sql = this.sql;
    return (this.maintenance ??= new SqlClient(sql.dataSource, sql.dialect, undefined, {
      statementTimeout: MAINTENANCE_STATEMENT_TIMEOUT_MS,
    }));
  }
}

/** The bound on each wait of the store's upkeep statements. */
const MAINTENANCE_STATEMENT_TIMEOUT_MS = 10_000;

/** A DatabaseResolver (created on first use) whose unknown dialect is MySQL's, after a report. */
class FallbackResolver extends DatabaseResolver {
  private resolver?: DatabaseResolver;

  constructor(
    private readonly create: () => DatabaseResolver,
    private readonly onUnknownDialect: (error: UnsupportedDialectError) => void,
  ) {
    super();
  }

  override resolve(dataSource: DataSource, override?: Dialect): Dialect {
    try {
      return this.inner.resolve(dataSource, override);
    } catch (error) {
      if (!(error instanceof UnsupportedDialectError)) throw error;
      this.onUnknownDialect(error);
      return 'mysql';
    }
  }

  override serverVersion(dataSource: DataSource): string {
    return this.inner.serverVersion(dataSource);
  }

  private get inner(): DatabaseResolver {
    return (this.resolver ??= this.create());
  }
}
