import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import {
  DatabaseResolver,
  HoldfastDatabase,
  isDuplicateKeyError,
  type SqlClient,
  type SqlClientOptions,
} from '@holdfast/core/kit';
import { ScheduledLockNotReadyError } from '../errors';
import { ScheduledLockMetrics } from '../metrics/scheduled-lock.metrics';
import { defaultInstanceId } from '../options/locker-options.schema';
import { DEFAULT_LOCK_TABLE_NAMES, HOLDFAST_LOCK_TABLE } from '../store/holdfast-lock.table';
import { failoverGraceApplies } from '../store/lease-failover-grace';
import { LockQueryResolver } from '../store/lock-query.resolver';
import { SCHEDULED_LOCK_OPTIONS } from '../locker.tokens';
import type { ResolvedScheduledLockModuleOptions } from '../locker.options';
import type { ScheduledLockMetadata } from './scheduled-lock.options';

/** What this instance saw of one @ScheduledLock job (its lock name), for the dashboard. */
export interface ScheduledJobActivity {
  name: string;
  /** Where the job is declared: `Class.method`. */
  where: string;
  runs: number;
  skips: number;
  /** The last tick this instance ran the job (ISO), and how long the run took. */
  lastRunAt: string | null;
  lastRunMs: number | null;
  lastRunError: string | null;
  /** The last tick left to another instance, or skipped because the lock table was unreachable. */
  lastSkipAt: string | null;
  lastSkipReason: 'locked' | 'unavailable' | null;
}

/**
 * Takes and gives back the lock rows of @ScheduledLock() methods in HOLDFAST_LOCK. Every time
 * is the database's (`TIME` = its now + lockAtMostFor), so the instances' clocks do not matter.
 * `BROKER_NAME` names the run (instance and a counter), so only that run can shorten its lock.
 */
@Injectable()
export class ScheduledLockExecutor extends HoldfastDatabase implements OnModuleInit {
  private readonly logger = new Logger(ScheduledLockExecutor.name);
  private queries?: LockQueryResolver;
  private readonly rows = new Map<string, Promise<void>>();
  private readonly instanceId = defaultInstanceId('locker:scheduled');
  private serial = 0;
  private outage = false;
  private readonly activity = new Map<string, ScheduledJobActivity>();
  // Declared per executor (when the application builds it), after the SDK is registered.
  private readonly metrics = new ScheduledLockMetrics();

  constructor(
    @Inject(SCHEDULED_LOCK_OPTIONS) private readonly options: ResolvedScheduledLockModuleOptions,
    moduleRef: ModuleRef,
    resolver: DatabaseResolver,
  ) {
    super(moduleRef, resolver, 'ScheduledLockModule', options);
  }

  /**
   * Every wait of a tick bounded (#43): its statements run on the lease lane, one connection that Simba
   * and the lockers share, so one gone silent for good is destroyed, not waited on (the option
   * `statementTimeout`, 5 s by default).
   */
  protected override clientOptions(): SqlClientOptions {
    return { statementTimeout: this.options.statementTimeout };
  }

  async onModuleInit(): Promise<void> {
    const queries = new LockQueryResolver(this.sql.dialect, this.options.tablePrefix);
    const live = await this.applySchema(HOLDFAST_LOCK_TABLE);
    // A run's lock is a lease of lockAtMostFor: after a lossy PostgreSQL failover no run starts
    // before every run the old primary may have let start is past its lockAtMostFor (the lease
    // locker's grace, lease-failover-grace.ts; rows in grace are taken lockAtMostFor after it began).
    const names = DEFAULT_LOCK_TABLE_NAMES;
    if (failoverGraceApplies(this.sql.dialect, names, live.column(names.id)?.kind)) {
      queries.failoverGrace = true;
      const marker = queries.ensureTimelineMarker();
      // A startup statement: on the application's pool (the lease lane opens with the others at bootstrap).
      if (marker) await this.applicationSql.execute(marker);
    }
    this.queries = queries;
  }

