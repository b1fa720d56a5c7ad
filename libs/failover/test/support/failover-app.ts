import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TcpProxy, createTestDataSource, type TestDatabaseContext } from '@holdfast/testing';
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

/**
 * Runs `body` against an app whose DataSource reaches the test server through a TcpProxy the
 * test controls (`proxy.cut()` is the outage), then closes the app, the DataSource and the proxy.
 * Servers only: an embedded SQLite file has no connection to cut.
 */
export async function withAppBehindProxy(
  ctx: Pick<TestDatabaseContext, 'db' | 'prefix'>,
  start: (ctx: Pick<TestDatabaseContext, 'dataSource' | 'prefix'>) => Promise<INestApplication>,
  body: (app: INestApplication, proxy: TcpProxy) => Promise<void>,
): Promise<void> {
  const proxy = new TcpProxy(ctx.db === 'postgres' ? 5432 : 3306);
  const port = await proxy.start();
  const dataSource = await createTestDataSource(ctx.db, { port, poolSize: 2 });
  try {
    const app = await start({ dataSource, prefix: ctx.prefix });
    try {
      await body(app, proxy);
    } finally {
      proxy.restore();
      await app.close();
    }
  } finally {
    proxy.restore();
    await dataSource.destroy().catch(() => undefined);
    await proxy.stop();
  }
}
