import type { SqlClient } from '../database/sql-client';
import type { SqlDialect } from '../dialect/sql-dialect';
import type { LiveColumn } from './live-table';
import type { CatalogIndex, CatalogQuery, CatalogReader } from './catalog-reader';
import { mysqlCatalog } from './mysql.catalog';
import { postgresCatalog } from './postgres.catalog';
import { sqliteCatalog } from './sqlite.catalog';

export type { CatalogIndex, CatalogQuery } from './catalog-reader';

/** The reader of the database `dialect` names; undefined where Holdfast does not read it (SQL Server, Oracle). */
function catalogReader(dialect: SqlDialect, run: CatalogQuery): CatalogReader | undefined {
  switch (dialect.name) {
    case 'postgres':
      return postgresCatalog(dialect, run);
    case 'mysql':
    case 'mariadb':
      return mysqlCatalog(dialect, run);
    case 'sqlite':
      return sqliteCatalog(dialect, run);
    default:
      return undefined;
  }
}

/**
 * What the database's catalog says about a live table: its columns (as `LiveColumn`s), its
 * indexes, whether it exists. The schema step reads the tables through it, and a module that needs
 * one fact of its live table (the form of a time column, an index it names in a hint) asks it.
 * PostgreSQL and MySQL/MariaDB read information_schema (and `pg_indexes`), SQLite its pragmas;
 * SQL Server and Oracle, whose SQL Holdfast writes but does not run, have no catalog here: their
 * reads answer undefined (or false, or true for `tableExists`) without running anything.
 *
 * ```ts
 * const column = await Catalog.of(sql).column(table, 'NEXT_RETRY');
 * ```
 */
export class Catalog {
  private readonly reader: CatalogReader | undefined;

  /** The catalog of `dialect`'s database, read through `run` (see `Catalog.of` for a SqlClient). */
  constructor(dialect: SqlDialect, run: CatalogQuery) {
    this.reader = catalogReader(dialect, run);
  }

  /** The catalog read through `sql`. */
  static of(sql: SqlClient): Catalog {
    return new Catalog(sql.dialect, (s) => sql.query(s));
  }

  /** The table's columns: none when it does not exist, undefined where the catalog is not read. */
  columns(table: string): Promise<LiveColumn[] | undefined> {
    return this.reader ? this.reader.columns(table) : Promise.resolve(undefined);
  }

  /**
   * The live column `column` (any case) of `table`: its type as the database reports it and, on
   * MySQL/MariaDB, its `timestampStorage`. Undefined when the table or the column is missing, or
   * where the catalog is not read.
   */
  async column(table: string, column: string): Promise<LiveColumn | undefined> {
    const wanted = column.toLowerCase();
    return (await this.columns(table))?.find((c) => c.name.toLowerCase() === wanted);
  }

  /** The table's indexes: none when it does not exist, undefined where the catalog is not read. */
  indexes(table: string): Promise<CatalogIndex[] | undefined> {
    return this.reader ? this.reader.indexes(table) : Promise.resolve(undefined);
  }

  /**
   * True when `table` has an index named exactly `index`, any case (an index of another name on
   * the same columns does not count: the inbox's index hint names it). False where the catalog
   * is not read.
   */
  async hasIndexNamed(table: string, index: string): Promise<boolean> {
    const wanted = index.toLowerCase();
    return (await this.indexes(table))?.some((i) => i.name.toLowerCase() === wanted) ?? false;
  }

  /**
   * The names of the tables in the connection's own schema, in one statement (not TypeORM's
   * `getTables()`, which loads every table's columns and indexes, and fails when another session
   * drops a table meanwhile); undefined where the catalog is not read.
   */
  tableNames(): Promise<string[] | undefined> {
    return this.reader ? this.reader.tableNames() : Promise.resolve(undefined);
  }

  /** True when the table exists (always true where the catalog is not read). */
  tableExists(table: string): Promise<boolean> {
    return this.reader ? this.reader.tableExists(table) : Promise.resolve(true);
  }
}
