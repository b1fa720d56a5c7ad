import { tableName, validateTablePrefix, type SqlClient } from '@holdfast/core/kit';
import { HOLDFAST_LOCK_TABLE } from '@holdfast/locker/internal';
import { SIMBA_MUTEX_TABLE } from '@holdfast/simba/internal';
import { withDatabase } from '../database';
import { CliUsageError } from '../errors';

/** What `holdfast release` frees: a simba mutex, or a locker lock row (HOLDFAST_LOCK). */
export const RELEASE_KINDS = ['mutex', 'lock'] as const;
export type ReleaseKind = (typeof RELEASE_KINDS)[number];

export interface ReleaseReport {
  kind: ReleaseKind;
  name: string;
  /** The owner the operator named: only a row it still holds is released. */
  owner: string;
  /** Who holds it now (before the release); null: nobody, or no such row. */
  heldBy: string | null;
  /**
   * released; would: --dry-run, it would be released; not held: someone else (or nobody) holds
   * it, nothing changed; not found: no such row.
   */
  result: 'released' | 'would' | 'not held' | 'not found';
}

/**
 * `holdfast release <mutex|lock> <name> --owner <id>`: frees a mutex or master lock whose owner
 * the operator knows is dead, so another instance takes it at once instead of after the lease.
 * Only while `owner` still holds it (the same statement checks it): an instance that took over
 * meanwhile keeps it. A live owner that is released loses the lock at its next renewal.
 */
export async function releaseCommand(options: {
  url: string | undefined;
  prefix?: string;
  kind: string | undefined;
  name: string | undefined;
  owner: string | undefined;
  dryRun: boolean;
}): Promise<ReleaseReport> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  const kind = options.kind as ReleaseKind;
  if (!RELEASE_KINDS.includes(kind)) {
    throw new CliUsageError(`release needs what to release: ${RELEASE_KINDS.join(' or ')}`);
  }
  const { name, owner } = options;
  if (!name) throw new CliUsageError(`release ${kind} needs the ${kind}'s name`);
  if (!owner)
    throw new CliUsageError('--owner is required: the owner you know is dead (see holdfast status)');
  return withDatabase(options.url, options.dryRun, async (sql) => {
    const target = kind === 'mutex' ? mutexStatements(sql, prefix) : lockStatements(sql, prefix);
    const [row] = await sql.query<{ holder: unknown }>(target.read, [name]);
    if (!row) return { kind, name, owner, heldBy: null, result: 'not found' };
    // CHAR(32) owner ids (Simba's DDL) come back padded on PostgreSQL.
    const heldBy =
      row.holder === null || row.holder === undefined ? null : String(row.holder).trimEnd() || null;
    if (heldBy !== owner) return { kind, name, owner, heldBy, result: 'not held' };
    if (options.dryRun) return { kind, name, owner, heldBy, result: 'would' };
    const changed = await sql.execute(target.release, [name, owner]);
    return { kind, name, owner, heldBy, result: changed > 0 ? 'released' : 'not held' };
  });
}

function mutexStatements(sql: SqlClient, prefix: string) {
  const d = sql.dialect;
  const table = tableName(prefix, SIMBA_MUTEX_TABLE.name);
  const now = d.nowMillis;
  return {
    read: `SELECT owner_id AS holder FROM ${table} WHERE mutex = ${d.placeholder(1)}`,
    // As simba releases: no owner, acquirable at once; acquired_at (the fencing token base) kept.
    release:
      `UPDATE ${table} SET owner_id = '', ttl_at = ${now} - 1, transition_at = ${now} - 1, version = version + 1 ` +
      `WHERE mutex = ${d.placeholder(1)} AND owner_id = ${d.placeholder(2)}`,
  };
}

function lockStatements(sql: SqlClient, prefix: string) {
  const d = sql.dialect;
  const table = tableName(prefix, HOLDFAST_LOCK_TABLE.name);
  return {
    read: `SELECT BROKER_NAME AS holder FROM ${table} WHERE ID = ${d.placeholder(1)}`,
    // As the locker gives a lease up: no holder, no time, so a standby takes it at its next try.
    release:
      `UPDATE ${table} SET TIME = NULL, BROKER_NAME = NULL ` +
      `WHERE ID = ${d.placeholder(1)} AND BROKER_NAME = ${d.placeholder(2)}`,
  };
}
