import { Inject, Injectable, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { InvalidOptionsError, sqlClientFor } from '@holdfast/core/kit';
import { createTestDataSource, describeEachDatabase, uniqueTablePrefix } from '@holdfast/testing';
import {
  readLockerStatus,
  ScheduledLock,
  ScheduledLockModule,
  ScheduledLockNotReadyError,
  type ScheduledLockModuleOptions,
} from '@holdfast/locker';
import { ScheduledLockExecutor, SCHEDULED_LOCK_OPTIONS } from '@holdfast/locker/internal';
import type { DataSource } from 'typeorm';

/** An application's own configuration, injected into forRootAsync's factory. */
const JOBS_CONFIG = Symbol('jobs-config');
interface JobsConfig {
  dataSource: DataSource;
  tablePrefix: string;
}

@Injectable()
class Jobs {
  runs = 0;

  @ScheduledLock({ name: 'nightly', lockAtMostFor: '5s' })
  async nightly(): Promise<void> {
    this.runs++;
  }
}

describe('ScheduledLockModule', () => {
  let dataSource: DataSource;
  beforeAll(async () => {
    dataSource = await createTestDataSource('sqlite');
  });
  afterAll(async () => {
    await dataSource.destroy();
  });

  it('a job run before the module started is skipped with ScheduledLockNotReadyError, not a bare Error', async () => {
    // compile() builds the providers without running onModuleInit: the executor has no lock table yet.
    const moduleRef = await Test.createTestingModule({
      imports: [ScheduledLockModule.forRoot({ dataSource })],
    }).compile();
    const executor = moduleRef.get(ScheduledLockExecutor);
    expect(() => executor['ready']()).toThrow(ScheduledLockNotReadyError);
    expect(() => executor['ready']()).toThrow(
      expect.objectContaining({ code: 'HOLDFAST_LOCKER_SCHEDULED_LOCK_NOT_READY' }),
    );
    let ran = false;
    const meta = { name: 'early', lockAtMostFor: 5000, lockAtLeastFor: 0, where: 'Jobs.early' };
    await expect(executor.run(meta, null, () => (ran = true), [])).resolves.toBeUndefined();
    expect(ran).toBe(false);
    expect(executor.jobs()).toEqual([
      expect.objectContaining({ name: 'early', lastSkipReason: 'unavailable' }),
    ]);
    await moduleRef.close();
  });

  it('forRoot() needs no options and is global', () => {
    const module = ScheduledLockModule.forRoot();
    expect(module.module).toBe(ScheduledLockModule);
    expect(module.global).toBe(true);
  });

  it.each([
    ['-1', -1],
    ['"soon"', 'soon'],
  ])('refuses statementTimeout %s at bootstrap, naming the option and the value', async (_label, bad) => {
    const error = await Test.createTestingModule({
      imports: [ScheduledLockModule.forRoot({ dataSource, statementTimeout: bad as never })],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(String((error as Error).message)).toContain(`'statementTimeout' = ${JSON.stringify(bad)}`);
  });

  /** Builds the config module of one test: the table prefix comes from it, not from the test's literal. */
  function configModule(tablePrefix: string) {
    @Module({
      providers: [{ provide: JOBS_CONFIG, useValue: { dataSource, tablePrefix } satisfies JobsConfig }],
      exports: [JOBS_CONFIG],
    })
    class ConfigModule {}
    return ConfigModule;
  }

  @Injectable()
  class OptionsFromConfig {
    constructor(@Inject(JOBS_CONFIG) private readonly config: JobsConfig) {}

    createScheduledLockOptions(): ScheduledLockModuleOptions {
      return { dataSource: this.config.dataSource, tablePrefix: this.config.tablePrefix, schema: 'create' };
    }
  }

  const variants: [
    string,
    (config: ReturnType<typeof configModule>) => ReturnType<typeof ScheduledLockModule.forRootAsync>,
  ][] = [
    [
      'useFactory with an injected config',
      (config) =>
        ScheduledLockModule.forRootAsync({
          imports: [config],
          inject: [JOBS_CONFIG],
          useFactory: (c: JobsConfig) => ({
            dataSource: c.dataSource,
            tablePrefix: c.tablePrefix,
            schema: 'create',
          }),
        }),
    ],
    [
      'useClass',
      (config) => ScheduledLockModule.forRootAsync({ imports: [config], useClass: OptionsFromConfig }),
    ],
  ];

  it.each(variants)(
    'forRootAsync (%s): the jobs lock rows of the configured table',
    async (_label, register) => {
      const tablePrefix = uniqueTablePrefix('sla');
      const moduleRef = await Test.createTestingModule({
        imports: [ScheduleModule.forRoot(), register(configModule(tablePrefix))],
        providers: [Jobs],
      }).compile();
      try {
        await moduleRef.init();
        expect(moduleRef.get<{ tablePrefix: string; schema: string }>(SCHEDULED_LOCK_OPTIONS)).toMatchObject({
          tablePrefix,
          schema: 'create',
        });
        const jobs = moduleRef.get(Jobs);
        await jobs.nightly();
        expect(jobs.runs).toBe(1);
        const rows = (await readLockerStatus(sqlClientFor(dataSource), { tablePrefix })).locks;
        expect(rows?.map((r) => r.lock)).toEqual(['nightly']);
      } finally {
        await moduleRef.close();
      }
    },
  );
});

describeEachDatabase(
  'ScheduledLockModule statementTimeout',
  (ctx) => {
    it.each([
      [undefined, 5_000],
      ['2s', 2_000],
    ] as const)('%s: each wait of a tick is bounded by %i ms', async (option, expected) => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ScheduledLockModule.forRoot({
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            statementTimeout: option,
            schema: 'create',
          }),
        ],
      }).compile();
      try {
        await moduleRef.init();
        expect(moduleRef.get<{ statementTimeout: number }>(SCHEDULED_LOCK_OPTIONS).statementTimeout).toBe(
          expected,
        );
        // SQLite has no network to wait on: the client bounds waits on server databases only.
        expect(moduleRef.get(ScheduledLockExecutor).sql.statementTimeout).toBe(
          ctx.db === 'sqlite' ? 0 : expected,
        );
      } finally {
        await moduleRef.close();
      }
    });
  },
  { tables: ['HOLDFAST_LOCK'] },
);
