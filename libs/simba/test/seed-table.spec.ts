import type { INestApplicationContext } from '@nestjs/common';
import { describeEachDatabase } from '@holdfast/testing';
import { Test } from '@nestjs/testing';
import { SchemaMismatchError, statement } from '@holdfast/core/kit';
import {
  AbstractMutexContender,
  SimbaModule,
  ContenderIdTooLongError,
  defaultContenderId,
  InvalidContenderIdError,
  MutexContendServiceFactory,
  SimbaLocker,
  simbaTable,
} from '../src';
import {
  createSeedTable,
  seedSimbaDdl,
  createSimbaApp,
  freshMutex,
  RecordingContender,
  waitUntil,
} from './simba-test.support';

describe('contender ids', () => {
  it('the generated default fits Simba’s CHAR(32) owner_id and is unique per call', () => {
    const ids = Array.from({ length: 200 }, () => defaultContenderId());
    expect(Math.max(...ids.map((id) => id.length))).toBeLessThanOrEqual(32);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toContain(`:${process.pid}@`);
  });

  it('refuses a trailing space (it cannot be told apart from CHAR padding)', () => {
    class C extends AbstractMutexContender {}
    expect(() => new C('m', 'me ')).toThrow(InvalidContenderIdError);
  });
});

describeEachDatabase(
  'simba on a table made by Simba’s DDL',
  (ctx) => {
    let app: INestApplicationContext;

    beforeAll(async () => {
      await createSeedTable(ctx.db, ctx.dataSource, ctx.prefix);
      app = await createSimbaApp(ctx, { ttl: '2s', transition: '2s', standbyPoll: '200ms', schema: 'check' });
    });
    afterAll(async () => {
      await app?.close();
    });

    it('refuses a contender id longer than the live owner_id column, naming it and both lengths', () => {
      const id = 'contender-with-a-long-id-0123456789'; // 35 characters
      const mutex = freshMutex('long');
      let error: unknown;
      try {
        app.get(MutexContendServiceFactory).createMutexContendService(new RecordingContender(mutex, id));
      } catch (e) {
        error = e;
      }
      if (ctx.db === 'sqlite') {
        // SQLite enforces no length on CHAR(32) (core's schema check reports none): the id is stored whole.
        expect(error).toBeUndefined();
        return;
      }
      expect(error).toBeInstanceOf(ContenderIdTooLongError);
      expect((error as Error).message).toBe(
        `Contender id '${id}' (mutex '${mutex}') is 35 characters long, but ${ctx.prefix}simba_mutex.owner_id ` +
          `holds at most 32: use a contender id of at most 32 characters (the generated default has 32), or widen the column.`,
      );
    });

    it('creates rows with every column, free, and a row made by Simba’s own insert is acquired', async () => {
      const d = ctx.sql.dialect;
      const javaRow = freshMutex('java');
      // simba-jdbc's initMutex: insert (mutex, 0, 0, 0, '', 0).
      await ctx.sql.execute(
        statement(
          `INSERT INTO ${ctx.prefix}simba_mutex (mutex, acquired_at, ttl_at, transition_at, owner_id, version) VALUES (${d.placeholder(1)}, 0, 0, 0, '', 0)`,
          [javaRow],
        ),
      );
      const locker = app.get(SimbaLocker);
      const token = await locker.withLock(javaRow, (_signal, t) => t, { timeout: '5s' });
      expect(token).toBeGreaterThan(0);
      const fresh = new RecordingContender(freshMutex('fresh'));
      const service = app.get(MutexContendServiceFactory).createMutexContendService(fresh);
      service.start();
      await waitUntil(() => service.isOwner, 5_000, 'acquires a mutex whose row it created');
      await service.stop();
      const rows = await ctx.sql.query<Record<string, unknown>>(
        statement(
          `SELECT owner_id AS owner_id, version AS version FROM ${ctx.prefix}simba_mutex WHERE mutex IN (${d.placeholder(1)}, ${d.placeholder(2)})`,
          [javaRow, fresh.mutex],
        ),
      );
      expect(rows.map((r) => String(r.owner_id).trimEnd())).toEqual(['', '']);
      // version is Simba's optimistic lock: one step per acquire and per release.
      expect(rows.every((r) => Number(r.version) >= 2)).toBe(true);
    });

    const startOn = async (ddl: string) => {
      const prefix = `${ctx.prefix}bad${Math.random().toString(36).slice(2, 6)}_`;
      await ctx.dataSource.query(ddl.replace('%t', `${prefix}simba_mutex`));
      try {
        const moduleRef = await Test.createTestingModule({
          imports: [SimbaModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: prefix })],
        }).compile();
        await moduleRef.init();
        await moduleRef.close();
        return { prefix, error: undefined };
      } catch (error) {
        return { prefix, error: error as Error };
      } finally {
        await ctx.dataSource.query(`DROP TABLE IF EXISTS ${prefix}simba_mutex`);
      }
    };
    const seedWith = (change: (ddl: string) => string) => change(seedSimbaDdl(ctx.db, '%t'));

    it('refuses at startup a table without a column, naming table, column and accepted types', async () => {
      const { prefix, error } = await startOn(
        seedWith((d) => d.replace(/, version INT( UNSIGNED)? NOT NULL/, '')),
      );
      expect(error).toBeInstanceOf(SchemaMismatchError);
      const int = { postgres: 'INTEGER', mariadb: 'INT', sqlite: 'INTEGER (INTEGER affinity)' }[ctx.db];
      expect(error!.message).toContain(
        `Table ${prefix}simba_mutex has no column version (accepted types: ${int}). `,
      );
    });

    it('refuses at startup a column of the wrong type', async () => {
      const { prefix, error } = await startOn(
        seedWith((d) =>
          d.replace(/acquired_at BIGINT( UNSIGNED)? NOT NULL/, 'acquired_at VARCHAR(20) NOT NULL'),
        ),
      );
      expect(error).toBeInstanceOf(SchemaMismatchError);
      expect(error!.message).toContain(`Table ${prefix}simba_mutex, column acquired_at: found type `);
    });

    if (ctx.db !== 'sqlite') {
      it('refuses at startup an owner_id shorter than 32 characters', async () => {
        const { prefix, error } = await startOn(seedWith((d) => d.replace('CHAR(32)', 'CHAR(16)')));
        expect(error).toBeInstanceOf(SchemaMismatchError);
        const found = ctx.db === 'postgres' ? 'character(16)' : 'char(16)';
        const accepted =
          ctx.db === 'postgres'
            ? 'VARCHAR(32) or longer, CHAR(32) or longer'
            : 'VARCHAR(32) or longer, CHAR(32) or longer';
        expect(error!.message).toContain(
          `Table ${prefix}simba_mutex, column owner_id: found type ${found}, accepted: ${accepted}. `,
        );
      });
    }
  },
  { tables: [simbaTable()], tag: 'seedddl' },
);
