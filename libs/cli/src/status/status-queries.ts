import { SchemaManager, tableName, type SqlClient } from '@holdfast/core/kit';
import { FAILOVER_STORE_TABLE, selectFailoverStatus, toFailoverStatus } from '@holdfast/failover/internal';
import { COR_MESSAGE_TABLE, CorMessageStore } from '@holdfast/inbox/internal';
import { HOLDFAST_LOCK_TABLE, selectLockStatus, toLockStatus } from '@holdfast/locker/internal';
import { selectMutexStatus, SIMBA_MUTEX_TABLE, toMutexStatus } from '@holdfast/simba/internal';

// Each lib's own status types, read by its own statements.
import type { FailoverStatus } from '@holdfast/failover/internal';
import type { LockStatus } from '@holdfast/locker/internal';
import type { MutexStatus } from '@holdfast/simba/internal';
export type { FailoverStatus, LockStatus, MutexStatus };

export interface InboxStatus {
  /**
   * The inbox's `maxRetries` these counts use (`--max-retries`, else HOLDFAST_INBOX_MAX_RETRIES),
   * or null when neither was given: then due, retrying, paused and parked are null too (each
   * depends on it: a message is parked once RETRIES >= maxRetries, whatever NEXT_RETRY says),
   * and `byRetries` is what tells them apart.
   */
  maxRetries: number | null;
  total: number;
  due: number | null;
  retrying: number | null;
  paused: number | null;
  parked: number | null;
  expired: number;
  /** Age in ms of the oldest due message (null when none is due, or maxRetries is unknown). */
  oldestDueAgeMs: number | null;
  /** Unexpired messages per RETRIES (failed attempts), fewest first: parked = RETRIES >= maxRetries. */
  byRetries: { retries: number; count: number }[];
}

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

/** The tables a status reads, one per section (each under the prefix). */
export const STATUS_TABLES = [
  SIMBA_MUTEX_TABLE.name,
  HOLDFAST_LOCK_TABLE.name,
  COR_MESSAGE_TABLE.name,
  FAILOVER_STORE_TABLE.name,
] as const;

/** The sections of a status, as `read(sections)` names them. */
export const STATUS_SECTIONS = ['owners', 'masters', 'inbox', 'failover'] as const;
export type StatusSection = (typeof STATUS_SECTIONS)[number];

/** Reads what every Holdfast table says right now, with the database's clock. */
export class StatusQueries {
  private readonly schema: SchemaManager;

  constructor(
    private readonly sql: SqlClient,
    private readonly prefix: string,
    /**
     * The inbox's `maxRetries` (a message is parked once its RETRIES reach it). Undefined: not
     * known here, and the counts that depend on it are not guessed (see InboxStatus).
     */
    private readonly inboxMaxRetries?: number,
  ) {
    this.schema = new SchemaManager(sql);
  }

  /**
   * Every section, or only those in `sections` (the others come back null): a reader whose
   * modules each have their own prefix or DataSource (the dashboard) reads one section per module.
   */
  async read(sections: readonly StatusSection[] = STATUS_SECTIONS): Promise<HoldfastStatus> {
    const now = await this.sql.nowMillis();
    const wanted = <T>(section: StatusSection, read: () => Promise<T | null>) =>
      sections.includes(section) ? read() : Promise.resolve(null);
    return {
      databaseNow: now,
      prefix: this.prefix,
      owners: await wanted('owners', () => this.ifTable(SIMBA_MUTEX_TABLE.name, (t) => this.owners(t, now))),
      masters: await wanted('masters', () =>
        this.ifTable(HOLDFAST_LOCK_TABLE.name, (t) => this.masters(t, now)),
      ),
      inbox: await wanted('inbox', () => this.ifTable(COR_MESSAGE_TABLE.name, () => this.inbox(now))),
      failover: await wanted('failover', () =>
        this.ifTable(FAILOVER_STORE_TABLE.name, (t) => this.failover(t, now)),
      ),
    };
  }

  private async ifTable<T>(name: string, read: (table: string) => Promise<T>): Promise<T | null> {
    const table = tableName(this.prefix, name);
    return (await this.schema.tableExists(table)) ? read(table) : null;
  }

  private async owners(table: string, now: number): Promise<MutexStatus[]> {
    // Simba's own reading of its rows (the dashboard's too).
    const rows = await this.sql.query(selectMutexStatus(table));
    return rows.map((row) => toMutexStatus(row, now));
  }

  private async masters(table: string, now: number): Promise<LockStatus[]> {
    // The locker's own reading of its rows (the dashboard's too).
    const s = selectLockStatus(table);
    const rows = await this.sql.query(s.sql, s.params);
    return rows.map((row) => toLockStatus(row, now));
  }

  private async inbox(now: number): Promise<InboxStatus> {
    // The inbox's own statements: its statuses depend on its time columns' live layout and on
    // maxRetries.
    const max = this.inboxMaxRetries;
    const store = new CorMessageStore(this.sql, this.prefix, max);
    await store.detectLayout();
    const queries = store.management;
    const counts = await queries.counts(now);
    const byRetries = await queries.countByRetries(now);
    if (max === undefined) {
      return {
        maxRetries: null,
        total: counts.total,
        due: null,
        retrying: null,
        paused: null,
        parked: null,
        expired: counts.expired,
        oldestDueAgeMs: null,
        byRetries,
      };
    }
    const [oldestDue] = await queries.list('due', 1, 0, now);
    return {
      maxRetries: max,
      total: counts.total,
      due: counts.due,
      retrying: counts.retrying,
      paused: counts.paused,
      parked: counts.parked,
      expired: counts.expired,
      oldestDueAgeMs: oldestDue ? Math.max(0, now - oldestDue.inserted) : null,
      byRetries,
    };
  }

  private async failover(table: string, now: number): Promise<FailoverStatus[]> {
    // The failover store's own reading of its rows.
    const d = this.sql.dialect;
    const s = selectFailoverStatus(d, table, now);
    const rows = await this.sql.query(s.sql, s.params);
    return rows.map((row) => toFailoverStatus(row, d));
  }
}
