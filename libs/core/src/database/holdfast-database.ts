import type { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import type { Dialect } from '../dialect/dialect';
import { sqlDialect } from '../dialect/dialects';
import type { SqlDialect } from '../dialect/sql-dialect';
import type { LiveTable } from '../schema/live-table';
import { SchemaManager, type SchemaMode } from '../schema/schema-manager';
import type { TableSpec } from '../schema/table-spec';
import {
  ConnectionBudget,
  LEASE_LANE,
  type CoordinationLane,
  type DedicatedConnection,
} from './connection-budget';
import {
  configuredCoordinationPool,
  validateCoordinationPool,
  CoordinationPool,
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
   * Holdfast's own connections for the module's statements, opened from the DataSource's options
   * within the process's connection budget, so that they never queue behind the application's
   * work on a busy pool (default on; see CoordinationPoolOptions and ConnectionBudget;
   * configureCoordinationPool sets it for every module on a DataSource). `false`: the module uses
   * the DataSource's pool. Not on SQLite, whose one connection every statement takes its turn on.
   */
  coordinationPool?: CoordinationPoolOptions | false;
}

interface Resolved {
  dataSource: DataSource;
  name: Dialect;
  dialect: SqlDialect;
  /** Whether the module's statements go to coordination lanes (else the DataSource's pool). */
  coordinated: boolean;
}

/**
 * A module's way to its database, resolved lazily: the application's DataSource may be created
 * after the module's providers (TypeORM's async factory), so it is looked up on first use, at the
 * latest in the module's onModuleInit. It finds the default or named DataSource, detects the
 * dialect (or takes the module's), builds the module's SqlClient with its bounds
 * ({@link clientOptions}) on its coordination lane, and creates or checks the module's tables on
 * the application's pool (startup statements open no connection of Holdfast's: the budget opens
 * them all at once, once every module has said what it needs).
 */
export abstract class HoldfastDatabase {
  private resolved?: Resolved;
  private client?: SqlClient;
  private applicationClient?: SqlClient;
  /** The lanes this module uses (released at shutdown) and its dedicated connections. */
  private readonly pools = new Set<CoordinationPool>();
  private readonly dedicatedKeys = new Set<string>();

  protected constructor(
    protected readonly moduleRef: ModuleRef,
    private readonly resolver: DatabaseResolver,
    /** The module named in errors, e.g. 'InboxModule'. */
    private readonly module: string,
    private readonly database: HoldfastDatabaseOptions,
  ) {}

  /**
   * The module's client, built on first use: on its coordination lane ({@link coordinationLane},
   * opened within the budget on the first statement) for PostgreSQL, MySQL and MariaDB unless
   * `coordinationPool: false`, else on the DataSource's pool.
   */
  get sql(): SqlClient {
    return (this.client ??= this.laneSql(this.coordinationLane(), this.clientOptions()));
  }

  /**
   * A client on `lane` with `options` (the module's other statements of another kind: the inbox's
   * heartbeats on the lease lane, a `database` lock's held transaction on a lane of its own), or
   * on the DataSource's pool where the module has no coordination lanes.
   */
  protected laneSql(lane: CoordinationLane, options: SqlClientOptions = this.clientOptions()): SqlClient {
    const { dataSource, name, dialect, coordinated } = this.resolve();
    if (!coordinated) return sqlClientFor(dataSource, this.resolver, name, options);
    const pool = ConnectionBudget.of(dataSource, dialect).lane(lane);
    if (this.pools.has(pool)) void pool.release(); // counted once per module
    this.pools.add(pool);
    return new SqlClient(pool.dataSource, dialect, undefined, options, false, pool);
  }

  /**
   * A lane the module opens while it needs it (the inbox's deletes while it delivers a backlog)
   * and gives back with {@link closeLaneOnDemand}: admitted at once within the budget, never
   * waiting for room. Rejects with ConnectionBudgetError when the server has none, leaving nothing
   * open; undefined where the module has no coordination lanes.
   */
  protected async openLaneOnDemand(
    lane: CoordinationLane,
    options: SqlClientOptions = this.clientOptions(),
  ): Promise<SqlClient | undefined> {
    const { dataSource, dialect, coordinated } = this.resolve();
    if (!coordinated) return undefined;
    const budget = ConnectionBudget.of(dataSource, dialect);
    const pool = budget.lane(lane);
    this.pools.add(pool);
    try {
      await budget.admit(false);
    } catch (error) {
      this.pools.delete(pool);
      await pool.release();
      throw error;
    }
    return new SqlClient(pool.dataSource, dialect, undefined, options, false, pool);
  }

  /** Gives back a lane of {@link openLaneOnDemand} (closed once no other module uses it). */
  protected async closeLaneOnDemand(sql: SqlClient): Promise<void> {
    const pool = CoordinationPool.of(sql.dataSource);
    if (pool && this.pools.delete(pool)) await pool.release();
  }

  /**
   * A client on the application's pool for the statements that are the application's own work,
   * run at its rate, whose callers wait for them (the inbox's accepts), and for the module's
   * startup statements: on a small coordination lane they would queue in front of its leases. The
   * module's client itself when it has no coordination lanes.
   */
  protected get applicationSql(): SqlClient {
    const { dataSource, dialect, coordinated } = this.resolve();
    if (!coordinated) return this.sql;
    return (this.applicationClient ??= new SqlClient(dataSource, dialect, undefined, this.clientOptions()));
  }

  /**
   * Counts a connection the module opens itself (the inbox's LISTEN) in the process's budget, so
   * that the instance is admitted only if the server has room for it too; with `connection`, the
   * admission opens it (ConnectionBudget.dedicate). Nothing where the module has no coordination lanes.
   */
  dedicateConnection(key: string, what: string, connection?: DedicatedConnection): void {
    const { dataSource, dialect, coordinated } = this.resolve();
    if (!coordinated) return;
    ConnectionBudget.of(dataSource, dialect).dedicate(key, what, connection);
    this.dedicatedKeys.add(key);
  }

  /**
   * Resolves once the process's budget on this DataSource is open (every lane of every module
   * that declared one, see ConnectionBudget); rejects with ConnectionBudgetError when the server
   * has no room for it. At once where the module has no coordination lanes.
   */
  admitted(): Promise<void> {
    const { dataSource, dialect, coordinated } = this.resolve();
    if (!coordinated) return Promise.resolve();
    return ConnectionBudget.of(dataSource, dialect).admit();
  }

  /**
   * The lane of the module's own statements: the lease lane (Simba, the lockers,
   * `@ScheduledLock`), unless the module's statements are of another kind (the inbox's claims).
   */
  protected coordinationLane(): CoordinationLane {
    return LEASE_LANE;
  }

  /**
   * Whether this module's statements go to coordination lanes (when not turned off): true for
   * modules whose statements keep leases, claims and leadership. Overridden by a module whose
   * statements are its callers' own work.
   */
  protected usesCoordinationPool(): boolean {
    return true;
  }

  /**
   * Startup waits for the process's connection budget (every module's lanes, opened at once): an
   * instance the server has no room for stops here with ConnectionBudgetError, before anything of
   * Holdfast's runs. A subclass with its own onApplicationBootstrap calls this one first.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.pools.size || this.dedicatedKeys.size) await this.admitted();
  }

  /**
   * Gives back the module's lanes (the last module on a lane closes it): Nest calls it at
   * application shutdown, after the modules gave back their leases and claims
   * (beforeApplicationShutdown, onModuleDestroy). A subclass with its own onApplicationShutdown
   * calls this one.
   */
  async onApplicationShutdown(): Promise<void> {
    const pools = [...this.pools];
    this.pools.clear();
    const resolved = this.resolved;
    if (resolved && this.dedicatedKeys.size) {
      const budget = ConnectionBudget.existing(resolved.dataSource);
      for (const key of this.dedicatedKeys) budget?.forget(key);
      this.dedicatedKeys.clear();
    }
    this.client = undefined;
    await Promise.all(pools.map((pool) => pool.release()));
  }

  /** The bounds of the module's client on its statements and transactions (core's defaults here). */
  protected clientOptions(): SqlClientOptions {
    return {};
  }

  /** Creates or checks one of the module's tables, under its table prefix and schema mode. */
  protected applySchema(table: TableSpec): Promise<LiveTable> {
    return new SchemaManager(this.applicationSql).apply(
      table,
      this.database.tablePrefix,
      this.database.schema,
    );
  }

  private resolve(): Resolved {
    if (!this.resolved) {
      const dataSource = resolveDataSource(this.moduleRef, this.database.dataSource, this.module);
      const option = this.database.coordinationPool ?? configuredCoordinationPool(dataSource);
      validateCoordinationPool(this.module, option);
      const name = this.resolver.resolve(dataSource, this.database.dialect);
      const dialect = sqlDialect(name, { driverTimezone: driverTimezone(dataSource) ?? 'local' });
      const coordinated = option !== false && !dialect.singleConnection && this.usesCoordinationPool();
      this.resolved = { dataSource, name, dialect, coordinated };
    }
    return this.resolved;
  }
}
