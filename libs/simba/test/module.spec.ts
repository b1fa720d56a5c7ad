import { Controller, Injectable, Module, Scope, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NonStaticHandlerError, SchemaMissingError, statement } from '@holdfast/core/kit';
import { testDataSourceOptions } from '@holdfast/testing';
import {
  MutexContendRegistry,
  MutexContendServiceFactory,
  OnMutexAcquired,
  SimbaHealthIndicator,
  SimbaLocker,
  SimbaModule,
  type ResolvedSimbaOptions,
  type SimbaModuleOptions,
  SIMBA_STATUS_TOKENS,
} from '../src';
import { describeEachSimbaTable, waitUntil } from './simba-test.support';

@Injectable()
class Handlers {
  acquired = 0;
  @OnMutexAcquired('module-spec')
  onAcquired(): void {
    this.acquired++;
  }
}

@Controller('module-spec')
class HandlingController {
  acquired = 0;
  @OnMutexAcquired('module-spec-controller')
  onAcquired(): void {
    this.acquired++;
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedHandlers {
  @OnMutexAcquired('module-spec-request')
  onAcquired(): void {}
}

describeEachSimbaTable('SimbaModule', (ctx) => {
  const opened: INestApplicationContext[] = [];
  const open = async (imports: unknown[], providers: unknown[] = []) => {
    const app = await Test.createTestingModule({
      imports: imports as never[],
      providers: providers as never[],
    }).compile();
    await app.init();
    opened.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((a) => a.close()));
  });

  const base = (): SimbaModuleOptions => ({
    dataSource: ctx.dataSource,
    tablePrefix: ctx.prefix,
    schema: 'create',
    ttl: '3s',
  });

  class OptionsFactory {
    createSimbaOptions = base;
    create = base;
  }
  @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
  class OptionsModule {}

  it.each([
    ['forRoot', () => SimbaModule.forRoot(base())],
    ['forRootAsync useFactory', () => SimbaModule.forRootAsync({ useFactory: base })],
    ['forRootAsync useClass', () => SimbaModule.forRootAsync({ useClass: OptionsFactory as never })],
    [
      'forRootAsync useExisting',
      () => SimbaModule.forRootAsync({ imports: [OptionsModule], useExisting: OptionsFactory as never }),
    ],
  ])('%s resolves the same options and exports the services', async (_name, build) => {
    const app = await open([build()]);
    const options = app.get<ResolvedSimbaOptions>(SIMBA_STATUS_TOKENS.options);
    expect(options).toMatchObject({
      ttl: 3_000,
      transition: 6_000,
      statementTimeout: 2_000,
      tablePrefix: ctx.prefix,
    });
    expect(app.get(MutexContendServiceFactory)).toBeInstanceOf(MutexContendServiceFactory);
    expect(app.get(SimbaLocker)).toBeInstanceOf(SimbaLocker);
    expect(app.get(MutexContendRegistry)).toBeInstanceOf(MutexContendRegistry);
  });

  it('finds the default @nestjs/typeorm DataSource, discovers handlers, reports health', async () => {
    const app = await open(
      [
        TypeOrmModule.forRoot(
          testDataSourceOptions(ctx.db, {
            sqliteFile: ctx.db === 'sqlite' ? (ctx.dataSource.options.database as string) : undefined,
          }),
        ),
        SimbaModule.forRoot({ tablePrefix: ctx.prefix, schema: 'create', isGlobal: true }),
      ],
      [Handlers],
    );
    await waitUntil(() => app.get(Handlers).acquired === 1, 5_000, 'the discovered handler runs');
    expect(app.get(MutexContendRegistry).isOwner('module-spec')).toBe(true);
    const health = await app.get(SimbaHealthIndicator).isHealthy();
    expect(health.simba.status).toBe('up');
    expect(health.simba.mutexes).toEqual([expect.objectContaining({ mutex: 'module-spec', isOwner: true })]);
    await app.close();
    opened.length = 0;
    // Shutdown released the row.
    const [row] = await ctx.sql.query<{ owner_id: string | null }>(
      statement(
        `SELECT owner_id AS owner_id FROM ${ctx.prefix}simba_mutex WHERE mutex = ${ctx.sql.dialect.placeholder(1)}`,
        ['module-spec'],
      ),
    );
    expect((row.owner_id ?? '').trimEnd()).toBe(''); // CHAR(32) pads on PostgreSQL
  });

  it("schema 'check' stops startup when the table is missing, with the DDL", async () => {
    const error = await open([
      SimbaModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: `${ctx.prefix}none_` }),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaMissingError);
    expect((error as Error).message).toContain(`CREATE TABLE ${ctx.prefix}none_simba_mutex`);
  });

  it('discovers handlers on controllers too, by the core discovery rule', async () => {
    const app = await Test.createTestingModule({
      imports: [SimbaModule.forRoot(base())],
      controllers: [HandlingController],
    }).compile();
    await app.init();
    opened.push(app);
    await waitUntil(() => app.get(HandlingController).acquired === 1, 5_000, 'the controller handler runs');
    expect(app.get(MutexContendRegistry).isOwner('module-spec-controller')).toBe(true);
  });

  it('refuses a handler on a request-scoped provider at startup', async () => {
    const error = await open([SimbaModule.forRoot(base())], [RequestScopedHandlers]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonStaticHandlerError);
    expect(error).toMatchObject({ code: 'HOLDFAST_CORE_NON_STATIC_HANDLER' });
    expect((error as Error).message).toContain('@OnMutexAcquired() on RequestScopedHandlers.onAcquired');
  });
});
