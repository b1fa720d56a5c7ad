import type { ModuleRef } from '@nestjs/core';
import type { Dialect } from '../dialect/dialect';
import { sqlDialect } from '../dialect/dialects';
import type { LiveTable } from '../schema/live-table';
import { SchemaManager, type SchemaMode } from '../schema/schema-manager';
import type { TableSpec } from '../schema/table-spec';
import {
  configuredCoordinationPool,
  CoordinationPool,
  validateCoordinationPool,
  type CoordinationPoolOptions,
} from './coordination-pool';
import { driverTimezone, resolveDataSource, type DataSourceOption } from './data-source';
import type { DatabaseResolver } from './database-resolver';
import { SqlClient, type SqlClientOptions } from './sql-client';
import { sqlClientFor } from './sql-client.factory';

/** What a module's resolved options say about its database. */
export interface HoldfastDatabaseOptions {
  /** The DataSource, or the name of a @nestjs/typeorm one; default the default one. */
  dataSource?: DataSourceOption;
  /** Overrides the dialect detected by the DatabaseResolver. */
  dialect?: Dialect;
  tablePrefix: string;
  schema: SchemaMode;
  /**
   * The module's own small pool for its statements, opened from the DataSource's options, so
   * that they never queue behind the application's work on a busy pool (default on, sized by
   * the module's needs; see CoordinationPoolOptions; configureCoordinationPool sets it for every
   * module on a DataSource). `false`: the module uses the DataSource's
   * pool. Not on SQLite, whose one connection every statement takes its turn on.
   */
  coordinationPool?: CoordinationPoolOptions | false;
}

/**
 * A module's way to its database, resolved lazily: the application's DataSource may be created
 * after the module's providers (TypeORM's async factory), so it is looked up on first use, at the
 * latest in the module's onModuleInit. It finds the default or named DataSource, detects the
 * dialect (or takes the module's), builds the module's SqlClient with its bounds
 * ({@link clientOptions}) and creates or checks the module's tables.
 */
export abstract class HoldfastDatabase {
  private client?: SqlClient;
  private pool?: CoordinationPool;
  private applicationClient?: SqlClient;

  protected constructor(
    protected readonly moduleRef: ModuleRef,
    private readonly resolver: DatabaseResolver,
    /** The module named in errors, e.g. 'InboxModule'. */
    private readonly module: string,
    private readonly database: HoldfastDatabaseOptions,
  ) {}

  /**
   * The module's client, built on first use: on its own coordination pool (connected on the first
   * statement) for PostgreSQL, MySQL and MariaDB unless `coordinationPool: false`, else on the
   * DataSource's pool.
   */
  get sql(): SqlClient {
    if (!this.client) {
      const dataSource = resolveDataSource(this.moduleRef, this.database.dataSource, this.module);
      const option = this.database.coordinationPool ?? configuredCoordinationPool(dataSource);
      validateCoordinationPool(this.module, option);
      const name = this.resolver.resolve(dataSource, this.database.dialect);
      const dialect = sqlDialect(name, { driverTimezone: driverTimezone(dataSource) ?? 'local' });
      if (option === false || dialect.singleConnection || !this.usesCoordinationPool()) {
        this.client = sqlClientFor(dataSource, this.resolver, name, this.clientOptions());
      } else {
        this.pool = new CoordinationPool(dataSource, option ?? {});
        this.client = new SqlClient(
          this.pool.dataSource,
          dialect,
          undefined,
          this.clientOptions(),
          false,
          this.pool,
        );
      }
    }
    return this.client;
  }

  /**
   * A client on the application's pool for the statements that are the application's own work,
   * run at its rate, whose callers wait for them (the inbox's accepts): on the module's small
   * coordination pool they would queue in front of its leases. The module's client itself when
   * it has no coordination pool.
   */
  protected get applicationSql(): SqlClient {
    const sql = this.sql;
    if (!this.pool) return sql;
    // The same dialect: the application's DataSource is the one the coordination pool copies.
    return (this.applicationClient ??= new SqlClient(
      this.pool.application,
      sql.dialect,
      undefined,
      this.clientOptions(),
    ));
  }

  /**
   * Whether this module's statements go to a coordination pool of its own (when not turned off):
   * true for modules whose statements keep leases, claims and leadership. Overridden by a module
   * whose statements are its callers' own work.
   */
  protected usesCoordinationPool(): boolean {
    return true;
  }

  /**
   * Closes the module's coordination pool: Nest calls it at application shutdown, after the
   * modules gave back their leases and claims (beforeApplicationShutdown, onModuleDestroy).
   * A subclass with its own onApplicationShutdown calls this one.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.pool?.close();
  }

  /** The bounds of the module's client on its statements and transactions (core's defaults here). */
  protected clientOptions(): SqlClientOptions {
    return {};
  }

  /** Creates or checks one of the module's tables, under its table prefix and schema mode. */
  protected applySchema(table: TableSpec): Promise<LiveTable> {
    return new SchemaManager(this.sql).apply(table, this.database.tablePrefix, this.database.schema);
  }
}
