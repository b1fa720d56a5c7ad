import type { TableSpec } from '@holdfast/core/kit';
import type { Type } from '@nestjs/common';
import { LOCKER_OPTIONS, SCHEDULED_LOCK_OPTIONS } from '../locker.tokens';
import { ScheduledLockExecutor } from '../scheduled/scheduled-lock.executor';
import { HOLDFAST_LOCK_TABLE } from '../store/holdfast-lock.table';

/**
 * The locker's tables, by role: Holdfast's own lock table (a custom `lockTableName` is the
 * application's), for `holdfast ddl`, migrations, tools and tests that create it.
 */
export const LOCKER_TABLES: { readonly lock: TableSpec } = Object.freeze({ lock: HOLDFAST_LOCK_TABLE });

/**
 * What a tool that reads a running LockerModule or ScheduledLockModule (the dashboard) looks up
 * in the application: each module's resolved options, and the @ScheduledLock jobs' executor
 * (what this instance saw of each job, and the holder prefix of its lock rows).
 */
export const LOCKER_STATUS_TOKENS: {
  readonly options: symbol;
  readonly scheduledOptions: symbol;
  readonly scheduledExecutor: Type<Pick<ScheduledLockExecutor, 'jobs' | 'holderPrefix'>>;
} = Object.freeze({
  options: LOCKER_OPTIONS,
  scheduledOptions: SCHEDULED_LOCK_OPTIONS,
  scheduledExecutor: ScheduledLockExecutor,
});
