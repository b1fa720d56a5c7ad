import { Logger } from '@nestjs/common';
import { SqlClient } from '../database/sql-client';
import { SchemaMissingError } from '../errors/holdfast.error';
import { tableName } from '../naming/table-prefix';
import { createIndexSql, createTableSql, indexName } from './ddl';
import { checkLiveTable } from './column-check';
import { LiveTable, readLiveColumns } from './live-table';
import { TableSpec } from './table-spec';

/**
 * What a module does with its tables at startup: 'create' makes missing tables and indexes
 * (never altering an existing table), 'check' reports a missing table as an error and a
 * missing index as a warning with the DDL to run, 'none' trusts the migrations.
 */
export type SchemaMode = 'create' | 'check' | 'none';
export const SCHEMA_MODES: readonly SchemaMode[] = ['create', 'check', 'none'];

export class SchemaManager {
  private readonly logger = new Logger(SchemaManager.name);

  constructor(private readonly sql: SqlClient) {}

  /**
   * Creates (mode 'create') or checks (mode 'check') the table, then reads the live table and
   * checks every spec column against it (SchemaMismatchError when one is missing or of a type the
   * module cannot use). Returns the live table, so a module can look at lengths or optional
   * columns; mode 'none' reads it without checking anything.
   */
  async apply(spec: TableSpec, prefix: string, mode: SchemaMode): Promise<LiveTable> {
    const table = tableName(prefix, spec.name);
    if (mode === 'none') return this.describe(spec, table);
    if (!(await this.tableExists(table))) {
      if (mode === 'check') {
        throw new SchemaMissingError(table, this.script(spec, prefix));
      }
      await this.createTable(spec, prefix);
      this.logger.log(`Created table ${table}`);
    }
    const live = await this.describe(spec, table);
    checkLiveTable(this.sql.dialect, spec, live);
    await this.applyIndexes(spec, prefix, mode);
    return live;
  }

  /** The live table's columns (by the spec's own columns where the catalog cannot be read). */
  async describe(spec: TableSpec, table: string): Promise<LiveTable> {
    const columns = await readLiveColumns(this.sql, table);
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
    const dialect = this.sql.dialect.name;
    const table = tableName(prefix, spec.name);
    for (const index of spec.indexes ?? []) {
      const name = indexName(prefix, index);
      if (await this.indexExists(table, name, index.columns)) continue;
      const ddl = createIndexSql(dialect, spec, index, prefix);
      if (mode === 'create') {
        await this.sql.execute(ddl);
        this.logger.log(`Created index ${name} on ${table}`);
      } else {
        this.logger.warn(
          `Index ${name} on ${table}(${index.columns.join(', ')}) is missing; queries will scan the table. Run:\n${ddl};`,
        );
      }
    }
  }

  private script(spec: TableSpec, prefix: string): string {
    const d = this.sql.dialect.name;
    return [
      createTableSql(d, spec, prefix),
      ...(spec.indexes ?? []).map((i) => createIndexSql(d, spec, i, prefix)),
    ]
      .map((s) => `${s};`)
      .join('\n');
  }

  private async createTable(spec: TableSpec, prefix: string): Promise<void> {
    const ddl = createTableSql(this.sql.dialect.name, spec, prefix);
    try {
      await this.sql.execute(ddl);
    } catch (error) {
      // Another instance created it between our check and our CREATE.
      if (!(await this.tableExists(tableName(prefix, spec.name)))) throw error;
    }
  }

  private split(table: string): { schema?: string; name: string } {
    const dot = table.lastIndexOf('.');
    return dot < 0 ? { name: table } : { schema: table.slice(0, dot), name: table.slice(dot + 1) };
  }

  async tableExists(table: string): Promise<boolean> {
    const { schema, name } = this.split(table);
    const d = this.sql.dialect;
    switch (d.name) {
      case 'postgres':
        return (
          (
            await this.sql.query(
              `SELECT 1 FROM information_schema.tables WHERE lower(table_name) = lower($1) AND table_schema = ${schema ? 'lower($2)' : 'current_schema()'}`,
              schema ? [name, schema] : [name],
            )
          ).length > 0
        );
      case 'mysql':
      case 'mariadb':
        return (
          (
            await this.sql.query(
              `SELECT 1 FROM information_schema.tables WHERE table_name = ? AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
              schema ? [name, schema] : [name],
            )
          ).length > 0
        );
      case 'sqlite':
        return (
          (
            await this.sql.query(
              `SELECT 1 FROM ${schema ? `${schema}.` : ''}sqlite_master WHERE type = 'table' AND lower(name) = lower(?)`,
              [name],
            )
          ).length > 0
        );
      default:
        return true;
    }
  }

  /** True when an index with that name, or any index led by the same columns, exists. */
  async indexExists(table: string, index: string, columns: readonly string[]): Promise<boolean> {
    const { schema, name } = this.split(table);
    const first = columns[0].toLowerCase();
    const d = this.sql.dialect;
    switch (d.name) {
      case 'postgres': {
        const rows = await this.sql.query<{ indexname: string; indexdef: string }>(
          `SELECT indexname, indexdef FROM pg_indexes WHERE lower(tablename) = lower($1) AND schemaname = ${schema ? 'lower($2)' : 'current_schema()'}`,
          schema ? [name, schema] : [name],
        );
        return rows.some(
          (r) =>
            r.indexname.toLowerCase() === index.toLowerCase() ||
            new RegExp(`\\(\\s*"?${first}"?[\\s,)]`, 'i').test(r.indexdef),
        );
      }
      case 'mysql':
      case 'mariadb': {
        const rows = await this.sql.query<{ INDEX_NAME: string; COLUMN_NAME: string; SEQ_IN_INDEX: unknown }>(
          `SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.statistics WHERE table_name = ? AND table_schema = ${schema ? '?' : 'DATABASE()'}`,
          schema ? [name, schema] : [name],
        );
        return rows.some(
          (r) =>
            r.INDEX_NAME.toLowerCase() === index.toLowerCase() ||
            (Number(r.SEQ_IN_INDEX) === 1 && r.COLUMN_NAME.toLowerCase() === first),
        );
      }
      case 'sqlite': {
        const p = schema ? `${schema}.` : '';
        const rows = await this.sql.query<{ name: string }>(
          `SELECT name FROM ${p}sqlite_master WHERE type = 'index' AND lower(tbl_name) = lower(?)`,
          [name],
        );
        for (const r of rows) {
          if (r.name.toLowerCase() === index.toLowerCase()) return true;
          const cols = await this.sql.query<{ name: string; seqno: number }>(
            `SELECT name, seqno FROM pragma_index_info(?)`,
            [r.name],
          );
          if (cols.some((c) => Number(c.seqno) === 0 && c.name.toLowerCase() === first)) return true;
        }
        return false;
      }
      default:
        return true;
    }
  }
}
