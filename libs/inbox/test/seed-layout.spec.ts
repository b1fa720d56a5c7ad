import { DataSource } from 'typeorm';
import { SchemaManager, tableDdl, type TableSpec, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { ConvertCorMessageTimes1764000000405 } from '../../../migrations/1764000000405-convert-cor-message-times';
import { PauseUnsupportedError, INBOX_TABLES } from '../src';
import { FAR_FUTURE } from '../src/internal';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl } from './seed-ddl';

const ORDER = { namespace: 'test', name: 'order-placed' };

/** Holdfast's COR_MESSAGE before it took the seed's types: BIGINT epoch-ms times. */
const BIGINT_LAYOUT: TableSpec = {
  name: 'COR_MESSAGE',
  columns: [
    { name: 'ID', type: { kind: 'varchar', length: 64 } },
    { name: 'PAYLOAD_ENCODING', type: { kind: 'varchar', length: 64 }, nullable: false },
    { name: 'PAYLOAD_TYPE_NAMESPACE', type: { kind: 'varchar', length: 128 } },
    { name: 'PAYLOAD_TYPE_NAME', type: { kind: 'varchar', length: 128 }, nullable: false },
    { name: 'PAYLOAD_TYPE_REVISION', type: { kind: 'varchar', length: 64 } },
    { name: 'PAYLOAD', type: { kind: 'blob' } },
    { name: 'INSERTED', type: { kind: 'bigint' }, nullable: false },
    { name: 'TTL_DURATION', type: { kind: 'varchar', length: 64 } },
    { name: 'EXPIRATION', type: { kind: 'bigint' } },
    { name: 'RETRIES', type: { kind: 'int' }, nullable: false, default: 0 },
    { name: 'NEXT_RETRY', type: { kind: 'bigint' } },
    { name: 'ERROR', type: { kind: 'varchar', length: 4000 } },
  ],
  primaryKey: ['ID'],
  indexes: [
    { name: 'COR_MESSAGE_DUE_IDX', columns: ['INSERTED', 'NEXT_RETRY'] },
    { name: 'COR_MESSAGE_EXP_IDX', columns: ['EXPIRATION'] },
  ],
};

