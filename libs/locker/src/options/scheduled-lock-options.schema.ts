import { DatabaseOptionsDto, validateOptions } from '@holdfast/core/kit';
import type { ResolvedScheduledLockModuleOptions, ScheduledLockModuleOptions } from '../locker.options';

/** Nothing beyond the tables' options. */
class ScheduledLockModuleOptionsSchema extends DatabaseOptionsDto {}

export function resolveScheduledLockModuleOptions(
  raw: ScheduledLockModuleOptions = {},
): ResolvedScheduledLockModuleOptions {
  validateOptions(ScheduledLockModuleOptionsSchema, raw, 'ScheduledLockModule');
  return {
    dataSource: raw.dataSource,
    tablePrefix: raw.tablePrefix ?? '',
    dialect: raw.dialect,
    schema: raw.schema ?? 'check',
  };
}
