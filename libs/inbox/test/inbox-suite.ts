import { InvalidOptionsError, statement } from '@holdfast/core/kit';
import { describeEachDatabase } from '@holdfast/testing';
import { InvalidMessageError, MessageNotFoundError, PayloadEncodingError, type InboxMessage } from '../src';
import { createInboxApp, TestClock, type InboxTestApp } from './inbox-test-app';
import { seedCorMessageDdl, type SeedLayout } from './seed-ddl';

const ORDER = { namespace: 'test', name: 'order-placed' };

/**
 * The inbox's integration suite. `layout` 'seed': every test runs on a COR_MESSAGE created
 * beforehand with camunda-bpm-correlate's own DDL (no Holdfast defaults, PAYLOAD_TYPE_NAMESPACE
 * NOT NULL, the seed's timestamp and text types) instead of the one Holdfast creates.
 */
export function defineInboxSuite(title: string, layout: SeedLayout | 'holdfast' = 'holdfast'): void {
  describeEachDatabase(
    title,
    (ctx) => {
      if (layout !== 'holdfast') {
        beforeAll(async () => {
          for (const ddl of seedCorMessageDdl(ctx.db, ctx.prefix, layout))
            await ctx.sql.execute(statement(ddl));
        });
      }
      let inbox: InboxTestApp | undefined;
      const table = () => `${ctx.prefix}COR_MESSAGE`;
      const rowCount = async () =>
        Number((await ctx.sql.query<{ c: unknown }>(statement(`SELECT COUNT(*) AS c FROM ${table()}`)))[0].c);
      const open = async (options: Parameters<typeof createInboxApp>[1] = {}) => {
        inbox = await createInboxApp(ctx, options);
        return inbox;
      };

      beforeEach(async () => {
        // The first test creates the table; later ones start from an empty one.
        try {
          await ctx.sql.execute(statement(`DELETE FROM ${table()}`));
        } catch {
          // not created yet
        }
      });
      afterEach(async () => {
        await inbox?.close();
        inbox = undefined;
      });

      it('accepts, delivers and deletes json and binary messages', async () => {
        const { acceptor, delivery, probe } = await open();
        const a = await acceptor.accept({ type: ORDER, payload: { order: 1, items: ['a'] } });
        const b = await acceptor.accept({
          id: 'bin-1',
          type: { name: 'blob' },
          payload: Buffer.from([0, 1, 254, 255]),
          encoding: 'binary',
        });
        expect(a.accepted).toBe(true);
        expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
        expect(b).toEqual({ id: 'bin-1', accepted: true });
        expect(await rowCount()).toBe(2);

        const report = await delivery.deliverDue();
        expect(report).toMatchObject({ claimed: 2, delivered: 2, failed: 0 });
        expect(await rowCount()).toBe(0);
        const json = probe.calls.find((m) => m.id === a.id)!;
        expect(json.payload).toEqual({ order: 1, items: ['a'] });
        expect(json.type).toEqual(ORDER);
        expect(json.retries).toBe(0);
        const bin = probe.calls.find((m) => m.id === 'bin-1')! as InboxMessage<Buffer>;
        expect(Buffer.isBuffer(bin.payload)).toBe(true);
        expect([...bin.payload]).toEqual([0, 1, 254, 255]);
      });

      it('treats an existing id as a duplicate and changes nothing', async () => {
        const { acceptor, management } = await open({ deliver: false });
        expect(await acceptor.accept({ id: 'dup', type: ORDER, payload: { v: 1 }, ttl: 'PT1H' })).toEqual({
          id: 'dup',
          accepted: true,
        });
        const before = await management.get('dup');
        expect(await acceptor.accept({ id: 'dup', type: { name: 'other' }, payload: { v: 2 } })).toEqual({
          id: 'dup',
          accepted: false,
        });
        const after = await management.get('dup');
        expect(after).toEqual(before);
        const [row] = await ctx.sql.query<{ payload: Buffer }>(
          statement(`SELECT PAYLOAD AS payload FROM ${table()}`),
        );
        expect(JSON.parse(Buffer.from(row.payload).toString())).toEqual({ v: 1 });

        const results = await acceptor.acceptAll([
          { id: 'n1', type: ORDER, payload: 1 },
          { id: 'dup', type: ORDER, payload: 2 },
          { id: 'n2', type: ORDER, payload: 3 },
          { id: 'n1', type: ORDER, payload: 4 },
        ]);
        expect(results).toEqual([
          { id: 'n1', accepted: true },
          { id: 'dup', accepted: false },
          { id: 'n2', accepted: true },
          { id: 'n1', accepted: false },
        ]);
        expect(await rowCount()).toBe(3);

        // Racing callers: each id is accepted exactly once.
        const racing = await Promise.all([
          ...Array.from({ length: 6 }, () => acceptor.accept({ id: 'race', type: ORDER, payload: 1 })),
          ...Array.from({ length: 3 }, () =>
            acceptor.acceptAll(['r1', 'r2', 'r3'].map((id) => ({ id, type: ORDER, payload: 1 }))),
          ),
        ]);
        const flat = racing.flat();
        for (const id of ['race', 'r1', 'r2', 'r3']) {
          expect(flat.filter((r) => r.id === id && r.accepted)).toHaveLength(1);
        }
        expect(await rowCount()).toBe(7);
      });

      it('inserts acceptAll in chunks and keeps the order for delivery', async () => {
        const { acceptor, delivery, probe } = await open({ acceptChunkSize: 7, batchSize: 50 });
        const results = await acceptor.acceptAll(
          Array.from({ length: 30 }, (_, i) => ({ type: ORDER, payload: { i } })),
        );
        expect(results.every((r) => r.accepted)).toBe(true);
        expect(await rowCount()).toBe(30);
        // One group: delivered one after another in INSERTED order (ties broken by the v7 ids).
        await inbox!.close();
        const grouped = await open({ batchSize: 50, groupBy: () => 'all' });
        await grouped.delivery.deliverDue();
        expect(grouped.probe.calls.map((m) => (m.payload as { i: number }).i)).toEqual(
          Array.from({ length: 30 }, (_, i) => i),
        );
        expect(probe.calls).toHaveLength(0);
        void delivery;
      });

      it('retries with exponential backoff on the clock, stores the error, then parks', async () => {
        const clock = new TestClock();
        const { acceptor, delivery, management, probe } = await open({
          clock: clock.read,
          // Four attempts: the fourth failure brings RETRIES to maxRetries and parks it.
          retry: { maxRetries: 4, initialDelay: 1000, multiplier: 2, maxDelay: 3000, jitter: 0 },
        });
        probe.behaviour = () => new Error('upstream refused');
        await acceptor.accept({ id: 'r1', type: ORDER, payload: {} });

        const schedule: number[] = [];
        for (let attempt = 1; attempt <= 3; attempt++) {
          const start = clock.now;
          expect(await delivery.deliverDue()).toMatchObject({ claimed: 1, failed: 1, parked: 0 });
          const info = (await management.get('r1'))!;
          expect(info.status).toBe('retrying');
          expect(info.retries).toBe(attempt);
          expect(info.error).toContain('Error: upstream refused');
          expect(info.error).toContain('inbox-suite.ts'); // the stack
          schedule.push(info.nextRetry!.getTime() - start);
          // Not due a millisecond early…
          clock.advance(schedule[schedule.length - 1] - 1);
          expect((await delivery.deliverDue()).claimed).toBe(0);
          // …and due on time.
          clock.advance(1);
        }
        expect(schedule).toEqual([1000, 2000, 3000]); // 1s, 2s, then capped at maxDelay
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 1, failed: 1, parked: 1 });
        expect((await management.get('r1'))!.status).toBe('parked');
        expect((await management.get('r1'))!.retries).toBe(4);
        clock.advance(10 * 3600_000);
        expect((await delivery.deliverDue()).claimed).toBe(0);
        expect(await management.count()).toMatchObject({ parked: 1, total: 1 });
        expect(probe.calls).toHaveLength(4);

        // An admin gives it another go: it succeeds and is gone.
        probe.behaviour = () => undefined;
        await management.setRetries('r1', 0);
        await management.retryNow('r1');
        expect(await delivery.deliverDue()).toMatchObject({ delivered: 1 });
        expect(await rowCount()).toBe(0);
      });

      it('spreads retries with jitter below the backoff delay', async () => {
        const clock = new TestClock();
        const { acceptor, delivery, management, probe } = await open({
          clock: clock.read,
          retry: { initialDelay: 10_000, jitter: 0.5 },
        });
        probe.behaviour = () => new Error('no');
        await acceptor.acceptAll(
          Array.from({ length: 20 }, (_, i) => ({ id: `j${i}`, type: ORDER, payload: i })),
        );
        await delivery.deliverDue();
        const delays = (await management.list({ status: 'retrying' })).map(
          (m) => m.nextRetry!.getTime() - clock.now,
        );
        expect(delays).toHaveLength(20);
        for (const d of delays) {
          expect(d).toBeGreaterThanOrEqual(5000);
          expect(d).toBeLessThanOrEqual(10_000);
        }
        expect(new Set(delays).size).toBeGreaterThan(1);
      });

      it('pauses, resumes, retries now, sets retries and deletes', async () => {
        const clock = new TestClock();
        const { acceptor, delivery, management, probe } = await open({
          clock: clock.read,
          retry: { jitter: 0 },
        });
        await acceptor.acceptAll([
          { id: 'p1', type: ORDER, payload: 1 },
          { id: 'p2', type: ORDER, payload: 2 },
          { id: 'p3', type: ORDER, payload: 3 },
        ]);
        await management.pause('p1');
        probe.behaviour = (m) => (m.id === 'p2' ? new Error('p2 fails') : undefined);
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 2, delivered: 1, failed: 1 });
        expect(probe.calls.map((m) => m.id).sort()).toEqual(['p2', 'p3']);
        expect(await management.count()).toMatchObject({ paused: 1, retrying: 1, due: 0, total: 2 });
        expect((await management.list({ status: 'paused' })).map((m) => m.id)).toEqual(['p1']);

        expect(await management.resume('p2')).toBe(false); // not paused
        expect(await management.resume('p1')).toBe(true);
        expect(await management.count('due')).toBe(1);

        probe.behaviour = () => undefined;
        await management.retryNow('p2'); // without waiting for the backoff
        // Below maxRetries (5): at or above it the message is exhausted, whatever NEXT_RETRY says.
        await management.setRetries('p2', 4);
        expect((await management.get('p2'))!.retries).toBe(4);
        const delivered = await delivery.deliverDue();
        expect(delivered).toMatchObject({ claimed: 2, delivered: 2 });
        expect(probe.calls.find((m) => m.id === 'p2' && m.retries === 4)).toBeDefined();

        await acceptor.accept({ id: 'd1', type: ORDER, payload: 1 });
        expect(await management.delete('d1')).toBe(true);
        expect(await management.delete('d1')).toBe(false);
        await expect(management.pause('nope')).rejects.toBeInstanceOf(MessageNotFoundError);
        await expect(management.resume('nope')).rejects.toBeInstanceOf(MessageNotFoundError);
        await expect(management.retryNow('nope')).rejects.toBeInstanceOf(MessageNotFoundError);
        await expect(management.setRetries('nope', 1)).rejects.toBeInstanceOf(MessageNotFoundError);
        await expect(management.setRetries('p1', -1)).rejects.toThrow("'retries' = -1");
        await expect(management.list({ status: 'lost' as never })).rejects.toThrow('\'status\' = "lost"');
        expect(await rowCount()).toBe(0);
      });

      it('lists and counts the messages of a type in the database, page by page', async () => {
        const { acceptor, management } = await open();
        const v2 = { namespace: 'test', name: 'order-placed', revision: '2' };
        const bare = { name: 'order-placed' };
        const other = { namespace: 'shop', name: 'order-placed' };
        const refund = { namespace: 'test', name: 'refund' };
        const types = [ORDER, v2, bare, other, refund, ORDER, ORDER, v2, bare, ORDER];
        for (const [i, type] of types.entries()) await acceptor.accept({ id: `t${i}`, type, payload: i });
        await management.pause('t5');
        const ids = (page: { id: string }[]) => page.map((m) => m.id);

        const exact = { ...ORDER, revision: null };
        expect(await management.countMatching({ type: exact })).toBe(4);
        expect(ids(await management.list({ type: exact, limit: 3 }))).toEqual(['t0', 't5', 't6']);
        expect(ids(await management.list({ type: exact, limit: 3, offset: 3 }))).toEqual(['t9']);
        expect(await management.countMatching({ status: 'due', type: exact })).toBe(3);
        expect(ids(await management.list({ status: 'due', type: exact, limit: 2, offset: 1 }))).toEqual([
          't6',
          't9',
        ]);
        expect(ids(await management.list({ status: 'paused', type: exact }))).toEqual(['t5']);

        // Any namespace and revision; every revision of one namespace; no namespace; one revision.
        expect(await management.countMatching({ type: { name: 'order-placed' } })).toBe(9);
        expect(await management.countMatching({ type: ORDER })).toBe(6);
        expect(ids(await management.list({ type: { name: 'order-placed', namespace: null } }))).toEqual([
          't2',
          't8',
        ]);
        expect(ids(await management.list({ type: v2 }))).toEqual(['t1', 't7']);
        expect(await management.countMatching({ type: { name: 'nothing' } })).toBe(0);
        expect(await management.countMatching({ status: 'due' })).toBe(9);
        expect(await management.countMatching()).toBe(10);

        await expect(management.list({ type: { name: '' } })).rejects.toThrow("'type'");
        await expect(
          management.countMatching({ type: { name: 'x', namespace: 1 as never } }),
        ).rejects.toThrow("'type'");
      });

      it('never delivers an expired message and cleans all expired pages in chunks', async () => {
        const clock = new TestClock();
        const { acceptor, delivery, management, probe } = await open({
          clock: clock.read,
          cleanupChunkSize: 10,
        });
        await acceptor.acceptAll(
          Array.from({ length: 25 }, (_, i) => ({ id: `e${i}`, type: ORDER, payload: i, ttl: 'PT10S' })),
        );
        await acceptor.accept({
          id: 'abs',
          type: ORDER,
          payload: 0,
          expiration: new Date(clock.now + 5_000),
        });
        await acceptor.accept({ id: 'keep', type: ORDER, payload: 0, ttl: 'P1D' });
        const info = (await management.get('e0'))!;
        expect(info.ttl).toBe('PT10S');
        expect(info.expiration!.getTime() - info.inserted.getTime()).toBe(10_000);
        probe.behaviour = () => undefined;
        await management.pause('keep');

        clock.advance(10_000);
        expect(await management.count()).toMatchObject({ expired: 26, paused: 1 });
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 0 });
        expect(probe.calls).toHaveLength(0);
        expect(await delivery.cleanupExpired()).toBe(26);
        expect(await rowCount()).toBe(1);
        expect((await management.list())[0].id).toBe('keep');
      });

      it('applies defaultTtl to messages without ttl or expiration', async () => {
        const clock = new TestClock();
        const { acceptor, management } = await open({
          clock: clock.read,
          defaultTtl: 'PT1H',
          deliver: false,
        });
        await acceptor.accept({ id: 'd1', type: ORDER, payload: 1 });
        await acceptor.accept({ id: 'd2', type: ORDER, payload: 1, ttl: 'PT5M' });
        const d1 = (await management.get('d1'))!;
        expect(d1.ttl).toBe('PT1H');
        expect(d1.expiration!.getTime()).toBe(clock.now + 3_600_000);
        expect((await management.get('d2'))!.ttl).toBe('PT5M');
      });

      it('counts a payload that cannot be decoded as a failed attempt and goes on', async () => {
        const { acceptor, delivery, management, probe } = await open({ retry: { jitter: 0 } });
        await acceptor.accept({ id: 'good', type: ORDER, payload: { ok: true } });
        const d = ctx.sql.dialect;
        await ctx.sql.execute(
          statement(
            `INSERT INTO ${table()} (ID, PAYLOAD_ENCODING, PAYLOAD_TYPE_NAMESPACE, PAYLOAD_TYPE_NAME, PAYLOAD, INSERTED, RETRIES) ` +
              `VALUES (${d.placeholders(6)}, 0)`,
            [
              'corrupt',
              'json',
              'test',
              'order-placed',
              Buffer.from('{not json'),
              d.timestampParam(new Date(1)),
            ],
          ),
        );
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 2, delivered: 1, failed: 1 });
        expect(probe.calls.map((m) => m.id)).toEqual(['good']);
        const info = (await management.get('corrupt'))!;
        expect(info.status).toBe('retrying');
        expect(info.error).toContain("cannot be decoded as 'json'");
      });

      it('fail-first stops a group at its first failure; all carries on, in INSERTED order', async () => {
        const groupBy = (m: InboxMessage) => (m.payload as { g: string }).g;
        const messages = ['a1', 'a2', 'a3', 'b1', 'b2'].map((id) => ({
          id,
          type: ORDER,
          payload: { g: id[0] },
        }));
        const fail = (m: InboxMessage) => (m.id === 'a1' ? new Error('a1 fails') : undefined);

        const first = await open({
          groupBy,
          batchMode: 'fail-first',
          retry: { jitter: 0, initialDelay: '1h' },
        });
        first.probe.behaviour = fail;
        await first.acceptor.acceptAll(messages);
        expect(await first.delivery.deliverDue()).toMatchObject({
          claimed: 5,
          delivered: 2,
          failed: 1,
          skipped: 2,
        });
        expect(first.probe.calls.map((m) => m.id).filter((id) => id.startsWith('a'))).toEqual(['a1']);
        expect(first.probe.calls.map((m) => m.id).filter((id) => id.startsWith('b'))).toEqual(['b1', 'b2']);
        // The skipped ones wait as long as the failed one, so they do not overtake it.
        const waiting = await first.management.list({ status: 'retrying' });
        expect(waiting.map((m) => m.id)).toEqual(['a1', 'a2', 'a3']);
        expect(waiting[1].nextRetry!.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
        await first.close();
        inbox = undefined;
        await ctx.sql.execute(statement(`DELETE FROM ${table()}`));

        const all = await open({ groupBy, batchMode: 'all', retry: { jitter: 0 } });
        all.probe.behaviour = fail;
        await all.acceptor.acceptAll(messages);
        expect(await all.delivery.deliverDue()).toMatchObject({
          claimed: 5,
          delivered: 4,
          failed: 1,
          skipped: 0,
        });
        expect(all.probe.calls.map((m) => m.id).filter((id) => id.startsWith('a'))).toEqual([
          'a1',
          'a2',
          'a3',
        ]);
      });

      it('keeps a message of an unknown type, reports and counts it', async () => {
        const { acceptor, delivery, management } = await open();
        await acceptor.accept({ id: 'u1', type: { namespace: 'test', name: 'nobody-listens' }, payload: {} });
        await acceptor.accept({ id: 'k1', type: ORDER, payload: {} });
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 2, delivered: 1, unhandled: 1 });
        expect(await rowCount()).toBe(1);
        const info = (await management.get('u1'))!;
        expect(info.retries).toBe(0);
        expect(info.error).toContain("No @InboxHandler for type 'test:nobody-listens'");
        expect(await management.countUnhandled()).toBe(1);
        expect(await management.countByType()).toEqual([
          { type: { namespace: 'test', name: 'nobody-listens' }, count: 1, handled: false },
        ]);
        expect(await management.count('retrying')).toBe(1);
      });

      it('refuses bad input with typed errors and stores nothing', async () => {
        const { acceptor } = await open({ deliver: false });
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        const cases: [unknown, new (...args: never[]) => Error, string][] = [
          [{ type: { name: '' }, payload: 1 }, InvalidMessageError, '\'type.name\' = ""'],
          [{ type: {}, payload: 1 }, InvalidMessageError, "'type.name'"],
          [{ type: ORDER, payload: circular }, PayloadEncodingError, "cannot be encoded as 'json'"],
          [{ type: ORDER, payload: 10n }, PayloadEncodingError, "cannot be encoded as 'json'"],
          [{ type: ORDER, payload: undefined }, PayloadEncodingError, 'undefined has no JSON representation'],
          [{ type: ORDER, payload: 'text', encoding: 'binary' }, PayloadEncodingError, "as 'binary'"],
          [{ type: ORDER, payload: 1, encoding: 'xml' }, InvalidMessageError, '\'encoding\' = "xml"'],
          [{ type: ORDER, payload: 1, ttl: 'PT-10M' }, InvalidMessageError, '\'ttl\' = "PT-10M"'],
          [{ type: ORDER, payload: 1, ttl: '10 minutes' }, InvalidMessageError, "'ttl'"],
          [{ type: ORDER, payload: 1, ttl: 'PT0S' }, InvalidMessageError, "'ttl'"],
          [
            { id: 'x'.repeat(65), type: ORDER, payload: 1 },
            InvalidMessageError,
            'is 65 characters long; at most 64',
          ],
          [{ id: '', type: ORDER, payload: 1 }, InvalidMessageError, "'id'"],
          [{ type: ORDER, payload: 1, ttl: 'PT1M', expiration: new Date() }, InvalidMessageError, 'not both'],
        ];
        for (const [message, type, text] of cases) {
          const error = await acceptor.accept(message as never).catch((e: Error) => e);
          expect(error).toBeInstanceOf(type);
          expect((error as Error).message).toContain(text);
        }
        // One bad message in a batch: nothing of the batch is stored.
        const batch = await acceptor
          .acceptAll([
            { id: 'ok1', type: ORDER, payload: 1 },
            { id: 'ok2', type: { name: '' }, payload: 2 },
          ])
          .catch((e: Error) => e);
        expect(batch).toBeInstanceOf(InvalidMessageError);
        expect((batch as Error).message).toContain('at index 1');
        expect(await rowCount()).toBe(0);
      });

      it('refuses bad options at startup, naming option and value', async () => {
        for (const [options, text] of [
          [{ batchSize: 0 }, "option 'batchSize' = 0"],
          [{ pollInterval: 'soon' }, 'option \'pollInterval\' = "soon"'],
          [{ batchMode: 'some' }, 'option \'batchMode\' = "some"'],
          [{ retry: { multiplier: 0.5 } }, "option 'retry.multiplier' = 0.5"],
          [{ defaultTtl: 'PT-1H' }, 'option \'defaultTtl\' = "PT-1H"'],
          [{ tablePrefix: 'x; DROP' }, "option 'tablePrefix'"],
        ] as const) {
          const error = await createInboxApp(ctx, options as never).catch((e: Error) => e);
          expect(error).toBeInstanceOf(InvalidOptionsError);
          expect((error as Error).message).toContain(text);
        }
      });

      it('lets a message whose handler outlives the visibility timeout become due again', async () => {
        const clock = new TestClock();
        const { acceptor, delivery, management, probe } = await open({
          clock: clock.read,
          visibilityTimeout: '500ms',
          retry: { initialDelay: 1000, jitter: 0 },
        });
        let release!: () => void;
        const stuck = new Promise<void>((r) => (release = r));
        probe.behaviour = (m) => (m.id === 'slow' && m.retries === 0 ? stuck : undefined);
        await acceptor.accept({ id: 'slow', type: ORDER, payload: {} });
        await acceptor.accept({ id: 'next', type: ORDER, payload: {} });
        // 'slow' holds its group only until the lease ends; 'next' (its own group) is delivered.
        const first = await delivery.deliverDue();
        expect(first).toMatchObject({ claimed: 2, delivered: 1, failed: 1 });
        expect((await management.get('slow'))!.error).toContain('visibility timeout');
        clock.advance(1000);
        expect(await delivery.deliverDue()).toMatchObject({ claimed: 1, delivered: 1 });
        release();
        expect(await rowCount()).toBe(0);
      });
    },
    { tables: ['COR_MESSAGE', 'SIMBA_MUTEX', 'HOLDFAST_INBOX_LEASE', 'HOLDFAST_INBOX_GROUP'] },
  );
}
