import type { Dialect } from '@holdfast/core/kit';

/**
 * The failover store's SQL that differs per database and no other Holdfast lib writes: the
 * default size of a cleanup batch (its bounded DELETE is core's `deleteLimited`, which the inbox's
 * history uses too).
 */

/**
 * Rows one DELETE of a bounded cleanup removes by default: small enough that the statement, and
 * so a concurrent writer's wait behind its locks, stays short on this database. InnoDB deletes
 * several times slower than PostgreSQL: at 1,000,000 expired rows a concurrent upsert waited up
 * to 297–523 ms behind 5,000-row deletes, 108 ms behind 1,000-row ones (`npm run bench --
 * scale-failover --db mariadb --sizes 1000000 --batch N`): 1,000 there, 5,000 elsewhere.
 */
export function cleanupBatchRows(dialect: { readonly name: Dialect }): number {
  return dialect.name === 'mysql' || dialect.name === 'mariadb' ? 1_000 : 5_000;
}
