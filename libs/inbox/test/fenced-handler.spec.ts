import { join } from 'node:path';
import { describeEachDatabase, forkTs, waitForExit, waitForMessage, waitUntil } from '@holdfast/testing';
import { InboxDeliveryFencedError, InvalidFencedManagerError, type InboxHandlerContext } from '../src';
import { createInboxApp, type InboxTestApp } from './inbox-test-app';
import { statement } from '@holdfast/core/kit';

const ORDER = { namespace: 'test', name: 'order-placed' };

describeEachDatabase(
  'Fenced handlers (context.claim)',
  (ctx) => {
    const apps: InboxTestApp[] = [];
    const log = () => `${ctx.prefix}FENCE_LOG`;
    const insert = () =>
      `INSERT INTO ${log()} (ID, NODE) VALUES (${ctx.db === 'postgres' ? '$1, $2' : '?, ?'})`;
    const rows = async () =>
      (
        await ctx.sql.query<{ id: string; node: string }>(
          statement(`SELECT ID AS id, NODE AS node FROM ${log()} ORDER BY NODE`),
        )
      ).map((r) => `${r.id}:${r.node}`);

    beforeAll(async () => {
      await ctx.sql.execute(
        statement(`CREATE TABLE ${log()} (ID VARCHAR(64) NOT NULL, NODE VARCHAR(16) NOT NULL)`),
      );
    });
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
      await ctx.sql.execute(statement(`DELETE FROM ${log()}`));
      await ctx.sql.execute(statement(`DELETE FROM ${ctx.prefix}COR_MESSAGE`)).catch(() => undefined);
    });

    it('commits a fenced write while the claim holds, and refuses it (nothing committed) once another claim took the row', async () => {
      const node = await createInboxApp(ctx);
      apps.push(node);
      const seen: { id: string; token: number; outcome: string }[] = [];
      node.probe.behaviour = async (message, context: InboxHandlerContext) => {
        const { claim } = context;
        expect(claim.messageId).toBe(message.id);
        expect(claim.held).toBe(true);
        if (message.id === 'taken') {
          // Another node's claim after this one's lease ended: a later lease end in NEXT_RETRY.
          const table = `${ctx.prefix}COR_MESSAGE`;
          const later = new Date(claim.token + 60_000);
          await ctx.sql.execute(
            statement(
              `UPDATE ${table} SET NEXT_RETRY = ${ctx.db === 'postgres' ? '$1' : '?'} WHERE ID = ${ctx.db === 'postgres' ? '$2' : '?'}`,
              [ctx.db === 'sqlite' ? later.toISOString() : later, message.id],
            ),
          );
        }
        try {
          await claim.fenced(ctx.dataSource, (manager) => manager.query(insert(), [message.id, 'A']));
          seen.push({ id: message.id, token: claim.token, outcome: 'wrote' });
        } catch (error) {
          seen.push({
            id: message.id,
            token: claim.token,
            outcome: (error as InboxDeliveryFencedError).code,
          });
          expect(error).toBeInstanceOf(InboxDeliveryFencedError);
          expect((error as Error).message).toContain("'taken'");
        }
      };
      await node.acceptor.acceptAll([
        { id: 'kept', type: ORDER, payload: 1 },
        { id: 'taken', type: ORDER, payload: 2 },
      ]);
      await node.delivery.deliverDue();
      expect(seen.map((s) => `${s.id}:${s.outcome}`).sort()).toEqual([
        'kept:wrote',
        'taken:HOLDFAST_INBOX_DELIVERY_FENCED',
      ]);
      for (const s of seen) expect(Number.isFinite(s.token)).toBe(true);
      expect(await rows()).toEqual(['kept:A']);
    });

    it('runs inside the caller’s own transaction and refuses a manager that is not one', async () => {
      const node = await createInboxApp(ctx);
      apps.push(node);
      const outcomes: unknown[] = [];
      node.probe.behaviour = async (message, { claim }) => {
        await ctx.dataSource.transaction(async (manager) => {
          await claim.fenced(manager, (m) => m.query(insert(), [message.id, 'T']));
        });
        await claim.fenced({} as never, async () => undefined).catch((e: unknown) => outcomes.push(e));
      };
      await node.acceptor.accept({ id: 'tx', type: ORDER, payload: 1 });
      await node.delivery.deliverDue();
      expect(await rows()).toEqual(['tx:T']);
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]).toBeInstanceOf(InvalidFencedManagerError);
      expect((outcomes[0] as InvalidFencedManagerError).code).toBe('HOLDFAST_INBOX_INVALID_FENCED_MANAGER');
    });

    it('a node frozen (SIGSTOP) mid-handler comes back after another node delivered the message: its late write is refused', async () => {
      const mode = ctx.db === 'sqlite' ? 'leader' : 'competing';
      const sqliteFile = ctx.db === 'sqlite' ? String(ctx.dataSource.options.database) : '';
      const child = forkTs(join(__dirname, 'workers/fenced-worker.ts'), [
        ctx.db,
        ctx.prefix,
        sqliteFile,
        mode,
      ]);
      let stopped = false;
      try {
        await waitForMessage(child, (m: { t?: string }) => m.t === 'ready', 60_000);
        const started = waitForMessage<{ t: string; token: number }>(child, (m) => m.t === 'started', 30_000);
        child.send({ t: 'accept', id: 'frozen' });
        const { token: frozenToken } = await started;
        child.kill('SIGSTOP');
        stopped = true;

        // Another node takes over once the frozen node's lease (and, on SQLite, its leadership) ran out.
        const b = await createInboxApp(
          ctx,
          { cluster: mode, pollInterval: '100ms', visibilityTimeout: '2s', schema: 'check' },
          { waitForLeadership: false },
        );
        apps.push(b);
        let secondToken = NaN;
        b.probe.behaviour = async (message, { claim }) => {
          secondToken = claim.token;
          await claim.fenced(ctx.dataSource, (m) => m.query(insert(), [message.id, 'B']));
        };
        b.probe.calls.length = 0;
        await waitUntil(async () => (await rows()).includes('frozen:B'), {
          timeout: 90_000,
          message: 'the second delivery and its write',
        });
        expect(secondToken).toBeGreaterThan(frozenToken);

        // The frozen node wakes up and writes, late.
        const answer = waitForMessage<{ t: string; code?: string; name?: string }>(
          child,
          (m) => m.t === 'refused' || m.t === 'wrote',
          30_000,
        );
        child.kill('SIGCONT');
        stopped = false;
        child.send({ t: 'write' });
        const result = await answer;
        expect(result).toMatchObject({
          t: 'refused',
          name: 'InboxDeliveryFencedError',
          code: 'HOLDFAST_INBOX_DELIVERY_FENCED',
        });
        expect(await rows()).toEqual(['frozen:B']);
      } finally {
        if (stopped) child.kill('SIGCONT');
        child.send({ t: 'stop' });
        await waitForExit(child, 20_000);
      }
    }, 180_000);
  },
  { tag: 'fence', tables: ['FENCE_LOG', 'COR_MESSAGE', 'HOLDFAST_INBOX_LEASE'] },
);
