import {
  DatabaseOptionsDto,
  validateOptions,
  type DataSourceOption,
  type Dialect,
  type SchemaMode,
} from '@holdfast/core/kit';

export interface ScheduledLockModuleOptions {
  /** The TypeORM DataSource, or the name of a @nestjs/typeorm one (default: the default one). */
  dataSource?: DataSourceOption;
  tablePrefix?: string;
  dialect?: Dialect;
  /** What to do with HOLDFAST_LOCK at startup (default 'check'). */
  schema?: SchemaMode;
}

export interface ResolvedScheduledLockModuleOptions {
  dataSource?: DataSourceOption;
  tablePrefix: string;
  dialect?: Dialect;
  schema: SchemaMode;
}

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
