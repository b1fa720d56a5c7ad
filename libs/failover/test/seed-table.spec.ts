import { describeEachDatabase } from '@holdfast/testing';
import { SchemaMismatchError, statement } from '@holdfast/core/kit';
import {
  FailoverTypeRegistry,
  PayloadCodec,
  SqlFailoverStore,
  failoverKey,
} from '@holdfast/failover/internal';

/**
 * FAILOVER_STORE as Société Générale's failover library creates it: `TIMESTAMP(9) WITH TIME
 * ZONE` times (PostgreSQL keeps 6 digits; MariaDB has no zone: `DATETIME(6)`), and
 * `PAYLOAD VARCHAR(2000)` ("the maximum size based on your payload") instead of a text type.
 */
const SEED_DDL = {
  postgres: (t: string) => `CREATE TABLE ${t} (
    FAILOVER_NAME VARCHAR(50) NOT NULL, FAILOVER_KEY VARCHAR(256) NOT NULL,
    AS_OF TIMESTAMP(6) WITH TIME ZONE NOT NULL, EXPIRE_ON TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    PAYLOAD VARCHAR(2000), PAYLOAD_CLASS VARCHAR(256), PRIMARY KEY (FAILOVER_NAME, FAILOVER_KEY))`,
  mariadb: (t: string) => `CREATE TABLE ${t} (
    FAILOVER_NAME VARCHAR(50) NOT NULL, FAILOVER_KEY VARCHAR(256) NOT NULL,
    AS_OF DATETIME(6) NOT NULL, EXPIRE_ON DATETIME(6) NOT NULL,
    PAYLOAD VARCHAR(2000), PAYLOAD_CLASS VARCHAR(256), PRIMARY KEY (FAILOVER_NAME, FAILOVER_KEY))`,
  sqlite: (t: string) => `CREATE TABLE ${t} (
    FAILOVER_NAME VARCHAR(50) NOT NULL, FAILOVER_KEY VARCHAR(256) NOT NULL,
    AS_OF TIMESTAMP NOT NULL, EXPIRE_ON TIMESTAMP NOT NULL,
    PAYLOAD VARCHAR(2000), PAYLOAD_CLASS VARCHAR(256), PRIMARY KEY (FAILOVER_NAME, FAILOVER_KEY))`,
};

describeEachDatabase(
  'SqlFailoverStore on the Java failover library’s table',
  (ctx) => {
    const table = () => `${ctx.prefix}FAILOVER_STORE`;
    const open = (schema: 'check' | 'create' = 'check') =>
      new SqlFailoverStore({
        sql: ctx.sql,
        tablePrefix: ctx.prefix,
        schema,
        rows: { codec: new PayloadCodec(new FailoverTypeRegistry()) },
      }).init();

    beforeAll(async () => {
      await ctx.sql.execute(statement(SEED_DDL[ctx.db](table())));
    });

    it('passes the schema check, stores and recovers to the millisecond', async () => {
      const store = await open();
      const key = failoverKey('country', 'FR');
      const asOf = new Date(Date.UTC(2026, 10, 23, 15, 4, 5, 678));
      await store.store({
        name: 'country',
        key,
        asOf,
        expireOn: new Date(asOf.getTime() + 3_600_000),
        payload: { code: 'FR' },
      });
      const found = await store.find<{ code: string }>('country', key);
      expect(found?.payload).toEqual({ code: 'FR' });
      expect(found?.asOf.getTime()).toBe(asOf.getTime());
      expect(found!.expireOn.getTime() - found!.asOf.getTime()).toBe(3_600_000);
    });

    it('refuses a PAYLOAD column of another kind, naming it', async () => {
      const other = `${ctx.prefix}x_`;
      await ctx.sql.execute(
        statement(SEED_DDL[ctx.db](`${other}FAILOVER_STORE`).replace('PAYLOAD VARCHAR(2000)', 'PAYLOAD INT')),
      );
      const store = new SqlFailoverStore({
        sql: ctx.sql,
        tablePrefix: other,
        schema: 'check',
        rows: { codec: new PayloadCodec(new FailoverTypeRegistry()) },
      });
      if (ctx.db === 'sqlite') {
        // SQLite's INT affinity is not text either.
        await expect(store.init()).rejects.toThrow(SchemaMismatchError);
      } else {
        await expect(store.init()).rejects.toThrow(/column PAYLOAD: found type int/i);
      }
      await ctx.sql.execute(statement(`DROP TABLE ${other}FAILOVER_STORE`));
    });
  },
  { tables: ['FAILOVER_STORE'] },
);
