import { Dialect } from '../dialect/dialect';
import { asSqlDialect } from '../dialect/dialects';
import type { SqlDialect } from '../dialect/sql-dialect';
import { tableName } from '../naming/table-prefix';
import { IndexSpec, TableSpec } from './table-spec';

/** The prefixed index name; the schema part of a prefix (`SCHEMA.`) is not repeated on indexes. */
export function indexName(prefix: string, index: IndexSpec): string {
  const unqualified = prefix.includes('.') ? prefix.slice(prefix.lastIndexOf('.') + 1) : prefix;
  return `${unqualified}${index.name}`;
}

/** Dialects whose CREATE TABLE / CREATE INDEX take `IF NOT EXISTS` (MySQL has none for indexes). */
export function supportsIfNotExists(dialect: Dialect | SqlDialect, object: 'table' | 'index'): boolean {
  return asSqlDialect(dialect).supportsIfNotExists(object);
}

export interface DdlOptions {
  /** Adds `IF NOT EXISTS` where the dialect has it (see `supportsIfNotExists`). */
  ifNotExists?: boolean;
}

function ifNotExists(dialect: Dialect | SqlDialect, object: 'table' | 'index', options: DdlOptions): string {
  return options.ifNotExists && supportsIfNotExists(dialect, object) ? 'IF NOT EXISTS ' : '';
}

export function createTableSql(
  dialect: Dialect | SqlDialect,
  spec: TableSpec,
  prefix = '',
  options: DdlOptions = {},
): string {
  const d = asSqlDialect(dialect);
  const columns = spec.columns.map((c) => {
    const parts = [`  ${c.name} ${d.columnType(c.type)}`];
    if (c.default !== undefined) parts.push(`DEFAULT ${c.default}`);
    if (c.nullable === false || spec.primaryKey.includes(c.name)) parts.push('NOT NULL');
    return parts.join(' ');
  });
  columns.push(`  PRIMARY KEY (${spec.primaryKey.join(', ')})`);
  return `CREATE TABLE ${ifNotExists(dialect, 'table', options)}${tableName(prefix, spec.name)} (\n${columns.join(',\n')}\n)${d.tableStorage(spec.fillFactor)}`;
}

export function createIndexSql(
  dialect: Dialect | SqlDialect,
  spec: TableSpec,
  index: IndexSpec,
  prefix = '',
  options: DdlOptions = {},
): string {
  const name = indexName(prefix, index);
  // Oracle and SQL Server create an index in the table's schema; a prefix's schema goes on the table only.
  return `CREATE INDEX ${ifNotExists(dialect, 'index', options)}${name} ON ${tableName(prefix, spec.name)} (${index.columns.join(', ')})`;
}

/** Every statement that creates the table and its indexes, in order. */
export function tableDdl(dialect: Dialect, spec: TableSpec, prefix = ''): string[] {
  return [
    createTableSql(dialect, spec, prefix),
    ...(spec.indexes ?? []).map((index) => createIndexSql(dialect, spec, index, prefix)),
  ];
}

/** A printable script: statements separated by `;` (and `/` nowhere: plain SQL*Plus-free text). */
export function ddlScript(dialect: Dialect, specs: readonly TableSpec[], prefix = ''): string {
  return (
    specs
      .flatMap((spec) => tableDdl(dialect, spec, prefix))
      .map((s) => `${s};`)
      .join('\n\n') + '\n'
  );
}
