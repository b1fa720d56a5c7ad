import { InvalidOptionsError } from '@holdfast/core/kit';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LockTimingError, LockerModule, LockerService, type LockerModuleOptions } from '@holdfast/locker';
import { resolveLockerOptions } from '@holdfast/locker/internal';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = () => mkdtempSync(join(tmpdir(), 'locker-opt-'));

describe('LockerModule options', () => {
  it('applies defaults: 10 s interval, keep-alive a third of it, block startup, lock name default', () => {
    const resolved = resolveLockerOptions({ locker: { type: 'lease-database' } });
    expect(resolved).toMatchObject({
      lockName: 'default',
      lockAcquireSleepInterval: 10_000,
      lockKeepAlivePeriod: 3_333,
      failIfLocked: false,
      useLock: true,
      startup: 'block',
      schema: 'check',
      tablePrefix: '',
      maxAllowableDiffFromDBTime: 0,
    });
    expect(resolved.instanceId).toMatch(new RegExp(`^[0-9a-f]{8}(\\.\\d+)?:${process.pid}@`));
  });

  it('accepts duration strings and keeps leaseHolderId as the instance id', () => {
    const resolved = resolveLockerOptions({
      locker: { type: 'lease-database', leaseHolderId: 'broker-1', maxAllowableDiffFromDBTime: '2s' },
      lockAcquireSleepInterval: '5s',
      lockKeepAlivePeriod: '1s',
    });
    expect(resolved).toMatchObject({
      instanceId: 'broker-1',
      lockAcquireSleepInterval: 5_000,
      lockKeepAlivePeriod: 1_000,
      maxAllowableDiffFromDBTime: 2_000,
    });
  });

  it('refuses a lockAcquireSleepInterval that does not exceed lockKeepAlivePeriod, saying why', () => {
    for (const [interval, keepAlive] of [
      [1_000, 1_000],
      ['1s', '5s'],
    ] as const) {
      let error: unknown;
      try {
        resolveLockerOptions({
          locker: { type: 'lease-database' },
          lockAcquireSleepInterval: interval,
          lockKeepAlivePeriod: keepAlive,
        });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LockTimingError);
      expect((error as Error).message).toMatch(
        /lockAcquireSleepInterval \(\d+ ms\) must exceed lockKeepAlivePeriod \(\d+ ms\)/,
      );
      expect((error as Error).message).toContain('expire between two keep-alives');
    }
  });

  it('refuses lockKeepAlivePeriod 0 for the lease-database locker (the lease would lapse)', () => {
    let error: unknown;
    try {
      resolveLockerOptions({ locker: { type: 'lease-database' }, lockKeepAlivePeriod: 0 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LockTimingError);
    expect((error as Error).message).toContain('lockKeepAlivePeriod is 0 (no keep-alive)');
  });

  it("accepts the seed's examples for database and shared-file (keep-alive 10 s, acquire interval 5 s)", () => {
    for (const locker of [{ type: 'database' }, { type: 'shared-file', directory: dir() }] as const) {
      expect(
        resolveLockerOptions({ locker, lockKeepAlivePeriod: 10_000, lockAcquireSleepInterval: 5_000 }),
      ).toMatchObject({ lockKeepAlivePeriod: 10_000, lockAcquireSleepInterval: 5_000 });
    }
    // The seed's lease example keeps the lease rule: keep-alive 5 s below the 10 s interval.
    expect(
      resolveLockerOptions({
        locker: { type: 'lease-database' },
        lockKeepAlivePeriod: '5s',
        lockAcquireSleepInterval: '10s',
      }),
    ).toMatchObject({ lockKeepAlivePeriod: 5_000, lockAcquireSleepInterval: 10_000 });
  });

  it('accepts lockKeepAlivePeriod 0 (no keep-alive) for database and shared-file', () => {
    for (const locker of [{ type: 'database' }, { type: 'shared-file', directory: dir() }] as const) {
      expect(resolveLockerOptions({ locker, lockKeepAlivePeriod: 0 }).lockKeepAlivePeriod).toBe(0);
    }
  });

  it('defaults the keep-alive per locker as the seed documents it: database 30 s, shared-file 0, the lease a third of the interval', () => {
    expect(resolveLockerOptions({ locker: { type: 'database' } }).lockKeepAlivePeriod).toBe(30_000);
    expect(
      resolveLockerOptions({ locker: { type: 'shared-file', directory: dir() } }).lockKeepAlivePeriod,
    ).toBe(0);
    expect(
      resolveLockerOptions({ locker: { type: 'lease-database' }, lockAcquireSleepInterval: '6s' })
        .lockKeepAlivePeriod,
    ).toBe(2_000);
  });

  const bad: [string, Partial<LockerModuleOptions> & Record<string, unknown>, RegExp][] = [
    ['no locker', {}, /option 'locker' = undefined: is required/],
    [
      'unknown locker type',
      { locker: { type: 'zookeeper' } as never },
      /option 'locker.type' = "zookeeper": must be one of lease-database, database, shared-file, custom/,
    ],
    [
      'shared-file without directory',
      { locker: { type: 'shared-file' } as never },
      /option 'locker.directory' = undefined/,
    ],
    [
      'shared-file stale below 2 s',
      { locker: { type: 'shared-file', mode: 'mtime', directory: '/tmp/x', stale: 500 } },
      /option 'locker.stale' = 500: must be at least 2000 ms/,
    ],
    [
      'shared-file stale in mode os (it holds no stale lock)',
      { locker: { type: 'shared-file', directory: '/tmp/x', stale: '5s' } },
      /option 'locker.stale' = "5s": applies to mode 'mtime' only \(mode is 'os'\)/,
    ],
    [
      'shared-file lockFile in mode mtime',
      { locker: { type: 'shared-file', mode: 'mtime', directory: '/tmp/x', lockFile: 'lock' } },
      /option 'locker.lockFile' = "lock": applies to mode 'os' only \(mode is 'mtime'\)/,
    ],
    [
      'shared-file lockFile with a path separator',
      { locker: { type: 'shared-file', directory: '/tmp/x', lockFile: '../lock' } },
      /option 'locker.lockFile' = "..\/lock": must be a file name in directory/,
    ],
    [
      'shared-file unknown mode',
      { locker: { type: 'shared-file', directory: '/tmp/x', mode: 'flock' } as never },
      /option 'locker.mode' = "flock": must be one of os, mtime/,
    ],
    [
      'custom without a class',
      { locker: { type: 'custom', useClass: 'nope' } as never },
      /option 'locker.useClass' = "nope": must be a class implementing Locker/,
    ],
    [
      'bad duration',
      { locker: { type: 'database' }, lockAcquireSleepInterval: 'soon' },
      /option 'lockAcquireSleepInterval' = "soon"/,
    ],
    [
      'negative keep-alive',
      { locker: { type: 'database' }, lockKeepAlivePeriod: -1 },
      /option 'lockKeepAlivePeriod' = -1: must be milliseconds \(a number ≥ 0\)/,
    ],
    [
      'bad startup',
      { locker: { type: 'database' }, startup: 'lazy' as never },
      /option 'startup' = "lazy": must be one of block, background/,
    ],
    [
      'bad prefix',
      { locker: { type: 'database' }, tablePrefix: 'x; DROP' },
      /option 'tablePrefix' = "x; DROP"/,
    ],
    [
      'long lock name',
      { locker: { type: 'database' }, lockName: 'x'.repeat(65) },
      /option 'lockName' = "x{65}": must be at most 64 characters/,
    ],
    [
      'long holder id',
      { locker: { type: 'lease-database', leaseHolderId: 'h'.repeat(251) } },
      /option 'locker.leaseHolderId'/,
    ],
    [
      'failIfLocked not boolean',
      { locker: { type: 'database' }, failIfLocked: 'yes' as never },
      /option 'failIfLocked' = "yes"/,
    ],
  ];
  it.each(bad)('refuses %s, naming the option and the value', (_label, options, message) => {
    expect(() => resolveLockerOptions(options as LockerModuleOptions)).toThrow(InvalidOptionsError);
    expect(() => resolveLockerOptions(options as LockerModuleOptions)).toThrow(message);
  });

  it('stops bootstrap with the error for forRoot and forRootAsync alike', async () => {
    const options: LockerModuleOptions = {
      locker: { type: 'lease-database' },
      lockAcquireSleepInterval: 100,
      lockKeepAlivePeriod: 200,
    };
    await expect(
      Test.createTestingModule({ imports: [LockerModule.forRoot(options)] }).compile(),
    ).rejects.toThrow(LockTimingError);
    await expect(
      Test.createTestingModule({
        imports: [LockerModule.forRootAsync({ useFactory: () => options })],
      }).compile(),
    ).rejects.toThrow(LockTimingError);
  });

  describe('forRootAsync variants', () => {
    @Injectable()
    class LockerConfig {
      createLockerOptions(): LockerModuleOptions {
        return { locker: { type: 'shared-file', directory: dir() }, startup: 'background', useLock: false };
      }
    }
    @Module({ providers: [LockerConfig], exports: [LockerConfig] })
    class ConfigModule {}

    const variants: [string, () => ReturnType<typeof LockerModule.forRootAsync>][] = [
      [
        'useFactory',
        () => LockerModule.forRootAsync({ useFactory: () => new LockerConfig().createLockerOptions() }),
      ],
      [
        'useFactory with inject',
        () =>
          LockerModule.forRootAsync({
            imports: [ConfigModule],
            inject: [LockerConfig],
            useFactory: (c: LockerConfig) => c.createLockerOptions(),
          }),
      ],
      ['useClass', () => LockerModule.forRootAsync({ useClass: LockerConfig })],
      [
        'useExisting',
        () => LockerModule.forRootAsync({ imports: [ConfigModule], useExisting: LockerConfig }),
      ],
    ];
    it.each(variants)('%s resolves the options and starts the service', async (_name, make) => {
      const moduleRef = await Test.createTestingModule({ imports: [make()] }).compile();
      await moduleRef.init();
      const locker = moduleRef.get(LockerService);
      // useLock: false makes the instance master without any lock (ActiveMQ's useLock=false).
      expect(locker.isMaster).toBe(true);
      await moduleRef.close();
      expect(locker.role).toBe('stopped');
    });
  });
});
