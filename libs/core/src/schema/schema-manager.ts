import { Logger } from '@nestjs/common';
import { SqlClient } from '../database/sql-client';
import { isAlreadyExistsError, isNodeNotReadyError } from '../database/sql-errors';
import { SchemaMissingError } from '../errors/holdfast.error';
import { tableName } from '../naming/table-prefix';
import { monotonicMillis, sleep } from '../time/monotonic';
import { statement } from '../database/statement';
import { Catalog, type CatalogIndex } from './catalog';
import { createIndexSql, createTableSql, indexName } from './ddl';
import { checkLiveTable } from './column-check';
import { LiveTable } from './live-table';
import { SchemaLock } from './schema-lock';
import { TableSpec } from './table-spec';

/**
 * What a module does with its tables at startup: 'create' makes missing tables and indexes
 * (never altering an existing table), 'check' reports a missing table as an error and a
 * missing index as a warning with the DDL to run, 'none' trusts the migrations.
 */
export type SchemaMode = 'create' | 'check' | 'none';
export const SCHEMA_MODES: readonly SchemaMode[] = ['create', 'check', 'none'];

/** What the schema step's client waits beyond the server's own bound on the schema lock. */
const SCHEMA_WAIT_MARGIN_MS = 5_000;

export interface SchemaManagerOptions {
  /**
   * How long the schema step waits for another instance's schema step, and how long it keeps
   * trying while the server answers that it cannot serve yet (default 60 s each).
   */
  lockTimeoutMs?: number;
}

/**
 * Creates or checks a module's table at startup. The whole step (look, create what is missing,
 * read the live table, check it) runs under a database lock, so replicas that boot at the same
 * moment on fresh tables take turns instead of racing: PostgreSQL `pg_advisory_xact_lock` in a
 * transaction (works behind PgBouncer in transaction mode), MySQL/MariaDB `GET_LOCK` on one
 * connection, SQLite the write lock (`BEGIN IMMEDIATE`). DDL uses `IF NOT EXISTS` where the
 * dialect has it, and "already exists" counts as success once a re-check finds the object.
 */
export class SchemaManager {
  private readonly logger = new Logger(SchemaManager.name);
  private readonly lockTimeoutMs: number;
  private readonly sql: SqlClient;
  private readonly catalog: Catalog;

  constructor(sql: SqlClient, options: SchemaManagerOptions = {}) {
    this.lockTimeoutMs = options.lockTimeoutMs ?? 60_000;
    // A module's client may bound its waits far below the wait for another instance's schema
    // step (Simba: a third of its transition): the step's waits get the lock's bound and a margin.
    this.sql = sql.withStatementTimeoutAtLeast(this.lockTimeoutMs + SCHEMA_WAIT_MARGIN_MS);
    this.catalog = Catalog.of(this.sql);
  }

  /**
   * Creates (mode 'create') or checks (mode 'check') the table, then reads the live table and
   * checks every spec column against it (SchemaMismatchError when one is missing or of a type the
   * module cannot use). Returns the live table, so a module can look at lengths or optional
   * columns; mode 'none' reads it without checking anything.
   */
  async apply(spec: TableSpec, prefix: string, mode: SchemaMode): Promise<LiveTable> {
    const table = tableName(prefix, spec.name);
    return this.whileNodeNotReady(table, async () => {
      if (mode === 'none') return this.describe(spec, table);
      return (
        (await this.inPlace(spec, prefix)) ??
        this.underSchemaLock(table, (locked) => locked.step(spec, prefix, mode))
      );
    });
  }

  /**
   * The live table when the table and every index of `spec` are there already and its columns
   * pass the check (every boot but a fresh database's first), read without the schema lock: two
   * catalog reads, and replicas booting together do not take turns (at 5 ms from the database,
   * the locked step cost each one about 80 ms per table, one replica after the other). Else
   * undefined, and the locked step decides: it creates what is missing and reports what is wrong.
   * Nothing is written here, so a replica creating the table meanwhile is no race.
   */
  private async inPlace(spec: TableSpec, prefix: string): Promise<LiveTable | undefined> {
    const table = tableName(prefix, spec.name);
    const columns = await this.catalog.columns(table);
    if (!columns?.length) return undefined;
    const live = new LiveTable(table, true, columns);
    try {
      checkLiveTable(this.sql.dialect, spec, live);
    } catch {
      return undefined;
    }
    if (!spec.indexes?.length) return live;
    const indexes = await this.catalogIndexes(table);
    const complete = spec.indexes.every((index) =>
      hasIndex(indexes, indexName(prefix, index), index.columns),
    );
    return complete ? live : undefined;
  }

  /**
   * Runs the schema step again while the server answers that it cannot serve yet
   * (isNodeNotReadyError: a Galera node that is not a synced member yet, 1047, as right after it
   * rejoined; a read-only node during a switchover): part of an outage at boot, not a schema
   * error. Tries again with a growing pause (0.1 s to 2 s) until lockTimeoutMs has passed, then
   * throws the server's error. Any other error is thrown at once.
   */
  private async whileNodeNotReady<T>(table: string, step: () => Promise<T>): Promise<T> {
    const deadline = monotonicMillis() + this.lockTimeoutMs;
    let pause = 100;
    let warned = false;
    for (;;) {
      try {
        return await step();
      } catch (error) {
        if (!isNodeNotReadyError(error) || monotonicMillis() + pause > deadline) throw error;
        if (!warned) {
          warned = true;
          this.logger.warn(
            `Table ${table}: the database node cannot serve yet (${(error as Error).message}); the schema ` +
              `step tries again for up to ${Math.round(this.lockTimeoutMs / 1_000)} s`,
          );
        }
        await sleep(pause);
        pause = Math.min(pause * 2, 2_000);
      }
    }
  }

