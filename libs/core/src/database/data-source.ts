import { ModuleRef } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { HoldfastError } from '../errors/holdfast.error';

/** How a module option names its DataSource: the instance, a named @nestjs/typeorm one, or the default. */
export type DataSourceOption = string | DataSource | undefined;

/**
 * Finds the DataSource a module was configured with. A string or nothing looks up the
 * @nestjs/typeorm provider of that name anywhere in the application.
 */
export function resolveDataSource(
  moduleRef: ModuleRef,
  option: DataSourceOption,
  module: string,
): DataSource {
  if (option instanceof DataSource) return option;
  if (
    option !== undefined &&
    typeof option !== 'string' &&
    (option as object)?.constructor?.name === 'DataSource'
  ) {
    return option as DataSource;
  }
  const token = getDataSourceToken(option as string | undefined);
  try {
    return moduleRef.get<DataSource>(token as never, { strict: false });
  } catch (cause) {
    throw new HoldfastError(
      `${module}: no TypeORM DataSource ${option ? `named '${option}'` : '(default)'} is registered. ` +
        `Import TypeOrmModule.forRoot(...) in the application, or pass a DataSource as the 'dataSource' option.`,
      'HOLDFAST_CORE_NO_DATASOURCE',
      { cause },
    );
  }
}

/** The DataSource's mysql2 `timezone` option, which decides how DATETIME values are read. */
export function driverTimezone(dataSource: DataSource): string | undefined {
  return (dataSource.options as { timezone?: string }).timezone;
}
