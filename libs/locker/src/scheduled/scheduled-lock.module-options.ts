import {
  DIALECTS,
  IsDataSourceOption,
  IsTablePrefix,
  SCHEMA_MODES,
  validateOptions,
  type DataSourceOption,
  type Dialect,
  type SchemaMode,
} from '@holdfast/core';
import { IsIn, IsOptional } from 'class-validator';

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

class ScheduledLockModuleOptionsSchema {
  @IsOptional()
  @IsDataSourceOption()
  dataSource?: unknown;

  @IsOptional()
  @IsTablePrefix()
  tablePrefix?: string;

  @IsOptional()
  @IsIn(DIALECTS)
  dialect?: string;

  @IsOptional()
  @IsIn(SCHEMA_MODES)
  schema?: string;
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
  };
}
