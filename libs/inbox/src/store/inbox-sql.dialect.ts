import type { SqlBinder, SqlDialect } from '@holdfast/core/kit';

/**
 * The inbox's SQL that differs per database and no other Holdfast lib writes: statement targets
 * by key, the planner hints of a claim, the group rows' upsert, the table rename of the layout
 * conversion, and LISTEN/NOTIFY. Each takes the dialect (its name decides).
 */

type Named = Pick<SqlDialect, 'name'>;

const mysqlFamily = (d: Named) => d.name === 'mysql' || d.name === 'mariadb';

/** The rows of a table picked by key values: see `keyedRows`. */
export interface KeyedRows {
  /** The target of an UPDATE, or what a SELECT reads FROM. */
  from: string;
  /** What follows DELETE. */
  deleteFrom: string;
  /** `key IN (…) AND `, or '' where `from` holds the keys: ready for one more condition. */
  where: string;
}

/** True when the database has LISTEN/NOTIFY channels (PostgreSQL). */
export function supportsListenNotify(d: Named): boolean {
  return d.name === 'postgres';
}

/**
 * The clause that makes an `INSERT` an insert-or-update on the key columns `keys`, setting
 * `columns` from the proposed row (`ON CONFLICT … DO UPDATE`, MySQL/MariaDB `ON DUPLICATE KEY
 * UPDATE`); undefined where an INSERT has no such clause (SQL Server, Oracle).
 */
export function upsertClause(
  d: Named,
  keys: readonly string[],
  columns: readonly string[],
): string | undefined {
  const onConflict = (excluded: string) =>
    `ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${columns.map((c) => `${c} = ${excluded}.${c}`).join(', ')}`;
  if (d.name === 'postgres') return onConflict('EXCLUDED');
  if (d.name === 'sqlite') return onConflict('excluded');
  if (mysqlFamily(d))
    return `ON DUPLICATE KEY UPDATE ${columns.map((c) => `${c} = VALUES(${c})`).join(', ')}`;
  return undefined;
}

/**
 * The rows of `table` whose `key` is one of `values` (each bound through `b`), as a statement
 * target. MySQL/MariaDB: the table (alias `m`) joined with the keys as a derived table
 * (`k.hf_key`), which InnoDB resolves by primary key at any table size (an `IN (…)` list can turn
 * into a scan of a small table, and a scanning write locks, and waits for, every row it passes).
 * Elsewhere `key IN (…)` in `where`.
 */
export function keyedRows(
  d: Named,
  b: SqlBinder,
  table: string,
  key: string,
  values: readonly unknown[],
): KeyedRows {
  if (mysqlFamily(d)) {
    const keys = values
      .map((v, i) => `SELECT ${b.bind(v)}${i === 0 ? ' AS hf_key' : ''}`)
      .join(' UNION ALL ');
    const from = `${table} AS m JOIN (${keys}) AS k ON m.${key} = k.hf_key`;
    return { from, deleteFrom: `m FROM ${from}`, where: '' };
  }
  const where = `${key} IN (${values.map((v) => b.bind(v)).join(', ')}) AND `;
  return { from: table, deleteFrom: `FROM ${table}`, where };
}

/**
 * True where `keyedRows` puts the keys in `from` (a join): a statement with bound values in a
 * SET binds the keys first there, after the SET elsewhere.
 */
export function keysInFrom(d: Named): boolean {
  return mysqlFamily(d);
}

/**
 * True where a locking read locks every row it looks at, also those its WHERE then refuses
 * (InnoDB): a statement that must lock only the rows it takes reads their keys first, without a
 * lock, then locks them by key.
 */
export function locksScannedRows(d: Named): boolean {
  return mysqlFamily(d);
}

/**
 * A column naming a row's place in the table, valid within one statement (PostgreSQL `ctid`,
 * SQLite `rowid`); undefined elsewhere. A statement that locks rows in a subquery and changes
 * them in its outer query finds them by it without a second walk of the primary key's index. A
 * row changed by another transaction between the two has another address: the outer query then
 * does not see it (never a row the subquery did not lock). SQLite's one writer changes nothing
 * between the two; its `rowid` is the table's own B-tree key, where the ID's index needs one more
 * lookup per row, which grows with the table (measured at 1,050,000 rows, claims of 1,000:
 * 10.5 → 5.3 µs per row; docs/benchmarks.md). Holdfast creates its SQLite tables with a rowid.
 */
export function rowAddress(d: Named): string | undefined {
  return d.name === 'postgres' ? 'ctid' : d.name === 'sqlite' ? 'rowid' : undefined;
}

/**
 * The suffix that keeps a correlated subquery a subquery run per outer row, stopping at its
 * first match, instead of a join the planner may prefer (PostgreSQL `OFFSET 0`); '' elsewhere.
 */
export function subqueryFence(d: Named): string {
  return d.name === 'postgres' ? ' OFFSET 0' : '';
}

/**
 * `condition` as the filter of a walk of an index in order (`ORDER BY … LIMIT n`), estimated
 * so that the planner keeps to the index whatever the statistics say. PostgreSQL estimates a
 * queue's due condition from statistics that may predate its backlog (a table filled since its
 * last ANALYZE looks empty), and then reads the whole table and sorts it for every claim;
 * wrapped in `COALESCE(…, FALSE)` the condition gets a fixed estimate and the index walk wins.
 * The condition itself elsewhere.
 */
export function indexWalkFilter(d: Named, condition: string): string {
  return d.name === 'postgres' ? `COALESCE((${condition}), FALSE)` : condition;
}

/**
 * The hint after a table name in FROM that makes the optimizer walk `index` (MySQL/MariaDB
 * `FORCE INDEX (…) `, trailing space included); '' where the dialect takes no such hint.
 */
export function forceIndex(d: Named, index: string): string {
  return mysqlFamily(d) ? `FORCE INDEX (${index}) ` : '';
}

/** The statement that renames table `from` to `to` (both prefixed names, in the same schema). */
export function renameTable(d: Named, from: string, to: string): string {
  const unqualified = to.slice(to.lastIndexOf('.') + 1);
  if (mysqlFamily(d)) return `RENAME TABLE ${from} TO ${to}`;
  if (d.name === 'mssql') return `EXEC sp_rename '${from}', '${unqualified}'`;
  return `ALTER TABLE ${from} RENAME TO ${unqualified}`;
}
