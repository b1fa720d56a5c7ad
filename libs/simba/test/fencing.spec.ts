/**
 * Fencing end to end on a user's own table through TypeORM: a row accepts a write only from a
 * token not older than the one that last wrote it, so a stale owner's late write is refused by
 * the database.
 */
import type { INestApplicationContext } from '@nestjs/common';
import {
  describeEachDatabase,
  testDataSourceOptions,
  testDatabases,
  uniqueTablePrefix,
  waitUntil,
} from '@holdfast/testing';
import {
  FenceColumn,
  FenceColumnNotFoundError,
  InvalidFencingTokenError,
  SimbaLocker,
  StaleFencingTokenError,
  fenced,
} from '@holdfast/simba';
import {
  Column,
  DataSource,
  Entity,
  EventSubscriber,
  PrimaryColumn,
  type EntitySubscriberInterface,
  type Repository,
} from 'typeorm';
import { createSimbaApp, freshMutex } from './simba-test.support';

function accountEntity(table: string) {
  @Entity({ name: table })
  class Account {
    @PrimaryColumn({ type: 'varchar', length: 32 })
    id!: string;

    @Column({ type: 'int' })
    balance!: number;

    @Column({ type: 'varchar', length: 32 })
    region!: string;

    @FenceColumn()
    fence?: number | null;
  }
  return Account;
}

function unfencedEntity(table: string) {
  @Entity({ name: table })
  class Note {
    @PrimaryColumn({ type: 'varchar', length: 32 })
    id!: string;
  }
  return Note;
}

type AccountRow = { id: string; balance: number; region: string; fence?: number | null };

for (const db of testDatabases()) {
  describe(`fenced(repo) [${db}]`, () => {
    const prefix = uniqueTablePrefix(`fence_${db}`);
    const Account = accountEntity(`${prefix}account`);
    const Note = unfencedEntity(`${prefix}note`);
    let dataSource: DataSource;
    let accounts: Repository<AccountRow>;

    beforeAll(async () => {
      dataSource = await new DataSource({
        ...testDataSourceOptions(db),
        entities: [Account, Note],
      } as never).initialize();
      await dataSource.synchronize();
      accounts = dataSource.getRepository<AccountRow>(Account);
    });
    afterAll(async () => {
      await dataSource.query(`DROP TABLE ${dataSource.driver.escape(`${prefix}account`)}`);
      await dataSource.query(`DROP TABLE ${dataSource.driver.escape(`${prefix}note`)}`);
      await dataSource.destroy();
    });
    beforeEach(async () => {
      await accounts.clear();
      await accounts.insert([
        { id: 'a', balance: 100, region: 'eu' },
        { id: 'b', balance: 100, region: 'eu' },
      ]);
    });

    if (db !== 'sqlite') {
      it("a writer frozen inside its fenced write does not hold a newer owner's write past idleInTransactionTimeout", async () => {
        // The old owner's write stops between its UPDATE (the row is locked) and its COMMIT, as
        // a process paused or cut off there would: a subscriber holds it after the UPDATE.
        let frozen = false;
        let thaw!: () => void;
        const thawed = new Promise<void>((resolve) => (thaw = resolve));
        @EventSubscriber()
        class Freezer implements EntitySubscriberInterface {
          async afterUpdate(): Promise<void> {
            frozen = true;
            await thawed;
          }
        }
        const frozenSide = await new DataSource({
          ...testDataSourceOptions(db),
          entities: [Account, Note],
          subscribers: [Freezer],
        } as never).initialize();
        try {
          const oldOwner = fenced(frozenSide.getRepository<AccountRow>(Account), {
            idleInTransactionTimeout: '1s',
          }).update({ id: 'a' }, { balance: 1 }, 100);
          const settled = oldOwner.then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          await waitUntil(() => frozen, { timeout: 10_000, message: 'the old owner to hold the row' });
          // The newer owner's write waits for the row until the server ends the silent transaction.
          const newer = fenced(accounts).update({ id: 'a' }, { balance: 2 }, 200);
          const outcome = await Promise.race([
            newer,
            new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 30_000)),
          ]);
          expect(outcome).toEqual({ written: 1, refused: 0, accepted: true });
          thaw();
          // The old owner's transaction was ended by the server: its write did not happen.
          expect(await settled).toHaveProperty('error');
          expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 2, fence: 200 });
        } finally {
          thaw();
          await frozenSide.destroy().catch(() => undefined);
        }
      }, 60_000);

      it('idleInTransactionTimeout must be a duration', () => {
        expect(() => fenced(accounts, { idleInTransactionTimeout: 'soon' as never })).toThrow(
          /idleInTransactionTimeout/,
        );
      });
    }

    it("accepts the owner's writes, repeated under one token, and stores the token as the fence", async () => {
      const result = await fenced(accounts).update({ id: 'a' }, { balance: 90 }, 7);
      expect(result).toEqual({ written: 1, refused: 0, accepted: true });
      expect(await fenced(accounts).update({ id: 'a' }, { balance: 80 }, 7)).toMatchObject({
        written: 1,
        accepted: true,
      });
      expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 80, fence: 7 });
    });

    it("refuses a stale owner's write after a newer token wrote, and leaves the row as the newer owner left it", async () => {
      const oldOwner = 41;
      const newOwner = 42;
      await fenced(accounts).update({ id: 'a' }, { balance: 90 }, oldOwner);
      // The old owner is paused past its lease; a newer owner is elected and writes.
      await fenced(accounts).update({ id: 'a' }, { balance: 50 }, newOwner);
      // The old owner wakes up and writes what it computed before the pause.
      const late = await fenced(accounts).update({ id: 'a' }, { balance: 85 }, oldOwner);
      expect(late).toEqual({ written: 0, refused: 1, accepted: false });
      expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 50, fence: newOwner });

      const error = await fenced(accounts)
        .updateOrThrow({ id: 'a' }, { balance: 85 }, oldOwner)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StaleFencingTokenError);
      expect((error as StaleFencingTokenError).message).toMatch(
        /refused: fencing token 41 is older than the fence stored on 1 row/,
      );
      expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 50, fence: newOwner });
    });

    it('a write over several rows: refused rows are counted, and updateOrThrow writes none of them', async () => {
      await fenced(accounts).update({ id: 'b' }, { balance: 70 }, 10);
      const partial = await fenced(accounts).update({ region: 'eu' }, { balance: 60 }, 9);
      expect(partial).toEqual({ written: 1, refused: 1, accepted: false });
      expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 60, fence: 9 });
      expect(await accounts.findOneByOrFail({ id: 'b' })).toMatchObject({ balance: 70, fence: 10 });

      await expect(
        fenced(accounts).updateOrThrow({ region: 'eu' }, { balance: 1 }, 9),
      ).rejects.toBeInstanceOf(StaleFencingTokenError);
      // All or nothing: row a (fence 9) accepted inside the transaction, which was rolled back.
      expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 60, fence: 9 });
      expect(await fenced(accounts).updateOrThrow({ region: 'eu' }, { balance: 2 }, 11)).toBe(2);
    });

    it('racing writers: whatever the order, the newest token wins and the older one is refused', async () => {
      for (let round = 0; round < 10; round++) {
        const base = 100 + round * 2;
        await fenced(accounts).update({ id: 'a' }, { balance: 0 }, base);
        const [older, newer] = await Promise.all([
          fenced(accounts).update({ id: 'a' }, { balance: 1 }, base + 1),
          fenced(accounts).update({ id: 'a' }, { balance: 2 }, base + 2),
        ]);
        expect(newer.accepted).toBe(true);
        // The older one either went first (accepted, then overwritten) or came late (refused).
        expect(older.written + older.refused).toBe(1);
        expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 2, fence: base + 2 });
      }
    });

    it('insert stamps the fence', async () => {
      await fenced(accounts).insert({ id: 'c', balance: 5, region: 'us' }, 3);
      expect(await accounts.findOneByOrFail({ id: 'c' })).toMatchObject({ fence: 3 });
      expect(await fenced(accounts).update({ id: 'c' }, { balance: 6 }, 2)).toMatchObject({ refused: 1 });
    });

    it('bad input: a token that is not a safe non-negative integer, a table without a fence column', async () => {
      for (const token of [-1, 1.5, Number.MAX_SAFE_INTEGER + 2, '7', undefined]) {
        await expect(
          fenced(accounts).update({ id: 'a' }, { balance: 1 }, token as number),
        ).rejects.toBeInstanceOf(InvalidFencingTokenError);
      }
      expect(await accounts.findOneByOrFail({ id: 'a' })).toMatchObject({ balance: 100, fence: null });
      expect(() => fenced(dataSource.getRepository(Note))).toThrow(FenceColumnNotFoundError);
      expect(() => fenced(dataSource.getRepository(Note))).toThrow(/has no column 'fence'/);
    });
  });
}

