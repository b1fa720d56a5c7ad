import { validateTablePrefix } from '@holdfast/core/kit';
import { releaseLock, type LockTableOptions } from '@holdfast/locker';
import { releaseMutex } from '@holdfast/simba';
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
 * meanwhile keeps it. A live owner that is released loses the lock at its next renewal. The
 * statements are Simba's (releaseMutex) and the locker's (releaseLock, with its failover grace
 * guard), on the lock table `lockTable` names when it is not Holdfast's own.
 */
export async function releaseCommand(options: {
  url: string | undefined;
  prefix?: string;
  kind: string | undefined;
  name: string | undefined;
  owner: string | undefined;
  dryRun: boolean;
  lockTable?: Omit<LockTableOptions, 'tablePrefix'>;
}): Promise<ReleaseReport> {
  const prefix = options.prefix ?? '';
  validateTablePrefix(prefix);
  const kind = options.kind as ReleaseKind;
  if (!RELEASE_KINDS.includes(kind)) {
    throw new CliUsageError(`release needs what to release: ${RELEASE_KINDS.join(' or ')}`);
  }
  const { name, owner, dryRun } = options;
  if (!name) throw new CliUsageError(`release ${kind} needs the ${kind}'s name`);
  if (!owner)
    throw new CliUsageError('--owner is required: the owner you know is dead (see holdfast status)');
  if (kind === 'mutex' && (options.lockTable?.lockTableName || options.lockTable?.lockColumns)) {
    throw new CliUsageError('--lock-table and --lock-columns go with release lock');
  }
  return withDatabase(options.url, dryRun, async (sql) => {
    const outcome =
      kind === 'mutex'
        ? await releaseMutex(sql, { tablePrefix: prefix, mutex: name, owner, dryRun })
        : await releaseLock(sql, { ...options.lockTable, tablePrefix: prefix, lock: name, owner, dryRun });
    return { kind, name, owner, heldBy: outcome.heldBy, result: outcome.result };
  });
}
