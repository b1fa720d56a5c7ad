import type { ModuleRef } from '@nestjs/core';
import type { Dialect } from '../dialect/dialect';
import type { LiveTable } from '../schema/live-table';
import { SchemaManager, type SchemaMode } from '../schema/schema-manager';
import type { TableSpec } from '../schema/table-spec';
import { resolveDataSource, type DataSourceOption } from './data-source';
import type { DatabaseResolver } from './database-resolver';
import type { SqlClient, SqlClientOptions } from './sql-client';
import { sqlClientFor } from './sql-client.factory';

/** What a module's resolved options say about its database. */
export interface HoldfastDatabaseOptions {
  /** The DataSource, or the name of a @nestjs/typeorm one; default the default one. */
  dataSource?: DataSourceOption;
  /** Overrides the dialect detected by the DatabaseResolver. */
  dialect?: Dialect;
  tablePrefix: string;
  schema: SchemaMode;
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

  protected constructor(
    protected readonly moduleRef: ModuleRef,
    private readonly resolver: DatabaseResolver,
    /** The module named in errors, e.g. 'InboxModule'. */
    private readonly module: string,
    private readonly database: HoldfastDatabaseOptions,
  ) {}

  /** The module's client, built on first use. */
  get sql(): SqlClient {
    if (!this.client) {
      const dataSource = resolveDataSource(this.moduleRef, this.database.dataSource, this.module);
      this.client = sqlClientFor(dataSource, this.resolver, this.database.dialect, this.clientOptions());
    }
    return this.client;
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
