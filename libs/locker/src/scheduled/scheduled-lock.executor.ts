import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DatabaseResolver, HoldfastDatabase, isDuplicateKeyError, type SqlClient } from '@holdfast/core/kit';
import { defaultInstanceId } from '../options/locker.options';
import { HOLDFAST_LOCK_TABLE } from '../store/holdfast-lock.table';
import { LockQueryResolver } from '../store/lock-query.resolver';
import { SCHEDULED_LOCK_MODULE_OPTIONS } from './scheduled-lock.constants';
import type { ResolvedScheduledLockModuleOptions } from './scheduled-lock.module-options';
import type { ScheduledLockMetadata } from './scheduled-lock.options';

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
  private readonly instanceId = defaultInstanceId();
  private serial = 0;
  private outage = false;

  constructor(
    @Inject(SCHEDULED_LOCK_MODULE_OPTIONS) private readonly options: ResolvedScheduledLockModuleOptions,
    moduleRef: ModuleRef,
    resolver: DatabaseResolver,
  ) {
    super(moduleRef, resolver, 'ScheduledLockModule', options);
  }

  async onModuleInit(): Promise<void> {
    this.queries = new LockQueryResolver(this.sql.dialect, this.options.tablePrefix);
    await this.applySchema(HOLDFAST_LOCK_TABLE);
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
      return undefined;
    }
    if (!holder) {
      this.logger.debug(`${meta.where}: lock '${meta.name}' is held elsewhere; skipping this tick`);
      return undefined;
    }
    try {
      return await job.apply(instance, args);
    } finally {
      await this.unlock(meta, holder).catch((error) =>
        this.logger.warn(
          `Releasing lock '${meta.name}' after ${meta.where} failed (it frees itself after lockAtMostFor): ${String(error)}`,
        ),
      );
    }
  }

  /** Takes the lock until now + lockAtMostFor (database clock); the run's holder name, or undefined. */
  private async lock(meta: ScheduledLockMetadata): Promise<string | undefined> {
    const { sql, queries } = this.ready();
    await this.ensureRow(meta.name);
    const holder = `${this.instanceId}:${++this.serial}`.slice(0, 250);
    const changed = await sql.execute(queries.acquireLease(), [holder, meta.lockAtMostFor, meta.name]);
    return changed === 1 ? holder : undefined;
  }

  /** Keeps the lock until lockAtLeastFor after the start, or frees it now if that has passed. */
  private async unlock(meta: ScheduledLockMetadata, holder: string): Promise<void> {
    const { sql, queries } = this.ready();
    const keepFor = meta.lockAtMostFor - meta.lockAtLeastFor;
    await sql.execute(queries.shortenLease(), [keepFor, keepFor, meta.name, holder]);
  }

  private ensureRow(name: string): Promise<void> {
    let row = this.rows.get(name);
    if (!row) {
      const { sql, queries } = this.ready();
      row = (async () => {
        if ((await sql.query(queries.rowExists(), [name])).length > 0) return;
        await sql.execute(queries.ensureRow(), [name]).catch((error: unknown) => {
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
      throw new Error('ScheduledLockModule is not initialized yet (a job ran before onModuleInit)');
    }
    return { sql: this.sql, queries: this.queries };
  }
}
