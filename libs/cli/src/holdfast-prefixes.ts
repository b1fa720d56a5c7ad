import type { DataSource } from 'typeorm';
import { Catalog, sqlClientFor } from '@holdfast/core/kit';
import { STATUS_TABLES } from './status/status-queries';

/**
 * The table prefixes under which this database has Holdfast tables, for an error that says where
 * the tables are when they are not under the prefix asked for. Best effort: a database whose
 * catalog Holdfast does not read, or a failed read, gives none.
 */
export async function holdfastPrefixes(dataSource: DataSource, lockTableName?: string): Promise<string[]> {
  const names: readonly string[] = lockTableName ? [...STATUS_TABLES, lockTableName] : STATUS_TABLES;
  try {
    const tables = (await Catalog.of(sqlClientFor(dataSource)).tableNames()) ?? [];
    const prefixes = new Set<string>();
    for (const name of tables) {
      const base = names.find((n) => name.toLowerCase().endsWith(n.toLowerCase()));
      if (base !== undefined) prefixes.add(name.slice(0, name.length - base.length));
    }
    return [...prefixes].sort();
  } catch {
    return [];
  }
}