describeEachDatabase(
  'COR_MESSAGE shared with camunda-bpm-correlate',
  (ctx) => {
    let inbox: InboxTestApp | undefined;
    const table = () => `${ctx.prefix}COR_MESSAGE`;
    const seedTime = (iso: string) => ctx.sql.dialect.timestampParam(new Date(iso));

    beforeAll(async () => {
      for (const ddl of seedCorMessageDdl(ctx.db, ctx.prefix)) await ctx.sql.execute(statement(ddl));
    });
    beforeEach(async () => {
      await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
    });
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    /** A row as the seed's mapper inserts it (its test fixture's shape: encoding 'JACKSON'). */
    const insertSeedRow = (row: {
      id: string;
      inserted: string;
      retries?: number;
      nextRetry?: string | null;
      error?: string | null;
      payload?: unknown;
    }) =>
      ctx.sql.execute(
        statement(
          `INSERT INTO ${table()} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD_TYPE_REVISION, PAYLOAD, ` +
            `INSERTED, TTL_DURATION, EXPIRATION, RETRIES, NEXT_RETRY, ERROR) VALUES (${ctx.sql.dialect.placeholders(12)})`,
          [
            row.id,
            'JACKSON',
            ORDER.namespace,
            ORDER.name,
            null,
            Buffer.from(JSON.stringify(row.payload ?? { id: row.id })),
            seedTime(row.inserted),
            null,
            null,
            row.retries ?? 0,
            row.nextRetry ? seedTime(row.nextRetry) : null,
            row.error ?? null,
          ],
        ),
      );

    it("reads the seed's rows: JACKSON payloads, FAR_FUTURE pause, exhausted retries, INSERTED order", async () => {
      inbox = await createInboxApp(ctx, { retry: { maxRetries: 3, jitter: 0 } });
      await insertSeedRow({ id: '4712', inserted: '2022-10-01T10:00:10Z' });
      await insertSeedRow({ id: '4711', inserted: '2022-10-01T10:00:00Z' });
      await insertSeedRow({
        id: '4713',
        inserted: '2022-10-01T10:10:01Z',
        retries: 1,
        nextRetry: '2022-10-01T10:11:00Z',
        error: 'someError',
      });
      await insertSeedRow({
        id: '4715',
        inserted: '2022-10-01T10:12:03Z',
        retries: 1,
        nextRetry: '4999-12-03T10:15:30Z',
        error: 'another',
      });
      await insertSeedRow({ id: '4714', inserted: '2022-10-01T10:12:02Z', retries: 3, error: 'another' });
      const { management, delivery, probe } = inbox;
      expect(await management.count()).toMatchObject({ total: 5, due: 3, paused: 1, parked: 1 });
      expect((await management.list()).map((m) => m.id)).toEqual(['4711', '4712', '4713', '4714', '4715']);
      const paused = (await management.get('4715'))!;
      expect(paused.status).toBe('paused');
      expect(paused.inserted.toISOString()).toBe('2022-10-01T10:12:03.000Z');

      expect(await delivery.deliverDue()).toMatchObject({ claimed: 3, delivered: 3 });
      expect(probe.calls.map((m) => [m.id, m.encoding, m.payload, m.retries])).toEqual([
        ['4711', 'json', { id: '4711' }, 0],
        ['4712', 'json', { id: '4712' }, 0],
        ['4713', 'json', { id: '4713' }, 1],
      ]);
    });

    it('writes what a camunda-bpm-correlate reader understands', async () => {
      const clock = new TestClock(Date.parse('2026-03-01T12:00:00.123Z'));
      inbox = await createInboxApp(ctx, {
        clock: clock.read,
        retry: { maxRetries: 2, initialDelay: '1m', jitter: 0 },
      });
      const { acceptor, delivery, management, probe } = inbox;
      const longError = `boom ${'x'.repeat(20_000)}`;
      probe.behaviour = (m) => (m.id === 'fails' ? new Error(longError) : undefined);
      await acceptor.accept({ id: 'fails', type: ORDER, payload: { a: 1 }, ttl: 'PT1H' });
      await acceptor.accept({ id: 'paused', type: ORDER, payload: { b: 2 } });
      await management.pause('paused');
      await delivery.deliverDue();

      const raw = async (id: string) =>
        (
          await ctx.sql.query<Record<string, unknown>>(
            statement(
              `SELECT PAYLOAD_ENCODING AS enc, INSERTED AS inserted, EXPIRATION AS expiration, RETRIES AS retries, ` +
                `NEXT_RETRY AS next_retry, ERROR AS error FROM ${table()} WHERE ID = ${ctx.sql.dialect.placeholder(1)}`,
              [id],
            ),
          )
        )[0];
      const time = (v: unknown) => ctx.sql.dialect.readTimestamp(v).getTime();
      const failed = await raw('fails');
      expect(failed.enc).toBe('jackson');
      expect(time(failed.inserted)).toBe(clock.now);
      expect(time(failed.expiration)).toBe(clock.now + 3_600_000);
      // RETRIES counts the attempt; NEXT_RETRY is the real time of the next one; ERROR is whole.
      expect(Number(failed.retries)).toBe(1);
      expect(time(failed.next_retry)).toBe(clock.now + 60_000);
      expect(String(failed.error)).toContain(longError);
      expect(time((await raw('paused')).next_retry)).toBe(FAR_FUTURE);
      expect(new Date(FAR_FUTURE).toISOString()).toBe('4999-12-03T10:15:30.000Z');

      // The second failed attempt exhausts it: RETRIES = maxRetries, as the seed's status reads it.
      clock.advance(60_000);
      await delivery.deliverDue();
      const parked = await raw('fails');
      expect(Number(parked.retries)).toBe(2);
      expect(parked.next_retry).toBeNull();
      expect((await management.get('fails'))!.status).toBe('parked');
      expect(await management.resume('paused')).toBe(true);
      expect((await management.get('paused'))!.status).toBe('due');
    });

    if (ctx.db === 'mariadb') {
      it('works on a TIMESTAMP(3) table and refuses a pause there with a clear error', async () => {
        const prefix = `${ctx.prefix}ts_`;
        for (const ddl of seedCorMessageDdl('mariadb', prefix, 'seed-timestamp')) {
          await ctx.sql.execute(statement(ddl));
        }
        try {
          inbox = await createInboxApp({ ...ctx, prefix }, { retry: { jitter: 0 } });
          const { acceptor, delivery, management, probe } = inbox;
          probe.behaviour = (m) => (m.id === 'f' ? new Error('no') : undefined);
          await acceptor.acceptAll([
            { id: 'a', type: ORDER, payload: 1, ttl: 'PT1H' },
            { id: 'f', type: ORDER, payload: 2 },
          ]);
          expect(await delivery.deliverDue()).toMatchObject({ claimed: 2, delivered: 1, failed: 1 });
          const f = (await management.get('f'))!;
          expect(f.status).toBe('retrying');
          expect(f.nextRetry!.getTime() - Date.now()).toBeGreaterThan(0);
          const error = await management.pause('f').catch((e: Error) => e);
          expect(error).toBeInstanceOf(PauseUnsupportedError);
          expect((error as Error).message).toContain('TIMESTAMP, which ends in January 2038');
        } finally {
          await inbox?.close();
          inbox = undefined;
          await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}COR_MESSAGE`));
        }
      });
    }

    it('converts the previous BIGINT layout, keeping every message and its state', async () => {
      const prefix = `${ctx.prefix}old_`;
      const old = `${prefix}COR_MESSAGE`;
      for (const ddl of tableDdl(ctx.sql.dialect.name, BIGINT_LAYOUT, prefix)) {
        await ctx.sql.execute(statement(ddl));
      }
      const t0 = Date.parse('2026-02-01T08:00:00.007Z');
      const rows: [string, string, number, number | null, number, number | null, string | null][] = [
        // id, encoding, INSERTED, EXPIRATION, RETRIES, NEXT_RETRY, ERROR
        ['due', 'json', t0, null, 0, null, null],
        ['retrying', 'json', t0 + 1, t0 + 86_400_000, 2, t0 + 600_000, 'E'.repeat(4000)],
        ['paused', 'json', t0 + 2, null, 0, 8_000_000_000_000_000, null],
        ['parked', 'binary', t0 + 3, null, 6, 9_000_000_000_000_000, 'gave up'],
      ];
      for (const r of rows) {
        await ctx.sql.execute(
          statement(
            `INSERT INTO ${old} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD, INSERTED, ` +
              `EXPIRATION, RETRIES, NEXT_RETRY, ERROR) VALUES (${ctx.sql.dialect.placeholders(10)})`,
            [r[0], r[1], ORDER.namespace, ORDER.name, Buffer.from('{"n":1}'), r[2], r[3], r[4], r[5], r[6]],
          ),
        );
      }
      const migration = new (class extends ConvertCorMessageTimes1764000000405 {
        protected override get prefix() {
          return prefix;
        }
      })();
      const runner = (ctx.dataSource as DataSource).createQueryRunner();
      try {
        await runner.startTransaction();
        await migration.up(runner);
        await runner.commitTransaction();
        // A second run finds the seed's layout and does nothing.
        await migration.up(runner);
      } finally {
        await runner.release();
      }
      // What the next migration (1764000000406) adds: the competing nodes' cleanup tick.
      await new SchemaManager(ctx.sql).apply(INBOX_TABLES.lease, prefix, 'create');
      const clock = new TestClock(t0 + 1000);
      try {
        inbox = await createInboxApp(
          { ...ctx, prefix },
          { clock: clock.read, schema: 'check', retry: { maxRetries: 5 } },
        );
        const { management, delivery, probe } = inbox;
        const list = await management.list();
        expect(list.map((m) => [m.id, m.status, m.inserted.getTime(), m.retries])).toEqual([
          ['due', 'due', t0, 0],
          ['retrying', 'retrying', t0 + 1, 2],
          ['paused', 'paused', t0 + 2, 0],
          ['parked', 'parked', t0 + 3, 6],
        ]);
        const retrying = list[1];
        expect(retrying.expiration!.getTime()).toBe(t0 + 86_400_000);
        expect(retrying.nextRetry!.getTime()).toBe(t0 + 600_000);
        expect(retrying.error).toBe('E'.repeat(4000));
        expect(list[3].error).toBe('gave up');
        const [encoding] = await ctx.sql.query<{ e: string }>(
          statement(`SELECT PAYLOAD_ENCODING AS e FROM ${old} WHERE ID = ${ctx.sql.dialect.placeholder(1)}`, [
            'due',
          ]),
        );
        expect(encoding.e).toBe('jackson');
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 1, delivered: 1 });
        expect(probe.calls[0].payload).toEqual({ n: 1 });
      } finally {
        await inbox?.close();
        inbox = undefined;
        await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${old}`));
        await ctx.sql.execute(statement(`DROP TABLE IF EXISTS ${prefix}HOLDFAST_INBOX_LEASE`));
      }
    });
  },
  { tables: ['COR_MESSAGE', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE'] },
);
