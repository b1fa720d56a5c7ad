/**
 * The dashboard's locker section on a lock table of its own name and columns (LockerModule's
 * `lockTableName` and `lockColumns`): the lock rows are read where the locker keeps them.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { describeEachDatabase, waitUntil } from '@holdfast/testing';
import { LockerModule } from '@holdfast/locker';
import { HoldfastDashboardModule } from '../src';

describeEachDatabase(
  'HoldfastDashboardModule: the locker section on a custom lock table',
  (ctx) => {
    let app: INestApplication;
    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          LockerModule.forRoot({
            dataSource: ctx.dataSource,
            tablePrefix: ctx.prefix,
            schema: 'create',
            lockTableName: 'APP_LOCKS',
            lockColumns: { id: 'LOCK_KEY', time: 'EXPIRES_AT', brokerName: 'OWNER' },
            locker: { type: 'lease-database' },
            lockName: 'dash-custom',
            lockAcquireSleepInterval: '3s',
            lockKeepAlivePeriod: '1s',
            startup: 'background',
          }),
          HoldfastDashboardModule.forRoot({ pollInterval: '1s' }),
        ],
      }).compile();
      app = await moduleRef.createNestApplication({ logger: false }).init();
    });
    afterAll(() => app?.close());

    it('lists the lock rows of the table lockTableName names, under its columns', async () => {
      const state = await waitUntil(
        async () => {
          const res = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
          // One state reads the rows before the role: wait for a state that saw the lease taken in both.
          const locker = res.body.locker;
          return locker?.role === 'master' &&
            locker.locks?.some((l: { master: unknown }) => l.master !== null)
            ? res.body
            : undefined;
        },
        { timeout: 30_000, message: 'the locker to be master' },
      );
      expect(state.locker.locks).toEqual([
        expect.objectContaining({ lock: 'dash-custom', master: state.locker.instanceId, masterHere: true }),
      ]);
    });
  },
  { tables: ['APP_LOCKS'], tag: 'dlt' },
);
