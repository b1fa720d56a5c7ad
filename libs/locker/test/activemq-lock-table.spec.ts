/**
 * `lockTableName` and `lockColumns`: Holdfast locks on an existing lock table with its own name and
 * column names, here ActiveMQ's own `ACTIVEMQ_LOCK` made by its DDL (ID BIGINT, one row ID = 1),
 * with the lease-database and database lockers, and on a table whose columns have other names.
 */
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import { InvalidOptionsError, statement } from '@holdfast/core/kit';
import { LockerConfigurationError, type LockerModuleOptions } from '@holdfast/locker';
import { resolveLockerOptions } from '@holdfast/locker/internal';
import { lockerInstance, waitUntil, type TestInstance } from './locker-test-kit';

jest.setTimeout(60_000);

/** ActiveMQ's `Statements.getCreateLockSchemaStatements()` with its default types. */
const activemqDdl = (table: string) => [
  `CREATE TABLE ${table}( ID BIGINT NOT NULL, TIME BIGINT, BROKER_NAME VARCHAR(250), PRIMARY KEY (ID) )`,
  `INSERT INTO ${table}(ID) VALUES (1)`,
];

describe('lockTableName / lockColumns validation', () => {
  const base: LockerModuleOptions = { locker: { type: 'lease-database' } };

  it.each([
    [{ lockTableName: 'ACTIVEMQ_LOCK; DROP TABLE x' }, 'lockTableName'],
    [{ lockTableName: '1LOCK' }, 'lockTableName'],
    [{ lockColumns: { time: 'TIME--' } }, 'lockColumns.time'],
    [{ lockColumns: { id: 'ID) OR (1=1' } }, 'lockColumns.id'],
    [{ lockColumns: { brokerName: '' } }, 'lockColumns.brokerName'],
  ])('%j is refused with InvalidOptionsError naming %s', (bad, option) => {
    let error: unknown;
    try {
      resolveLockerOptions({ ...base, ...(bad as Partial<LockerModuleOptions>) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toContain(option);
  });

  it('resolves the names, with the defaults where none is given', () => {
    const resolved = resolveLockerOptions({
      ...base,
      lockTableName: 'ACTIVEMQ_LOCK',
      lockColumns: { time: 'T' },
    });
    expect(resolved.lockTable).toEqual({
      table: 'ACTIVEMQ_LOCK',
      id: 'ID',
      time: 'T',
      brokerName: 'BROKER_NAME',
    });
    expect(resolveLockerOptions(base).lockTable.table).toBe('HOLDFAST_LOCK');
  });
});

describeEachDatabase(
  "LockerModule on ActiveMQ's lock table",
  (ctx: TestDatabaseContext) => {
    const open: TestInstance[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((i) => i.close()));
    });

    const start = async (options: Partial<LockerModuleOptions> & Pick<LockerModuleOptions, 'locker'>) => {
      const instance = await lockerInstance({
        dataSource: ctx.dataSource,
        schema: 'check',
        lockAcquireSleepInterval: 600,
        lockKeepAlivePeriod: 150,
        startup: 'background',
        ...options,
      });
      open.push(instance);
      return instance;
    };

    const row = async (table: string, cols = 'BROKER_NAME AS holder') =>
      ctx.sql.query<{ holder: unknown }>(statement(`SELECT ${cols} FROM ${table}`));

    for (const [type, tag] of [
      ['lease-database', 'L_'],
      ['database', 'D_'],
    ] as const) {
      it(`${type}: one master on ACTIVEMQ_LOCK's row 1, a standby takes over when it leaves`, async () => {
        const prefix = `${ctx.prefix}${tag}`;
        const table = `${prefix}ACTIVEMQ_LOCK`;
        for (const ddl of activemqDdl(table)) await ctx.sql.execute(statement(ddl));
        const options = {
          locker: { type },
          tablePrefix: prefix,
          lockTableName: 'ACTIVEMQ_LOCK',
          lockName: '1',
        };
        const first = await start({ ...options, startup: 'block' });
        await first.init();
        expect(first.locker.isMaster).toBe(true);
        const second = await start(options);
        await second.init();
        await waitUntil(() => second.locker.role === 'standby' && second.locker.lastError === undefined);
        expect(second.locker.isMaster).toBe(false);
        if (type === 'lease-database') {
          // The lease is in ActiveMQ's row, under ActiveMQ's column names; no other row was added.
          expect((await row(table)).map((r) => r.holder)).toEqual([first.locker.instanceId]);
        } else {
          expect(await row(table)).toHaveLength(1);
        }
        await first.close();
        await waitUntil(() => second.locker.isMaster, 20_000, 'the standby to take over');
        if (type === 'lease-database') {
          expect((await row(table)).map((r) => r.holder)).toEqual([second.locker.instanceId]);
        }
      });
    }

    it("a lockName that is not a number on ACTIVEMQ_LOCK's integer ID stops startup with LockerConfigurationError", async () => {
      const prefix = `${ctx.prefix}N_`;
      for (const ddl of activemqDdl(`${prefix}ACTIVEMQ_LOCK`)) await ctx.sql.execute(statement(ddl));
      const instance = await start({
        locker: { type: 'lease-database' },
        tablePrefix: prefix,
        lockTableName: 'ACTIVEMQ_LOCK',
        startup: 'block',
      });
      const error = await instance.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockerConfigurationError);
      expect((error as Error).message).toContain("'lockName'");
    });

    it('lockColumns: a table of its own with other column names', async () => {
      const prefix = `${ctx.prefix}C_`;
      const table = `${prefix}APP_LOCKS`;
      await ctx.sql.execute(
        statement(
          `CREATE TABLE ${table} (LOCK_KEY VARCHAR(64) NOT NULL, EXPIRES_AT BIGINT, OWNER VARCHAR(250), PRIMARY KEY (LOCK_KEY))`,
        ),
      );
      const options = {
        locker: { type: 'lease-database' as const },
        tablePrefix: prefix,
        lockTableName: 'APP_LOCKS',
        lockColumns: { id: 'LOCK_KEY', time: 'EXPIRES_AT', brokerName: 'OWNER' },
        lockName: 'reports',
      };
      const first = await start({ ...options, startup: 'block' });
      await first.init();
      const second = await start(options);
      await second.init();
      await waitUntil(() => second.locker.role === 'standby' && second.locker.lastError === undefined);
      const rows = await ctx.sql.query<{ id: unknown; holder: unknown }>(
        statement(`SELECT LOCK_KEY AS id, OWNER AS holder FROM ${table}`),
      );
      expect(rows.map((r) => [String(r.id), r.holder])).toEqual([['reports', first.locker.instanceId]]);
      expect(second.locker.isMaster).toBe(false);
    });
  },
  { tables: ['L_ACTIVEMQ_LOCK', 'D_ACTIVEMQ_LOCK', 'N_ACTIVEMQ_LOCK', 'C_APP_LOCKS'] },
);
