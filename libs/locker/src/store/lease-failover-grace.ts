import { TIMELINE_MARKER, type SqlDialect } from '@holdfast/core/kit';
import { DEFAULT_LOCK_TABLE_NAMES, type LockTableNames } from './holdfast-lock.table';

/**
 * The row of the lock table that remembers the PostgreSQL timeline the table was last written on
 * (in `TIME`; its holder is this name too). Never a lock: the lock name is reserved. The same
 * key as Simba's marker row in `simba_mutex` (core's TIMELINE_MARKER).
 */
export { TIMELINE_MARKER };

/**
 * The holder of a lock row in its failover grace: no instance, never a `leaseHolderId`.
 * `holdfast release lock <name> --owner holdfast:failover-grace` ends a row's grace by hand.
 */
export const FAILOVER_GRACE_HOLDER = 'holdfast:failover-grace';

/**
 * No lease during a lease the old primary may have granted and the new one lost (#36). A
 * PostgreSQL standby promoted after its primary died may miss the last commits, a lease take
 * among them, and would let a second instance take the lease while the lost take's instance still
 * believes it is master, until its local deadline (its last statement sent + one lease − the
 * safety margin, all before the crash).
 *
 * So every lease write (take, renewal, release) carries the detection (LockQueryResolver's
 * graceGuard): the first write on a new timeline, whichever instance sends it (a freshly started
 * one too), moves the marker and puts every lock row into grace: holder FAILOVER_GRACE_HOLDER
 * (no renewal matches it: the owner the new primary names may have been superseded by the lost
 * take), TIME the detection time P on the database clock (or the row's later expiry). A row in
 * grace is taken by no lease locker before P + its own lease (`lockAcquireSleepInterval`): each
 * lock's grace is its holders' lease, which is the longest lease that could have been granted on
 * it as long as the instances of one lock share `lockAcquireSleepInterval`. P comes after the
 * crash, so the lost take's owner has demoted by then.
 *
 * Only where a promotion can lose commits (the dialect has a timeline: PostgreSQL) and only on
 * Holdfast's own `HOLDFAST_LOCK` with a VARCHAR ID: a table named by `lockTableName` belongs to
 * another system (ActiveMQ's `ACTIVEMQ_LOCK`), whose own lockers know of no grace and to which
 * Holdfast adds no row.
 */
export function failoverGraceApplies(
  dialect: SqlDialect,
  names: LockTableNames,
  idKind: string | undefined,
): boolean {
  const own =
    names.table === DEFAULT_LOCK_TABLE_NAMES.table &&
    names.id === DEFAULT_LOCK_TABLE_NAMES.id &&
    names.time === DEFAULT_LOCK_TABLE_NAMES.time &&
    names.brokerName === DEFAULT_LOCK_TABLE_NAMES.brokerName;
  return dialect.timeline !== undefined && own && idKind !== 'bigint' && idKind !== 'int';
}