  /** Runs `job` if this instance gets the lock for this tick; undefined when another has it. */
  async run(
    meta: ScheduledLockMetadata,
    instance: unknown,
    job: (...args: unknown[]) => unknown,
    args: unknown[],
  ): Promise<unknown> {
    let holder: string | undefined;
    try {
      holder = await this.lock(meta);
      if (this.outage) this.logger.log(`Scheduled locks reachable again (${meta.where})`);
      this.outage = false;
    } catch (error) {
      // One line per outage, not one per tick; the tick is skipped (nobody may run unlocked).
      if (!this.outage)
        this.logger.warn(`Skipping ${meta.where}: lock '${meta.name}' unavailable: ${String(error)}`);
      this.outage = true;
      this.skipped(meta, 'unavailable');
      return undefined;
    }
    if (!holder) {
      this.logger.debug(`${meta.where}: lock '${meta.name}' is held elsewhere; skipping this tick`);
      this.skipped(meta, 'locked');
      return undefined;
    }
    const started = Date.now();
    let failure: unknown = null;
    try {
      return await job.apply(instance, args);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      this.ran(meta, started, failure);
      await this.unlock(meta, holder).catch((error) =>
        this.logger.warn(
          `Releasing lock '${meta.name}' after ${meta.where} failed (it frees itself after lockAtMostFor): ${String(error)}`,
        ),
      );
    }
  }

  /** What this instance saw of each @ScheduledLock job so far (runs, skips, the last of each). */
  jobs(): ScheduledJobActivity[] {
    return [...this.activity.values()].map((a) => ({ ...a }));
  }

  /** This instance's id, as the `BROKER_NAME` of its runs starts with it. */
  get holderPrefix(): string {
    return this.instanceId;
  }

  private entry(meta: ScheduledLockMetadata): ScheduledJobActivity {
    let entry = this.activity.get(meta.name);
    if (!entry) {
      entry = {
        name: meta.name,
        where: meta.where,
        runs: 0,
        skips: 0,
        lastRunAt: null,
        lastRunMs: null,
        lastRunError: null,
        lastSkipAt: null,
        lastSkipReason: null,
      };
      this.activity.set(meta.name, entry);
    }
    return entry;
  }

  private ran(meta: ScheduledLockMetadata, started: number, failure: unknown): void {
    const entry = this.entry(meta);
    entry.runs++;
    entry.lastRunAt = new Date(started).toISOString();
    entry.lastRunMs = Date.now() - started;
    entry.lastRunError =
      failure === null ? null : failure instanceof Error ? failure.message : String(failure);
    this.metrics.ran(meta.name, failure === null ? 'success' : 'error');
  }

  private skipped(meta: ScheduledLockMetadata, reason: 'locked' | 'unavailable'): void {
    const entry = this.entry(meta);
    entry.skips++;
    entry.lastSkipAt = new Date().toISOString();
    entry.lastSkipReason = reason;
    this.metrics.skipped(meta.name, reason);
  }

  /** Takes the lock until now + lockAtMostFor (database clock); the run's holder name, or undefined. */
  private async lock(meta: ScheduledLockMetadata): Promise<string | undefined> {
    const { sql, queries } = this.ready();
    await this.ensureRow(meta.name);
    const holder = `${this.instanceId}:${++this.serial}`.slice(0, 250);
    const acquire = queries.acquireLease({ id: meta.name, holder, leaseMillis: meta.lockAtMostFor });
    const changed = await sql.execute(acquire);
    return changed === 1 ? holder : undefined;
  }

  /** Keeps the lock until lockAtLeastFor after the start, or frees it now if that has passed. */
  private async unlock(meta: ScheduledLockMetadata, holder: string): Promise<void> {
    const { sql, queries } = this.ready();
    const keepFor = meta.lockAtMostFor - meta.lockAtLeastFor;
    const shorten = queries.shortenLease({ id: meta.name, holder, leaseMillis: keepFor });
    await sql.execute(shorten);
  }

  private ensureRow(name: string): Promise<void> {
    let row = this.rows.get(name);
    if (!row) {
      const { sql, queries } = this.ready();
      row = (async () => {
        const exists = queries.rowExists(name);
        if ((await sql.query(exists)).length > 0) return;
        const ensure = queries.ensureRow(name);
        await sql.execute(ensure).catch((error: unknown) => {
          if (!isDuplicateKeyError(error)) throw error;
        });
      })();
      row.catch(() => this.rows.delete(name));
      this.rows.set(name, row);
    }
    return row;
  }

  private ready(): { sql: SqlClient; queries: LockQueryResolver } {
    if (!this.queries) {
      throw new ScheduledLockNotReadyError();
    }
    return { sql: this.sql, queries: this.queries };
  }
}
