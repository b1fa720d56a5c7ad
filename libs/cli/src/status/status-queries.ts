import type { SqlClient } from '@holdfast/core/kit';
import { FAILOVER_TABLES, readFailoverStatus, type FailoverStatus } from '@holdfast/failover';
import { INBOX_TABLES, readInboxStatus, type InboxStatus } from '@holdfast/inbox';
import { LOCKER_TABLES, readLockerStatus, type LockStatus, type LockTableOptions } from '@holdfast/locker';
import { readSimbaStatus, SIMBA_TABLES, type MutexStatus } from '@holdfast/simba';

// Each lib's own status types, read by its own read-model.
export type { FailoverStatus, InboxStatus, LockStatus, MutexStatus };

export interface HoldfastStatus {
  /** The database clock, epoch ms, that every relative figure uses. */
  databaseNow: number;
  prefix: string;
  /** A section is null when its table does not exist (that module is not used here). */
  owners: MutexStatus[] | null;
  masters: LockStatus[] | null;
  inbox: InboxStatus | null;
  failover: FailoverStatus[] | null;
}

/** The base names of the tables a status reads, one per section (each under the prefix). */
export const STATUS_TABLES: readonly string[] = [
  SIMBA_TABLES.mutex.name,
  LOCKER_TABLES.lock.name,
  INBOX_TABLES.message.name,
  FAILOVER_TABLES.store.name,
];

/** The sections of a status, as `read(sections)` names them. */
export const STATUS_SECTIONS = ['owners', 'masters', 'inbox', 'failover'] as const;
export type StatusSection = (typeof STATUS_SECTIONS)[number];

/**
 * What every Holdfast table says right now, with the database's clock: each section is its lib's
 * own status read-model (readSimbaStatus, readLockerStatus, readInboxStatus, readFailoverStatus).
 */
export class StatusQueries {
  constructor(
    private readonly sql: SqlClient,
    private readonly prefix: string,
    /**
     * The inbox's `maxRetries` (a message is parked once its RETRIES reach it). Undefined: not
     * known here, and the counts that depend on it are not guessed (see InboxStatus).
     */
    private readonly inboxMaxRetries?: number,
    /** The lock table's name and columns when not Holdfast's own (LockerModule's `lockTableName`, `lockColumns`). */
    private readonly lockTable: Omit<LockTableOptions, 'tablePrefix'> = {},
  ) {}

  /** Every section, or only those in `sections` (the others come back null). */
  async read(sections: readonly StatusSection[] = STATUS_SECTIONS): Promise<HoldfastStatus> {
    const tablePrefix = this.prefix;
    const databaseNow = await this.sql.nowMillis();
    const at = { databaseNow };
    const wanted = <T>(section: StatusSection, read: () => Promise<T | null>) =>
      sections.includes(section) ? read() : Promise.resolve(null);
    return {
      databaseNow,
      prefix: this.prefix,
      owners: await wanted(
        'owners',
        async () => (await readSimbaStatus(this.sql, { tablePrefix }, at)).mutexes,
      ),
      masters: await wanted(
        'masters',
        async () => (await readLockerStatus(this.sql, { ...this.lockTable, tablePrefix }, at)).locks,
      ),
      inbox: await wanted(
        'inbox',
        async () =>
          (await readInboxStatus(this.sql, { tablePrefix, maxRetries: this.inboxMaxRetries }, at)).inbox,
      ),
      failover: await wanted(
        'failover',
        async () => (await readFailoverStatus(this.sql, { tablePrefix }, at)).entries,
      ),
    };
  }
}
