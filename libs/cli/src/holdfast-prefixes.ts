import type { DataSource } from 'typeorm';
import { STATUS_TABLES } from './status/status-queries';

/**
 * The table prefixes under which this database has Holdfast tables, for an error that says where
 * the tables are when they are not under the prefix asked for. Best effort: a database that does
 * not list its tables gives none.
 */
export async function holdfastPrefixes(dataSource: DataSource, lockTableName?: string): Promise<string[]> {
  const names: readonly string[] = lockTableName ? [...STATUS_TABLES, lockTableName] : STATUS_TABLES;
  const runner = dataSource.createQueryRunner();
  try {
    const tables = await runner.getTables();
    const prefixes = new Set<string>();
    for (const table of tables) {
      const name = table.name.split('.').pop()!;
      const base = names.find((n) => name.toLowerCase().endsWith(n.toLowerCase()));
      if (base !== undefined) prefixes.add(name.slice(0, name.length - base.length));
    }
    return [...prefixes].sort();
  } catch {
    return [];
  } finally {
    await runner.release();
  }
}
