import { isThisInstance } from '@holdfast/core/kit';
import type { LockerSection, ScheduledSection } from '../dashboard-state';
import { shownError } from '../error-text';
import type { HoldfastLookup } from '../holdfast-lookup';
import { holdfastModules } from '../holdfast-modules';

/** LockerModule's resolved options, as far as the dashboard reads them. */
interface LockerOptionsLike {
  locker: { type: string };
  dataSource?: unknown;
  tablePrefix: string;
  /** `lockTableName` and `lockColumns`, resolved. */
  lockTable?: { table: string; id: string; time: string; brokerName: string };
}

/**
 * The LockerService of this instance (role, holder, last keep-alive, last error) and every lock
 * row of its table (the locker's status read-model, readLockerStatus, on the table and columns
 * `lockTableName` and `lockColumns` name), for the lockers that have a table.
 */
export async function readLockerSection(
  lookup: HoldfastLookup,
  errorDetails: boolean,
): Promise<LockerSection> {
  const l = holdfastModules().locker!;
  const locker = lookup.optional(l.LockerService)!;
  const options = lookup.optional<LockerOptionsLike>(l.LOCKER_STATUS_TOKENS.options);
  let locks: LockerSection['locks'] = null;
  if (options && (options.locker.type === 'lease-database' || options.locker.type === 'database')) {
    const names = options.lockTable;
    const status = await l.readLockerStatus(lookup.sqlClient(options.dataSource), {
      tablePrefix: options.tablePrefix,
      ...(names ? { lockTableName: names.table, lockColumns: names } : {}),
    });
    locks = status.locks && status.locks.map((row) => ({ ...row, masterHere: isThisInstance(row.master) }));
  }
  const holder = await locker.readHolder().catch(() => locker.holder);
  const lastError = locker.lastError;
  return {
    lockName: locker.lockName,
    instanceId: locker.instanceId,
    role: locker.isMaster ? 'master' : 'standby',
    state: locker.role,
    holder: holder ?? null,
    lastKeepAlive: locker.lastKeepAlive?.toISOString() ?? null,
    locks,
    lastError:
      lastError === undefined || lastError === null
        ? null
        : shownError(lastError instanceof Error ? lastError.message : String(lastError), errorDetails),
  };
}

/**
 * The @ScheduledLock jobs: what this instance saw of each (runs, skips, the last of each), and
 * each job's lock row (its holder and lease, the cluster's) in ScheduledLockModule's table.
 */
export async function readScheduledSection(
  lookup: HoldfastLookup,
  errorDetails: boolean,
): Promise<ScheduledSection> {
  const l = holdfastModules().locker!;
  const executor = lookup.optional(l.LOCKER_STATUS_TOKENS.scheduledExecutor)!;
  const options = lookup.optional<{ dataSource?: unknown; tablePrefix: string }>(
    l.LOCKER_STATUS_TOKENS.scheduledOptions,
  );
  const activity = executor.jobs();
  const rows = options
    ? ((await l.readLockerStatus(lookup.sqlClient(options.dataSource), { tablePrefix: options.tablePrefix }))
        .locks ?? [])
    : [];
  const row = (name: string) => rows.find((r) => r.lock === name);
  const prefix = `${executor.holderPrefix}:`;
  const jobs: ScheduledSection['jobs'] = activity.map((a) => {
    const lock = row(a.name);
    return {
      ...a,
      lastRunError: shownError(a.lastRunError, errorDetails),
      holder: lock?.master ?? null,
      holderIsThisInstance: !!lock?.master?.startsWith(prefix),
      timeFromNowMs: lock?.timeFromNowMs ?? null,
    };
  });
  return { holderPrefix: executor.holderPrefix, jobs: jobs.sort((a, b) => a.name.localeCompare(b.name)) };
}
