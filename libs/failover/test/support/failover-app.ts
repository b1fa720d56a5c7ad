import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { TestDatabaseContext } from '@holdfast/core';
import { FailoverModule, type FailoverModuleOptions } from '@holdfast/failover';

/**
 * A Nest app with FailoverModule on the test database's SQL store (table under ctx.prefix,
 * created if missing, cleanup cron off) plus the given modules and providers.
 */
export async function startFailoverApp(
  ctx: Pick<TestDatabaseContext, 'dataSource' | 'prefix'>,
  options: Partial<FailoverModuleOptions> = {},
  metadata: Pick<ModuleMetadata, 'imports' | 'providers'> = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      FailoverModule.forRoot({
        store: { type: 'sql', dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' },
        cleanup: { enabled: false },
        ...options,
      }),
      ...(metadata.imports ?? []),
    ],
    providers: metadata.providers ?? [],
  }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}
