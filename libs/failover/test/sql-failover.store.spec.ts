import { Type } from 'class-transformer';
import { statement, toNumber } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import {
  FailoverStoreException,
  FailoverStoreQueryResolver,
  MalformedPayloadError,
  PayloadClassNotAllowedError,
  type FailoverEntry,
  type FailoverRowValues,
} from '@holdfast/failover';
import Database from 'better-sqlite3';
import {
  FailoverTypeRegistry,
  NOT_NOW,
  PayloadCodec,
  SqlFailoverStore,
  failoverKey,
} from '@holdfast/failover/internal';

class Address {
  street!: string;
  since!: Date;
  label() {
    return `${this.street} (${this.since.getUTCFullYear()})`;
  }
}

class Customer {
  name!: string;
  @Type(() => Address) address!: Address;
  tags!: string[];
  createdAt!: Date;
}

const hour = 3_600_000;

function entry<T>(name: string, key: string, payload: T, asOf = new Date(), ttl = hour): FailoverEntry<T> {
  return { name, key, asOf, expireOn: new Date(asOf.getTime() + ttl), payload };
}

describeEachDatabase(
  'SqlFailoverStore',
  (ctx) => {
    let store: SqlFailoverStore;
    let registry: FailoverTypeRegistry;

    const rows = async (where = '1 = 1') => {
      const [r] = await ctx.sql.query<{ n: unknown }>(
        statement(`SELECT COUNT(*) AS n FROM ${store.tableName} WHERE ${where}`),
      );
      return toNumber(r.n);
    };
    const newStore = (
      overrides: NonNullable<ConstructorParameters<typeof SqlFailoverStore>[0]['rows']> = {},
    ) =>
      new SqlFailoverStore({
        sql: ctx.sql,
        tablePrefix: ctx.prefix,
        schema: 'create',
        rows: { codec: new PayloadCodec(registry), ...overrides },
      });

    beforeAll(async () => {
      registry = new FailoverTypeRegistry();
      registry.register(Customer);
      store = await newStore().init();
    });

    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${store.tableName}`));
    });

    it('answers an empty store: find nothing, delete and clean nothing', async () => {
      expect(await store.find('n', 'k')).toBeUndefined();
      await expect(store.delete('n', 'k')).resolves.toBeUndefined();
      expect(await store.cleanByExpiry(new Date(Date.now() + 10 * hour))).toBe(0);
    });

    it('stores, finds and deletes; a name-only or key-only match finds nothing', async () => {
      await store.store(entry('countries', 'k1', { code: 'FR' }));
      expect((await store.find('countries', 'k1'))?.payload).toEqual({ code: 'FR' });
      expect(await store.find('countries', 'k2')).toBeUndefined();
      expect(await store.find('rates', 'k1')).toBeUndefined();
      await store.delete('countries', 'k1');
      expect(await store.find('countries', 'k1')).toBeUndefined();
    });

    it('round-trips AS_OF and EXPIRE_ON exactly, to the millisecond', async () => {
      const asOf = new Date('2026-05-06T07:08:09.123Z');
      const expireOn = new Date('2027-01-02T03:04:05.999Z');
      await store.store({ name: 'n', key: 'k', asOf, expireOn, payload: 1 });
      const found = await store.find('n', 'k');
      expect(found?.asOf.toISOString()).toBe(asOf.toISOString());
      expect(found?.expireOn.toISOString()).toBe(expireOn.toISOString());
    });

    it('keeps one row per key however often it is stored, holding the latest value', async () => {
      for (let i = 0; i < 7; i++) await store.store(entry('n', 'same', { i }));
      expect(await rows()).toBe(1);
      expect((await store.find('n', 'same'))?.payload).toEqual({ i: 6 });
    });

    it('round-trips quotes, markup, accents and emoji', async () => {
      const text = `O'Brien & "Müller" <admin@example.com> éàü 🚀`;
      await store.store(entry('n', text.slice(0, 40), { text }));
      expect((await store.find<{ text: string }>('n', text.slice(0, 40)))?.payload.text).toBe(text);
    });

    it('rebuilds declared classes with nested objects and Dates', async () => {
      const customer = Object.assign(new Customer(), {
        name: 'Ada',
        address: Object.assign(new Address(), {
          street: 'Rue X',
          since: new Date('2020-02-03T04:05:06.007Z'),
        }),
        tags: ['a', 'b'],
        createdAt: new Date('2021-01-01T00:00:00.001Z'),
      });
      await store.store(entry('customers', 'ada', customer), Customer);
      const found = (await store.find<Customer>('customers', 'ada', Customer))!.payload;
      expect(found).toBeInstanceOf(Customer);
      expect(found.address).toBeInstanceOf(Address);
      expect(found.address.label()).toBe('Rue X (2020)');
      expect(found.createdAt).toBeInstanceOf(Date);
      expect(found.createdAt.toISOString()).toBe('2021-01-01T00:00:00.001Z');
      const list = [customer, customer];
      await store.store(entry('customers', 'list', list), [Customer]);
      const foundList = (await store.find<Customer[]>('customers', 'list', [Customer]))!.payload;
      expect(foundList).toHaveLength(2);
      expect(foundList[1]).toBeInstanceOf(Customer);
    });

    it('expires strictly: EXPIRE_ON equal to the cutoff is kept, 1 ms before is removed', async () => {
      const cutoff = new Date('2026-06-01T12:00:00.500Z');
      await store.store({ name: 'n', key: 'equal', asOf: new Date(0), expireOn: cutoff, payload: 1 });
      await store.store({
        name: 'n',
        key: 'before',
        asOf: new Date(0),
        expireOn: new Date(cutoff.getTime() - 1),
        payload: 1,
      });
      expect(await store.cleanByExpiry(cutoff)).toBe(1);
      expect(await store.find('n', 'equal')).toBeDefined();
      expect(await store.find('n', 'before')).toBeUndefined();
    });

    it('10 concurrent writers on one key leave one row and no error', async () => {
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.store(entry('n', 'hot', { writer: i }))));
      expect(await rows()).toBe(1);
    });

    it('12 writers × 200 upserts over 50 keys, interleaved with 4 × 100 cleanups, end with exactly 600 rows', async () => {
      const writers = Array.from({ length: 12 }, async (_, w) => {
        for (let i = 0; i < 200; i++)
          await store.store(entry(`writer-${w}`, failoverKey(`writer-${w}`, String(i % 50)), { w, i }));
      });
      const cleaners = Array.from({ length: 4 }, async () => {
        for (let i = 0; i < 100; i++) await store.cleanByExpiry(new Date());
      });
      const results = await Promise.allSettled([...writers, ...cleaners]);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(await rows()).toBe(600);
    });

    it('fallback mode (as for an unknown dialect): INSERT, then UPDATE on a duplicate', async () => {
      const fallback = await newStore({ nativeUpsert: false }).init();
      expect(fallback.usesNativeUpsert).toBe(false);
      await fallback.store(entry('n', 'k', { v: 1 }));
      await fallback.store(entry('n', 'k', { v: 2 }));
      await Promise.all(Array.from({ length: 6 }, (_, i) => fallback.store(entry('n', 'k', { v: 10 + i }))));
      expect(await rows()).toBe(1);
      expect(((await fallback.find<{ v: number }>('n', 'k'))?.payload.v ?? 0) >= 10).toBe(true);
    });

    it('fallback: when the UPDATE finds the row gone, it INSERTs once more', async () => {
      class VanishingRowStore extends SqlFailoverStore {
        updates = 0;
        inserts = 0;
        protected override async tryInsert(row: FailoverRowValues) {
          this.inserts++;
          return super.tryInsert(row);
        }
        protected override async update(row: FailoverRowValues) {
          this.updates++;
          await ctx.sql.execute(statement(`DELETE FROM ${this.tableName}`)); // cleanup ran in between
          return super.update(row);
        }
      }
      const vanishing = new VanishingRowStore({
        sql: ctx.sql,
        tablePrefix: ctx.prefix,
        rows: { nativeUpsert: false },
      });
      await vanishing.init();
      await vanishing.store(entry('n', 'k', { v: 1 }));
      await vanishing.store(entry('n', 'k', { v: 2 }));
      expect(vanishing.updates).toBe(1);
      expect(vanishing.inserts).toBe(3);
      expect((await vanishing.find('n', 'k'))?.payload).toEqual({ v: 2 });
    });

    it('switches to the fallback for good after the native upsert fails with a syntax error', async () => {
      class BrokenUpsert extends FailoverStoreQueryResolver {
        built = 0;
        override upsert() {
          this.built++;
          return statement('INSERT INTO nowhere VALUES ((( this is not SQL');
        }
      }
      const queries = new BrokenUpsert();
      const switching = await newStore({ queries }).init();
      expect(switching.usesNativeUpsert).toBe(true);
      await switching.store(entry('n', 'k', { v: 1 }));
      expect(switching.usesNativeUpsert).toBe(false);
      await switching.store(entry('n', 'k', { v: 2 }));
      expect((await switching.find('n', 'k'))?.payload).toEqual({ v: 2 });
      expect(await rows()).toBe(1);
    });

    it('refuses a row whose PAYLOAD_CLASS is not allowlisted, and leaves it in place', async () => {
      await store.store(entry('n', 'k', { secret: true }));
      await ctx.sql.execute(
        statement(`UPDATE ${store.tableName} SET PAYLOAD_CLASS = 'child_process.ChildProcess'`),
      );
      const error = await store.find('n', 'k').catch((e) => e);
      expect(error).toBeInstanceOf(FailoverStoreException);
      expect(error).toBeInstanceOf(PayloadClassNotAllowedError);
      expect(error.message).toContain('child_process.ChildProcess');
      expect(await rows()).toBe(1);
    });

    it('a strict allowlist refuses even plain JSON shapes it was not told about', async () => {
      const strictRegistry = new FailoverTypeRegistry();
      strictRegistry.configure(['Customer'], true);
      const strict = await newStore({ codec: new PayloadCodec(strictRegistry) }).init();
      await strict.store(entry('n', 'k', { plain: true }));
      await expect(strict.find('n', 'k')).rejects.toBeInstanceOf(PayloadClassNotAllowedError);
    });

    it('reports a malformed PAYLOAD as a typed error, not a crash', async () => {
      await store.store(entry('n', 'k', { ok: true }));
      await ctx.sql.execute(statement(`UPDATE ${store.tableName} SET PAYLOAD = '{"broken": '`));
      const error = await store.find('n', 'k').catch((e) => e);
      expect(error).toBeInstanceOf(MalformedPayloadError);
      expect(error).toBeInstanceOf(FailoverStoreException);
      expect(await rows()).toBe(1);
    });

    it('storeNow writes at once only on SQLite with its connection free, and answers NOT_NOW otherwise', async () => {
      const sqlite = ctx.db === 'sqlite';
      expect(store.storeNow(entry('n', 'now', { v: 1 }))).toBe(sqlite ? undefined : NOT_NOW);
      expect(await rows()).toBe(sqlite ? 1 : 0);
      // Inside another transaction on the shared connection, a write would join it: not now.
      await ctx.sql.transaction(async () => {
        expect(store.storeNow(entry('n', 'during', { v: 2 }))).toBe(NOT_NOW);
      });
      expect(await store.find('n', 'during')).toBeUndefined();
      if (sqlite) expect((await store.find('n', 'now'))?.payload).toEqual({ v: 1 });
    });

    if (ctx.db === 'sqlite') {
      it('storeNow leaves a database another process holds busy to store(), which retries', async () => {
        const file = (ctx.dataSource.options as { database: string }).database;
        const other = new Database(file);
        await ctx.dataSource.query('PRAGMA busy_timeout = 50');
        try {
          other.exec('BEGIN IMMEDIATE');
          expect(store.storeNow(entry('n', 'busy', { v: 1 }))).toBe(NOT_NOW);
          const retried = store.store(entry('n', 'busy', { v: 2 }));
          other.exec('COMMIT');
          await retried;
          expect((await store.find('n', 'busy'))?.payload).toEqual({ v: 2 });
        } finally {
          if (other.inTransaction) other.exec('ROLLBACK');
          other.close();
          await ctx.dataSource.query('PRAGMA busy_timeout = 10000');
        }
      });
    }

    it('reads the database clock for cleanup cutoffs', async () => {
      const now = await store.now();
      expect(Math.abs(now.getTime() - Date.now())).toBeLessThan(5_000);
    });
  },
  { tables: ['FAILOVER_STORE'] },
);
