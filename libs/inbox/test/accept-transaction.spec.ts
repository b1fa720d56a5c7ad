import { Module } from '@nestjs/common';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { createTestDataSource, describeEachDatabase, waitUntil } from '@holdfast/testing';
import { DataSource, type EntityManager } from 'typeorm';
import { InboxTransactionError } from '../src';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';

const type = { namespace: 'test', name: 'order-placed' };
/**
 * No handler takes this type: its messages stay in the table (a delivery records them for a later
 * attempt), so a test can look them up after the wake-up that follows its commit.
 */
const stays = { namespace: 'test', name: 'no-handler' };
const DATA_SOURCE = Symbol('test DataSource');

describeEachDatabase(
  'MessageAcceptor in the caller’s transaction',
  (ctx) => {
    let node: InboxTestApp;
    let orders: string;
    let n = 0;
    const nextId = () => `tx-${ctx.db}-${++n}-${Date.now()}`;
    const p = (i: number) => (ctx.db === 'postgres' ? `$${i}` : '?');

    const insertOrder = (manager: EntityManager, id: string) =>
      manager.query(`INSERT INTO ${orders} (ID) VALUES (${p(1)})`, [id]);
    const orderExists = async (id: string) =>
      (await ctx.dataSource.query(`SELECT ID FROM ${orders} WHERE ID = ${p(1)}`, [id])).length === 1;
    const messageExists = async (id: string) => (await node.management.get(id)) !== undefined;

    beforeAll(async () => {
      orders = `${ctx.prefix}ORDERS`;
      await ctx.dataSource.query(`CREATE TABLE ${orders} (ID VARCHAR(64) PRIMARY KEY)`);
      @Module({ providers: [{ provide: DATA_SOURCE, useValue: ctx.dataSource }], exports: [DATA_SOURCE] })
      class DataSourceModule {}
      node = await createInboxApp(
        ctx,
        { wakeOnAccept: true },
        {
          imports: [
            ClsModule.forRoot({
              global: true,
              plugins: [
                new ClsPluginTransactional({
                  imports: [DataSourceModule],
                  adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: DATA_SOURCE }),
                }),
              ],
            }),
          ],
        },
      );
    });
    afterAll(async () => {
      await node?.close();
      await ctx.dataSource.query(`DROP TABLE IF EXISTS ${orders}`).catch(() => undefined);
    });
    afterEach(() => {
      jest.restoreAllMocks();
      node.probe.calls.length = 0;
    });

    it('commit: the message and the business row exist together, and the message is delivered', async () => {
      const id = nextId();
      const result = await ctx.dataSource.transaction(async (manager) => {
        await insertOrder(manager, id);
        return node.acceptor.accept({ id, type, payload: { order: id } }, { manager });
      });
      expect(result).toEqual({ id, accepted: true });
      expect(await orderExists(id)).toBe(true);
      await waitUntil(() => node.probe.calls.some((m) => m.id === id), {
        message: 'delivered after the commit',
      });
    });

    it('rollback: neither the business row nor the message exists, and nothing is woken', async () => {
      const id = nextId();
      const wake = jest.spyOn(node.delivery, 'wake');
      await expect(
        ctx.dataSource.transaction(async (manager) => {
          await insertOrder(manager, id);
          await node.acceptor.acceptAll(
            [
              { id, type: stays, payload: { order: id } },
              { id: `${id}-b`, type: stays, payload: { order: id } },
            ],
            { manager },
          );
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      expect(await orderExists(id)).toBe(false);
      expect(await messageExists(id)).toBe(false);
      expect(await messageExists(`${id}-b`)).toBe(false);
      expect(wake).not.toHaveBeenCalled();
    });

    it('a message in a transaction still open is not delivered; the wake-up goes out after the commit', async () => {
      const id = nextId();
      const wake = jest.spyOn(node.delivery, 'wake');
      const runner = ctx.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      let delivering: Promise<unknown> | undefined;
      try {
        await node.acceptor.accept({ id, type, payload: {} }, { queryRunner: runner });
        // A delivery round while the transaction is open: on PostgreSQL and MariaDB it does not
        // see the row; on SQLite (one shared connection) it waits until the transaction ends.
        delivering = node.delivery.deliverDue();
        await new Promise((r) => setTimeout(r, 300));
        expect(node.probe.calls.map((m) => m.id)).not.toContain(id);
        expect(wake).not.toHaveBeenCalled();
        await runner.commitTransaction();
      } finally {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
      expect(wake).toHaveBeenCalled();
      await delivering;
      await waitUntil(() => node.probe.calls.some((m) => m.id === id), {
        message: 'delivered after the commit',
      });
    });

    it('a savepoint rolled back takes its message along; the outer transaction commits the rest', async () => {
      const kept = nextId();
      const undone = nextId();
      await ctx.dataSource.transaction(async (manager) => {
        await node.acceptor.accept({ id: kept, type: stays, payload: {} }, { manager });
        await manager
          .transaction(async (inner) => {
            await node.acceptor.accept({ id: undone, type: stays, payload: {} }, { manager: inner });
            throw new Error('inner step failed');
          })
          .catch((error: Error) => {
            if (error.message !== 'inner step failed') throw error;
          });
      });
      expect(await messageExists(kept)).toBe(true);
      expect(await messageExists(undone)).toBe(false);
    });

    it('an id that exists already is accepted: false and the transaction goes on', async () => {
      const id = nextId();
      await node.acceptor.accept({ id, type: stays, payload: { first: true } });
      const order = nextId();
      const [again] = await ctx.dataSource.transaction(async (manager) => {
        const results = await node.acceptor.acceptAll([{ id, type: stays, payload: { second: true } }], {
          manager,
        });
        await insertOrder(manager, order); // the transaction is still usable
        return results;
      });
      expect(again).toEqual({ id, accepted: false });
      expect(await orderExists(order)).toBe(true);
    });

    if (ctx.db !== 'sqlite') {
      // Two writers at once: SQLite has one writer at a time, so this race cannot happen there.
      it('an id another transaction commits meanwhile is accepted: false and the transaction goes on', async () => {
        const id = nextId();
        const other = ctx.dataSource.createQueryRunner();
        await other.connect();
        await other.startTransaction();
        await node.acceptor.accept({ id, type: stays, payload: { other: true } }, { queryRunner: other });
        const order = nextId();
        const ours = ctx.dataSource.transaction(async (manager) => {
          const result = await node.acceptor.accept(
            { id, type: stays, payload: { ours: true } },
            { manager },
          );
          await insertOrder(manager, order);
          return result;
        });
        await new Promise((r) => setTimeout(r, 300)); // ours now waits on the other's row
        await other.commitTransaction();
        await other.release();
        expect(await ours).toEqual({ id, accepted: false });
        expect(await orderExists(order)).toBe(true);
      });
    }

    it('a lock wait that times out fails the accept; the rolled-back transaction leaves no message', async () => {
      const id = nextId();
      const order = nextId();
      // Another writer holds what the accept needs: the same id uncommitted (PostgreSQL, MariaDB),
      // the database file's write lock (SQLite).
      let blocker: { release(): Promise<void> };
      let restore = async () => {};
      if (ctx.db === 'sqlite') {
        const file = (ctx.dataSource.options as { database: string }).database;
        const other = await createTestDataSource('sqlite', { sqliteFile: file });
        await other.query('BEGIN IMMEDIATE');
        blocker = {
          release: async () => {
            await other.query('ROLLBACK');
            await other.destroy();
          },
        };
        await ctx.dataSource.query('PRAGMA busy_timeout = 300');
        restore = async () => void (await ctx.dataSource.query('PRAGMA busy_timeout = 10000'));
      } else {
        const other = ctx.dataSource.createQueryRunner();
        await other.connect();
        await other.startTransaction();
        await node.acceptor.accept({ id, type: stays, payload: { other: true } }, { queryRunner: other });
        blocker = {
          release: async () => {
            await other.rollbackTransaction();
            await other.release();
          },
        };
      }
      try {
        await expect(
          ctx.dataSource.transaction(async (manager) => {
            await insertOrder(manager, order);
            if (ctx.db === 'postgres') await manager.query(`SET LOCAL lock_timeout = '300ms'`);
            if (ctx.db === 'mariadb') await manager.query('SET SESSION innodb_lock_wait_timeout = 1');
            try {
              await node.acceptor.accept({ id, type: stays, payload: { ours: true } }, { manager });
            } finally {
              if (ctx.db === 'mariadb') await manager.query('SET SESSION innodb_lock_wait_timeout = DEFAULT');
            }
          }),
        ).rejects.toThrow(/lock|busy/i);
      } finally {
        await blocker.release();
        await restore();
      }
      expect(await orderExists(order)).toBe(false);
      expect(await messageExists(id)).toBe(false);
      // The inbox goes on as usual afterwards (on SQLite: the gate held for the transaction is free).
      const after = nextId();
      expect(await node.acceptor.accept({ id: after, type: stays, payload: {} })).toEqual({
        id: after,
        accepted: true,
      });
    });

    describe('@nestjs-cls/transactional (TypeORM adapter)', () => {
      it('an accept inside @Transactional / withTransaction joins its transaction: commit', async () => {
        const host = node.app.get(TransactionHost);
        const id = nextId();
        await host.withTransaction(async () => {
          await insertOrder(host.tx as EntityManager, id);
          await node.acceptor.accept({ id, type: stays, payload: {} });
        });
        expect(await orderExists(id)).toBe(true);
        expect(await messageExists(id)).toBe(true);
      });

      it('…and rollback: no message', async () => {
        const host = node.app.get(TransactionHost);
        const id = nextId();
        await expect(
          host.withTransaction(async () => {
            await insertOrder(host.tx as EntityManager, id);
            await node.acceptor.accept({ id, type: stays, payload: {} });
            throw new Error('business rule failed');
          }),
        ).rejects.toThrow('business rule failed');
        expect(await orderExists(id)).toBe(false);
        expect(await messageExists(id)).toBe(false);
      });

      it('outside a transaction the accept commits on its own', async () => {
        const id = nextId();
        expect(await node.acceptor.accept({ id, type: stays, payload: {} })).toEqual({ id, accepted: true });
        expect(await messageExists(id)).toBe(true);
      });
    });

    describe('bad transactions give InboxTransactionError, nothing stored', () => {
      let foreign: DataSource;
      beforeAll(async () => {
        foreign = await createTestDataSource(ctx.db);
      });
      afterAll(async () => {
        await foreign?.destroy();
      });

      it('a manager of another DataSource', async () => {
        const id = nextId();
        const error = await foreign
          .transaction((manager) => node.acceptor.accept({ id, type: stays, payload: {} }, { manager }))
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InboxTransactionError);
        expect((error as InboxTransactionError).code).toBe('HOLDFAST_INBOX_TRANSACTION');
        expect((error as Error).message).toMatch(/another DataSource/);
        expect(await messageExists(id)).toBe(false);
      });

      it('a QueryRunner of another DataSource', async () => {
        const runner = foreign.createQueryRunner();
        await runner.connect();
        await runner.startTransaction();
        try {
          await expect(
            node.acceptor.acceptAll([{ type: stays, payload: {} }], { queryRunner: runner }),
          ).rejects.toThrow(InboxTransactionError);
        } finally {
          await runner.rollbackTransaction();
          await runner.release();
        }
      });

      it('both manager and queryRunner, a released QueryRunner, options that are not an object', async () => {
        const runner = ctx.dataSource.createQueryRunner();
        await expect(
          node.acceptor.accept(
            { type: stays, payload: {} },
            { manager: ctx.dataSource.manager, queryRunner: runner },
          ),
        ).rejects.toThrow(/not both/);
        await runner.release();
        if (ctx.db !== 'sqlite') {
          // (SQLite's TypeORM runner is shared and never really released.)
          await expect(
            node.acceptor.accept({ type: stays, payload: {} }, { queryRunner: runner }),
          ).rejects.toThrow(/released/);
        }
        await expect(
          node.acceptor.accept(
            { type: stays, payload: {} },
            'manager' as unknown as { manager: EntityManager },
          ),
        ).rejects.toThrow(InboxTransactionError);
        await expect(
          node.acceptor.accept({ type: stays, payload: {} }, { manager: {} as EntityManager }),
        ).rejects.toThrow(/not a TypeORM EntityManager/);
      });
    });
  },
  { tables: ['COR_MESSAGE', 'HOLDFAST_SIMBA_MUTEX'] },
);
