import { IsOptional } from 'class-validator';
import {
  DatabaseOptionsDto,
  IsDurationOption,
  parseDuration,
  validateOptions,
  type Duration,
} from '@holdfast/core/kit';
import type { ResolvedScheduledLockModuleOptions, ScheduledLockModuleOptions } from '../locker.options';

/** A tick's lock statements are single-row writes: 5 s is far above what one takes. */
export const DEFAULT_SCHEDULED_LOCK_STATEMENT_TIMEOUT = '5s';

class ScheduledLockModuleOptionsSchema extends DatabaseOptionsDto {
  @IsOptional() @IsDurationOption() statementTimeout?: Duration;
}

export function resolveScheduledLockModuleOptions(
  raw: ScheduledLockModuleOptions = {},
): ResolvedScheduledLockModuleOptions {
  validateOptions(ScheduledLockModuleOptionsSchema, raw, 'ScheduledLockModule');
  return {
    dataSource: raw.dataSource,
    tablePrefix: raw.tablePrefix ?? '',
    dialect: raw.dialect,
    schema: raw.schema ?? 'check',
    statementTimeout: parseDuration(
      raw.statementTimeout ?? DEFAULT_SCHEDULED_LOCK_STATEMENT_TIMEOUT,
      'statementTimeout',
    ),
  };
}
