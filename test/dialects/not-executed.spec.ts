/**
 * SQL Server and Oracle are DDL only: Holdfast generates their SQL (`holdfast ddl`, the dialects'
 * unit tests) but has never run it on such a server. A module started on one refuses at startup
 * with DialectNotExecutedError, whether the dialect comes from the DataSource's driver type or the
 * `dialect` option (here on a real SQLite DataSource, where the mssql/oracle SQL would otherwise run).
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { DatabaseResolver, DialectNotExecutedError } from '@holdfast/core/kit';
import { createTestDataSource, tempSqliteFile } from '@holdfast/testing';
import { FailoverModule } from '@holdfast/failover';
import { InboxModule } from '@holdfast/inbox';
import { LockerModule } from '@holdfast/locker';
import { SimbaModule } from '@holdfast/simba';
import type { DynamicModule } from '@nestjs/common';
import type { DataSource } from 'typeorm';

jest.setTimeout(60_000);

describe('SQL Server and Oracle: refused at startup', () => {
  it.each([
    ['mssql', 'SQL Server'],
    ['oracle', 'Oracle'],
  ])('the DataSource driver type %s is refused by the DatabaseResolver, naming %s', (type, server) => {
    const dataSource = { options: { type }, driver: {} } as unknown as DataSource;
    let error: unknown;
    try {
      new DatabaseResolver().resolve(dataSource);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DialectNotExecutedError);
    expect((error as DialectNotExecutedError).code).toBe('HOLDFAST_CORE_DIALECT_NOT_EXECUTED');
    expect((error as Error).message).toContain(
      `Holdfast does not run on ${server} (dialect '${type}', from the DataSource driver type '${type}')`,
    );
    expect((error as Error).message).toContain(`holdfast ddl --dialect ${type}`);
  });

  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = await createTestDataSource('sqlite', { sqliteFile: tempSqliteFile('not-executed') });
  });
  afterAll(async () => {
    await dataSource.destroy();
  });

  const modules: [string, (dialect: 'mssql' | 'oracle') => DynamicModule][] = [
    [
      'FailoverModule',
      (dialect) =>
        FailoverModule.forRoot({ store: { type: 'sql', dataSource, dialect, schema: 'create' } } as never),
    ],
    ['SimbaModule', (dialect) => SimbaModule.forRoot({ dataSource, dialect, schema: 'create' } as never)],
    [
      'LockerModule',
      (dialect) =>
        LockerModule.forRoot({
          dataSource,
          dialect,
          schema: 'create',
          locker: { type: 'lease-database' },
          startup: 'background',
        }),
    ],
    ['InboxModule', (dialect) => InboxModule.forRoot({ dataSource, dialect, schema: 'create' } as never)],
  ];
  for (const [name, module] of modules) {
    for (const dialect of ['mssql', 'oracle'] as const) {
      it(`${name} with dialect '${dialect}' stops startup with DialectNotExecutedError`, async () => {
        const moduleRef = await Test.createTestingModule({ imports: [module(dialect)] }).compile();
        const error = await moduleRef.init().then(
          () => undefined,
          (e: unknown) => e,
        );
        await moduleRef.close().catch(() => undefined);
        expect((error as { code?: string })?.code).toBe('HOLDFAST_CORE_DIALECT_NOT_EXECUTED');
      });
    }
  }
});