  /** The schema step proper, on the connection that holds the schema lock. */
  private async step(spec: TableSpec, prefix: string, mode: 'create' | 'check'): Promise<LiveTable> {
    const table = tableName(prefix, spec.name);
    if (!(await this.tableExists(table))) {
      if (mode === 'check') {
        throw new SchemaMissingError(table, this.script(spec, prefix));
      }
      await this.createIfMissing(createTableSql(this.sql.dialect, spec, prefix, { ifNotExists: true }), () =>
        this.tableExists(table),
      );
      this.logger.log(`Created table ${table}`);
    }
    const live = await this.describe(spec, table);
    checkLiveTable(this.sql.dialect, spec, live);
    await this.applyIndexes(spec, prefix, mode);
    return live;
  }

  /** `work` under the table's schema lock (see `SchemaLock`), with a manager on its client. */
  private underSchemaLock<T>(table: string, work: (locked: SchemaManager) => Promise<T>): Promise<T> {
    const lock = new SchemaLock({
      table,
      key: `holdfast:schema:${table.toLowerCase()}`,
      timeoutMs: this.lockTimeoutMs,
    });
    return lock.run(this.sql, (sql) => work(new SchemaManager(sql, { lockTimeoutMs: this.lockTimeoutMs })));
  }

  /** The live table's columns (by the spec's own columns where the catalog cannot be read). */
  async describe(spec: TableSpec, table: string): Promise<LiveTable> {
    const columns = await this.catalog.columns(table);
    if (columns === undefined) {
      return new LiveTable(
        table,
        true,
        spec.columns.map((c) => ({
          name: c.name,
          rawType: this.sql.dialect.columnType(c.type),
          kind: c.type.kind,
          length: 'length' in c.type ? c.type.length : undefined,
          nullable: c.nullable !== false && !spec.primaryKey.includes(c.name),
          hasDefault: c.default !== undefined,
        })),
        false,
      );
    }
    return new LiveTable(table, columns.length > 0, columns);
  }

  private async applyIndexes(spec: TableSpec, prefix: string, mode: SchemaMode): Promise<void> {
    const dialect = this.sql.dialect;
    const table = tableName(prefix, spec.name);
    for (const index of spec.indexes ?? []) {
      const name = indexName(prefix, index);
      if (await this.indexExists(table, name, index.columns)) continue;
      if (mode === 'create') {
        await this.createIfMissing(createIndexSql(dialect, spec, index, prefix, { ifNotExists: true }), () =>
          this.indexExists(table, name, index.columns),
        );
        this.logger.log(`Created index ${name} on ${table}`);
      } else {
        this.logger.warn(
          `Index ${name} on ${table}(${index.columns.join(', ')}) is missing; queries will scan the table. Run:\n` +
            `${createIndexSql(dialect, spec, index, prefix)};`,
        );
      }
    }
  }

  private script(spec: TableSpec, prefix: string): string {
    const d = this.sql.dialect;
    return [
      createTableSql(d, spec, prefix),
      ...(spec.indexes ?? []).map((i) => createIndexSql(d, spec, i, prefix)),
    ]
      .map((s) => `${s};`)
      .join('\n');
  }

  /**
   * Runs a CREATE; "already exists" (made by something that does not take Holdfast's lock, such
   * as a migration) is success when `exists` confirms it. On PostgreSQL a savepoint keeps the
   * surrounding transaction usable after the error.
   */
  private async createIfMissing(ddl: string, exists: () => Promise<boolean>): Promise<void> {
    const savepoint = this.sql.dialect.errorAbortsTransaction && this.sql.inTransaction;
    if (savepoint) await this.sql.execute(statement('SAVEPOINT holdfast_ddl'));
    try {
      await this.sql.execute(statement(ddl));
      if (savepoint) await this.sql.execute(statement('RELEASE SAVEPOINT holdfast_ddl'));
    } catch (error) {
      if (savepoint) await this.sql.execute(statement('ROLLBACK TO SAVEPOINT holdfast_ddl'));
      if (!isAlreadyExistsError(error) || !(await exists())) throw error;
    }
  }

  /** True when the table exists (always true where Holdfast does not read the catalog; see `Catalog`). */
  tableExists(table: string): Promise<boolean> {
    return this.catalog.tableExists(table);
  }

  /**
   * True when an index with that name, or any index led by the same column, exists (always true
   * where Holdfast does not read the catalog).
   */
  async indexExists(table: string, index: string, columns: readonly string[]): Promise<boolean> {
    return hasIndex(await this.catalogIndexes(table), index, columns);
  }

  private catalogIndexes(table: string): Promise<CatalogIndex[] | undefined> {
    return this.catalog.indexes(table);
  }
}

/** See SchemaManager.indexExists (`indexes` undefined: the catalog is not read). */
function hasIndex(
  indexes: readonly CatalogIndex[] | undefined,
  index: string,
  columns: readonly string[],
): boolean {
  if (!indexes) return true;
  const wanted = index.toLowerCase();
  const first = columns[0].toLowerCase();
  return indexes.some((i) => i.name.toLowerCase() === wanted || i.leading === first);
}