describeEachDatabase(
  'fenced(repo) with SimbaLocker tokens',
  (ctx) => {
    let app: INestApplicationContext;
    let ledger: DataSource;
    let accounts: Repository<AccountRow>;
    const table = `${uniqueTablePrefix(`fence_${ctx.db}`)}ledger`;

    beforeAll(async () => {
      app = await createSimbaApp(ctx, { ttl: '1s', transition: '2s', standbyPoll: '100ms' });
      // The application's own table, on its own DataSource: fencing needs nothing from simba's.
      ledger = await new DataSource({
        ...testDataSourceOptions(ctx.db),
        entities: [accountEntity(table)],
      } as never).initialize();
      await ledger.synchronize();
      accounts = ledger.getRepository<AccountRow>(table);
      await accounts.insert({ id: 'x', balance: 0, region: 'eu' });
    });
    afterAll(async () => {
      await app?.close();
      await ledger.query(`DROP TABLE ${ledger.driver.escape(table)}`);
      await ledger.destroy();
    });

    it("an owner that lost the mutex cannot overwrite the next owner's write", async () => {
      const mutex = freshMutex('fence');
      const simba = app.get(SimbaLocker);
      const first = simba.locker(mutex);
      const firstToken = await first.acquire();
      expect(await fenced(accounts).update({ id: 'x' }, { balance: 1 }, firstToken)).toMatchObject({
        accepted: true,
      });
      // The first owner loses the mutex (released here; a pause past its ttl ends the same way).
      await first.release();
      const second = simba.locker(mutex);
      const secondToken = await second.acquire();
      expect(await fenced(accounts).update({ id: 'x' }, { balance: 2 }, secondToken)).toMatchObject({
        accepted: true,
      });
      // The first owner's late write, with the token it held then.
      await expect(
        fenced(accounts).updateOrThrow({ id: 'x' }, { balance: 99 }, firstToken),
      ).rejects.toBeInstanceOf(StaleFencingTokenError);
      expect(await accounts.findOneByOrFail({ id: 'x' })).toMatchObject({ balance: 2, fence: secondToken });
      await second.release();
    });
  },
  { tables: ['simba_mutex'] },
);
