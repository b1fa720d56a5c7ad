import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { Script } from 'node:vm';
import { sqlClientFor, tableName, statement } from '@holdfast/core/kit';
import { describeEachDatabase, waitUntil, type TestDatabaseContext } from '@holdfast/testing';
import { Failover, FailoverModule } from '@holdfast/failover';
import {
  InboxModule,
  InjectMessageAcceptor,
  InjectMessageManagement,
  MessageAcceptor,
  MessageManagement,
  type InboxModuleOptions,
  inboxTable,
} from '@holdfast/inbox';
import { LockerModule, ScheduledLock, ScheduledLockModule, lockTable } from '@holdfast/locker';
import { SimbaModule, simbaTable } from '@holdfast/simba';
import { HoldfastDashboardModule, type HoldfastDashboardExtras, type HoldfastDashboardOptions } from '../src';

/** Lets a request through when it carries `x-admin: yes`; counts what it was asked. */
@Injectable()
class HeaderGuard implements CanActivate {
  static asked = 0;
  canActivate(context: ExecutionContext): boolean {
    HeaderGuard.asked++;
    return context.switchToHttp().getRequest().headers['x-admin'] === 'yes';
  }
}

/** The header the page sends with every action, which a cross-site form cannot. */
const ACTION_HEADER = { 'x-holdfast-request': '1' };

const TYPE = { namespace: 'dash', name: 'note' };
const MAX_RETRIES = 2;

/**
 * An inbox the test drives itself: it accepts and manages, and never delivers (an accept wakes a
 * delivering node at once, whatever its poll interval, and a message without a handler would then
 * be retried under the test's feet).
 */
function idleInbox(ctx: TestDatabaseContext, tablePrefix = ctx.prefix): InboxModuleOptions {
  return {
    dataSource: ctx.dataSource,
    tablePrefix,
    schema: 'create',
    deliver: false,
    cleanupInterval: '1h',
    retry: { maxRetries: MAX_RETRIES },
  };
}

/** A @ScheduledLock job the test runs by calling it (no cron: nothing ticks under the test's feet). */
@Injectable()
class Reports {
  @ScheduledLock({ name: 'dash-report', lockAtMostFor: '1m', lockAtLeastFor: '0s' })
  async build(): Promise<void> {}
}

/** The table prefix of the named inbox 'audit' beside the default one. */
const AUDIT = 'audit_';

/**
 * Both inboxes' services as an application injects them (by class for the default inbox, by name
 * for 'audit'); `app.get(MessageAcceptor)` would take whichever module Nest searches first.
 */
@Injectable()
class BothInboxes {
  constructor(
    readonly acceptor: MessageAcceptor,
    readonly management: MessageManagement,
    @InjectMessageAcceptor('audit') readonly auditAcceptor: MessageAcceptor,
    @InjectMessageManagement('audit') readonly auditManagement: MessageManagement,
  ) {}

  of(inbox?: 'audit'): { acceptor: MessageAcceptor; management: MessageManagement } {
    return inbox
      ? { acceptor: this.auditAcceptor, management: this.auditManagement }
      : { acceptor: this.acceptor, management: this.management };
  }
}

async function inboxApp(
  ctx: TestDatabaseContext,
  extras: HoldfastDashboardExtras & HoldfastDashboardOptions,
  { locker = false, audit = false, scheduled = false } = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      SimbaModule.forRoot({ dataSource: ctx.dataSource, tablePrefix: ctx.prefix, schema: 'create' }),
      InboxModule.forRoot(idleInbox(ctx)),
      ...(audit ? [InboxModule.forRoot({ ...idleInbox(ctx, ctx.prefix + AUDIT), name: 'audit' })] : []),
      ...(locker
        ? [
            LockerModule.forRoot({
              dataSource: ctx.dataSource,
              tablePrefix: ctx.prefix,
              schema: 'create',
              locker: { type: 'lease-database' },
              lockName: 'dash-lock',
              lockAcquireSleepInterval: '3s',
              lockKeepAlivePeriod: '1s',
              startup: 'background',
            }),
          ]
        : []),
      ...(scheduled
        ? [
            ScheduledLockModule.forRoot({
              dataSource: ctx.dataSource,
              tablePrefix: ctx.prefix,
              schema: 'create',
            }),
          ]
        : []),
      HoldfastDashboardModule.forRoot({ ...extras, pollInterval: '1s' }),
    ],
    providers: [...(audit ? [BothInboxes] : []), ...(scheduled ? [Reports] : [])],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  return app.init();
}

/** Writes `text` as a message's stored error, as a failed delivery stores its error and stack. */
async function storeError(ctx: TestDatabaseContext, id: string, text: string): Promise<void> {
  const sql = sqlClientFor(ctx.dataSource);
  const p = (i: number) => sql.dialect.placeholder(i);
  await sql.query(
    statement(`UPDATE ${tableName(ctx.prefix, inboxTable())} SET ERROR = ${p(1)} WHERE ID = ${p(2)}`, [
      text,
      id,
    ]),
  );
}

/** A stored message that exhausted its retries: parked, with an error. */
async function parkedMessage(
  app: INestApplication,
  id: string,
  inbox: { acceptor: MessageAcceptor; management: MessageManagement } = {
    acceptor: app.get(MessageAcceptor),
    management: app.get(MessageManagement),
  },
): Promise<void> {
  await inbox.acceptor.accept({ id, type: TYPE, payload: { n: 1 } });
  await inbox.management.setRetries(id, MAX_RETRIES);
}

describeEachDatabase(
  'HoldfastDashboardModule over HTTP',
  (ctx) => {
    describe('without a guard (read-only), at the default path', () => {
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, {}, { locker: true });
      });
      afterAll(() => app?.close());

      it('serves the page and the state of the modules imported, and only those', async () => {
        const page = await request(app.getHttpServer()).get('/holdfast').expect(200);
        expect(page.headers['content-type']).toContain('text/html');
        expect(page.text).toContain('<title>Holdfast</title>');
        expect(page.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
        // The inline scripts parse (the e2e tests never run them; the browser test does): morphdom,
        // inlined from its package, then the page's own.
        const scripts = [...page.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, script]) => script);
        expect(scripts).toHaveLength(2);
        expect(scripts[0]).toContain('morphdom');
        expect(scripts[1]).toContain('function render(state)');
        for (const script of scripts) expect(() => new Script(script)).not.toThrow();

        await parkedMessage(app, 'ro-1');
        const { body } = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
        expect(body.actions).toBe(false);
        expect(body.pollIntervalMs).toBe(1000);
        expect(
          Object.keys(body)
            .filter((k) => ['failover', 'simba', 'locker', 'inbox'].includes(k))
            .sort(),
        ).toEqual(['inbox', 'locker', 'simba']);
        expect(body.inbox.counts).toMatchObject({ parked: 1, total: 1 });
        expect(body.inbox.parked).toEqual([
          expect.objectContaining({ id: 'ro-1', type: 'dash:note', retries: 2 }),
        ]);
        expect(Array.isArray(body.simba.mutexes)).toBe(true);
      });

      it('shows the locker: master, holder and the lock rows of HOLDFAST_LOCK', async () => {
        const state = await waitUntil(
          async () => {
            const res = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
            return res.body.locker?.role === 'master' ? res.body : undefined;
          },
          { timeout: 30_000, message: 'the locker to be master' },
        );
        expect(state.locker).toMatchObject({ lockName: 'dash-lock', holder: state.locker.instanceId });
        expect(state.locker.lastKeepAlive).toEqual(expect.any(String));
        expect(state.locker.locks).toEqual([
          expect.objectContaining({ lock: 'dash-lock', master: state.locker.instanceId, masterHere: true }),
        ]);
      });

      it('answers every action 403 and leaves the message as it was', async () => {
        for (const action of ['retry', 'pause', 'resume', 'delete']) {
          await request(app.getHttpServer())
            .post(`/holdfast/api/inbox/${action}`)
            .set(ACTION_HEADER)
            .set('x-admin', 'yes')
            .send({ id: 'ro-1' })
            .expect(403);
        }
        expect((await app.get(MessageManagement).get('ro-1'))?.status).toBe('parked');
      });
    });

    describe('with a guard class, at /ops/dash', () => {
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, { path: '/ops/dash/', guard: HeaderGuard });
      });
      afterAll(() => app?.close());
      const post = (action: string, id: unknown, admin = true) => {
        const r = request(app.getHttpServer()).post(`/ops/dash/api/inbox/${action}`).set(ACTION_HEADER);
        return (admin ? r.set('x-admin', 'yes') : r).send({ id });
      };
      const status = async (id: string) => (await app.get(MessageManagement).get(id))?.status;

      it('is served at the path given and not at the default one', async () => {
        await request(app.getHttpServer()).get('/holdfast').expect(404);
        await request(app.getHttpServer()).get('/ops/dash').expect(200);
        const { body } = await request(app.getHttpServer()).get('/ops/dash/api/state').expect(200);
        expect(body.actions).toBe(true);
      });

      it('answers 403 when the guard refuses, and acts when it allows', async () => {
        await parkedMessage(app, 'rw-1');
        const asked = HeaderGuard.asked;
        await post('retry', 'rw-1', false).expect(403);
        expect(HeaderGuard.asked).toBe(asked + 1);
        expect(await status('rw-1')).toBe('parked');

        await post('retry', 'rw-1').expect(200, { id: 'rw-1', action: 'retry', done: true });
        expect(await status('rw-1')).toBe('due');
        // pause and resume a message that is due: it is due again after.
        await app.get(MessageAcceptor).accept({ id: 'rw-3', type: TYPE, payload: { n: 3 } });
        await post('pause', 'rw-3').expect(200);
        expect(await status('rw-3')).toBe('paused');
        const paused = (await request(app.getHttpServer()).get('/ops/dash/api/state')).body.inbox.paused;
        expect(paused.map((m: { id: string }) => m.id)).toEqual(['rw-3']);
        await post('resume', 'rw-3').expect(200, { id: 'rw-3', action: 'resume', done: true });
        expect(await status('rw-3')).toBe('due');
        await post('delete', 'rw-1').expect(200);
        expect(await status('rw-1')).toBeUndefined();
      });

      it('refuses an unknown action or a missing id (400) and an unknown message (404)', async () => {
        await post('explode', 'rw-2').expect(400);
        await post('retry', '').expect(400);
        await post('retry', 'no-such-message').expect(404);
        await post('delete', 'no-such-message').expect(404);
      });
    });

    describe('safe by default: actions only as JSON with X-Holdfast-Request', () => {
      // A guard that lets every request through, as one relying on a session cookie would let a
      // cross-site request through: the dashboard itself must refuse what a foreign page can send.
      const cookieGuard = { asked: 0, canActivate: () => ++cookieGuard.asked > 0 };
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, { guard: cookieGuard });
      });
      afterAll(() => app?.close());
      const status = async (id: string) => (await app.get(MessageManagement).get(id))?.status;

      it('refuses a form-encoded or text/plain POST (415) and a JSON POST without the header (403)', async () => {
        await parkedMessage(app, 'csrf-1');
        const asked = cookieGuard.asked;
        // What a cross-site <form method=post> can send: urlencoded, multipart or text/plain.
        await request(app.getHttpServer())
          .post('/holdfast/api/inbox/delete')
          .type('form')
          .send({ id: 'csrf-1' })
          .expect(415);
        await request(app.getHttpServer())
          .post('/holdfast/api/inbox/delete')
          .set(ACTION_HEADER)
          .type('form')
          .send({ id: 'csrf-1' })
          .expect(415);
        await request(app.getHttpServer())
          .post('/holdfast/api/inbox/delete')
          .set('content-type', 'text/plain')
          .send(JSON.stringify({ id: 'csrf-1' }))
          .expect(415);
        await request(app.getHttpServer())
          .post('/holdfast/api/inbox/delete')
          .field('id', 'csrf-1')
          .expect(415);
        const res = await request(app.getHttpServer())
          .post('/holdfast/api/inbox/delete')
          .send({ id: 'csrf-1' })
          .expect(403);
        expect(res.body.message).toContain('x-holdfast-request');
        // Refused before the application's guard is asked, and nothing changed.
        expect(cookieGuard.asked).toBe(asked);
        expect(await status('csrf-1')).toBe('parked');

        await request(app.getHttpServer())
          .post('/holdfast/api/inbox/delete')
          .set(ACTION_HEADER)
          .send({ id: 'csrf-1' })
          .expect(200, { id: 'csrf-1', action: 'delete', done: true });
        expect(cookieGuard.asked).toBe(asked + 1);
        expect(await status('csrf-1')).toBeUndefined();
      });

      it('shows the first line of a stored error, with absolute paths cut to file names', async () => {
        await parkedMessage(app, 'stack-1');
        const stack = [
          "Error: ENOENT: no such file or directory, open '/srv/billing/config/rates.json'",
          '    at InvoiceHandler.handle (/srv/billing/dist/invoice.handler.js:42:11)',
          '    at C:\\apps\\billing\\dist\\main.js:7:3',
        ].join('\n');
        await storeError(ctx, 'stack-1', stack);
        const { body } = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
        const shown = body.inbox.parked.find((m: { id: string }) => m.id === 'stack-1');
        expect(shown.error).toBe("Error: ENOENT: no such file or directory, open 'rates.json'");
        expect(JSON.stringify(body)).not.toContain('/srv/billing');
      });
    });

    describe('errorDetails: true', () => {
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, { errorDetails: true });
      });
      afterAll(() => app?.close());

      it('shows a stored error whole when the application opts in', async () => {
        await parkedMessage(app, 'stack-2');
        const stack =
          'Error: rates missing\n    at InvoiceHandler.handle (/srv/billing/dist/invoice.handler.js:42:11)';
        await storeError(ctx, 'stack-2', stack);
        const { body } = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
        expect(body.inbox.parked.find((m: { id: string }) => m.id === 'stack-2').error).toBe(stack);
      });
    });

    describe('guardReads: the guard also stands on the page and the state', () => {
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, { guard: HeaderGuard, guardReads: true });
      });
      afterAll(() => app?.close());

      it('answers 403 to a request the guard refuses and 200 to one it allows', async () => {
        await request(app.getHttpServer()).get('/holdfast').expect(403);
        await request(app.getHttpServer()).get('/holdfast/api/state').expect(403);
        await request(app.getHttpServer()).get('/holdfast').set('x-admin', 'yes').expect(200);
        const { body } = await request(app.getHttpServer())
          .get('/holdfast/api/state')
          .set('x-admin', 'yes')
          .expect(200);
        expect(body.actions).toBe(true);
      });
    });

    describe('paging, lookup by id, bulk actions, health and @ScheduledLock jobs', () => {
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, { guard: HeaderGuard, messageLimit: 2 }, { scheduled: true });
      });
      afterAll(() => app?.close());
      const http = () => request(app.getHttpServer());
      const bulk = (body: object, admin = true) => {
        const r = http().post('/holdfast/api/inbox/bulk').set(ACTION_HEADER);
        return (admin ? r.set('x-admin', 'yes') : r).send(body);
      };
      const ids = ['bulk-1', 'bulk-2', 'bulk-3'];

      it('pages through the parked messages and finds one by id', async () => {
        const before = (await app.get(MessageManagement).count()).parked;
        for (const id of ids) await parkedMessage(app, id);
        const first = await http().get('/holdfast/api/inbox/messages?status=parked').expect(200);
        // messageLimit is the default page size.
        expect(first.body.total).toBe(before + ids.length);
        expect(first.body.messages).toHaveLength(2);
        const all = await http()
          .get(`/holdfast/api/inbox/messages?status=parked&offset=0&limit=${before + ids.length}`)
          .expect(200);
        const second = await http()
          .get('/holdfast/api/inbox/messages?status=parked&offset=2&limit=2')
          .expect(200);
        expect(second.body.messages.map((m: { id: string }) => m.id)).toEqual(
          all.body.messages.slice(2, 4).map((m: { id: string }) => m.id),
        );
        const one = await http().get('/holdfast/api/inbox/messages?id=bulk-2').expect(200);
        expect(one.body).toEqual({
          total: 1,
          messages: [expect.objectContaining({ id: 'bulk-2', status: 'parked' })],
        });
        expect((await http().get('/holdfast/api/inbox/messages?id=nope').expect(200)).body).toEqual({
          total: 0,
          messages: [],
        });
        await http().get('/holdfast/api/inbox/messages?status=gone').expect(400);
        await http().get('/holdfast/api/inbox/messages?limit=0').expect(400);
        await http().get('/holdfast/api/inbox/messages?inbox=billing').expect(404);
      });

      it('lists the messages of one type in a status, paged, by its label or its name', async () => {
        const other = { namespace: 'dash', name: 'invoice' };
        const mine = ['ty-1', 'ty-2', 'ty-3'];
        for (const id of mine) {
          await app.get(MessageAcceptor).accept({ id, type: other, payload: {} });
          await app.get(MessageManagement).setRetries(id, MAX_RETRIES);
        }
        await parkedMessage(app, 'ty-note');
        await app.get(MessageAcceptor).accept({ id: 'ty-due', type: other, payload: {} });
        await app
          .get(MessageAcceptor)
          .accept({ id: 'ty-v2', type: { ...other, revision: '2' }, payload: {} });
        const ids = (body: { messages: Array<{ id: string }> }) => body.messages.map((m) => m.id).sort();

        const all = await http().get('/holdfast/api/inbox/messages?status=parked&type=dash:invoice&limit=10');
        expect(all.status).toBe(200);
        // Filtered and counted by the database: an exact total, no scan (and no `complete`).
        expect(all.body).toEqual({ total: 3, messages: expect.any(Array) });
        expect(ids(all.body)).toEqual(mine);
        // The one spelling of a type, as the holdfast command prints and reads it too.
        expect(all.body.messages.every((m: { type: string }) => m.type === 'dash:invoice')).toBe(true);
        // The name alone finds the same; messageLimit (2) is the page size; offset pages on.
        const first = await http().get('/holdfast/api/inbox/messages?status=parked&type=invoice').expect(200);
        expect(first.body.total).toBe(3);
        expect(first.body.messages).toHaveLength(2);
        const rest = await http()
          .get('/holdfast/api/inbox/messages?status=parked&type=invoice&offset=2&limit=2')
          .expect(200);
        expect(ids({ messages: [...first.body.messages, ...rest.body.messages] })).toEqual(mine);
        // What a label leaves out is not filtered: without a revision, any; with one, that one.
        const due = await http().get('/holdfast/api/inbox/messages?status=due&type=dash:invoice').expect(200);
        expect(ids(due.body)).toEqual(['ty-due', 'ty-v2']);
        const v2 = await http()
          .get('/holdfast/api/inbox/messages?status=due&type=dash:invoice@2')
          .expect(200);
        expect(v2.body).toEqual({
          total: 1,
          messages: [expect.objectContaining({ id: 'ty-v2', type: 'dash:invoice@2' })],
        });
        const anyDue = await http().get('/holdfast/api/inbox/messages?status=due&type=invoice').expect(200);
        expect(anyDue.body.total).toBe(2);
        expect(ids(anyDue.body)).toEqual(['ty-due', 'ty-v2']);
        expect(
          (await http().get('/holdfast/api/inbox/messages?status=parked&type=dash:nothing').expect(200)).body,
        ).toMatchObject({ total: 0, messages: [] });
        await http().get('/holdfast/api/inbox/messages?type=').expect(400);
        await http().get('/holdfast/api/inbox/messages?type=invoice&id=ty-1').expect(400);
        for (const id of [...mine, 'ty-note', 'ty-due', 'ty-v2']) await app.get(MessageManagement).delete(id);
      });

      it("shows a message's payload to whom the guard lets through", async () => {
        await app.get(MessageAcceptor).accept({ id: 'pay-1', type: TYPE, payload: { n: 7, note: 'seven' } });
        await http().get('/holdfast/api/inbox/payload/pay-1').expect(403);
        const { body } = await http()
          .get('/holdfast/api/inbox/payload/pay-1')
          .set('x-admin', 'yes')
          .expect(200);
        expect(body).toEqual({ id: 'pay-1', encoding: 'json', payload: { n: 7, note: 'seven' } });
        await http().get('/holdfast/api/inbox/payload/nope').set('x-admin', 'yes').expect(404);
        await app.get(MessageManagement).delete('pay-1');
      });

      it('retries and deletes many messages at once, as guarded as one', async () => {
        await bulk({ action: 'retry', ids }, false).expect(403);
        await http()
          .post('/holdfast/api/inbox/bulk')
          .set('x-admin', 'yes')
          .type('form')
          .send({ action: 'retry', ids })
          .expect(415);
        await bulk({ action: 'retry', ids: [...ids, 'no-such'] }).expect(200, {
          action: 'retry',
          done: ids,
          skipped: ['no-such'],
        });
        for (const id of ids) expect((await app.get(MessageManagement).get(id))?.status).toBe('due');
        await bulk({ action: 'delete', ids }).expect(200, { action: 'delete', done: ids, skipped: [] });
        for (const id of ids) expect(await app.get(MessageManagement).get(id)).toBeUndefined();
        await bulk({ action: 'explode', ids }).expect(400);
        await bulk({ action: 'retry', ids: [] }).expect(400);
        await bulk({ action: 'retry', ids: [42] }).expect(400);
      });

      it("shows each module's health and the @ScheduledLock jobs with their last run and holder", async () => {
        await app.get(Reports).build();
        const { body } = await http().get('/holdfast/api/state').expect(200);
        // The modules this application imports (ScheduledLockModule without a LockerModule: no locker health).
        expect(Object.keys(body.health)).toEqual(['inbox', 'simba']);
        expect(body.health.inbox.status).toBe('up');
        expect(body.scheduled.jobs).toEqual([
          expect.objectContaining({
            name: 'dash-report',
            where: 'Reports.build',
            runs: 1,
            skips: 0,
            lastRunAt: expect.any(String),
            holderIsThisInstance: true,
          }),
        ]);
        expect(body.scheduled.jobs[0].holder.startsWith(body.scheduled.holderPrefix + ':')).toBe(true);
      });
    });

    describe('with a default and a named inbox', () => {
      let app: INestApplication;
      beforeAll(async () => {
        app = await inboxApp(ctx, { guard: HeaderGuard }, { audit: true });
      });
      afterAll(() => app?.close());
      const post = (action: string, body: object) =>
        request(app.getHttpServer())
          .post(`/holdfast/api/inbox/${action}`)
          .set(ACTION_HEADER)
          .set('x-admin', 'yes')
          .send(body);
      const inboxes = (inbox?: 'audit') => app.get(BothInboxes).of(inbox);
      const status = async (id: string, inbox?: 'audit') => (await inboxes(inbox).management.get(id))?.status;

      it('shows each inbox in its own section, with its own counts', async () => {
        // The default inbox's table is the one the suites above used: count what this test adds.
        const before = (await inboxes().management.count()).parked;
        await parkedMessage(app, 'main-1', inboxes());
        await parkedMessage(app, 'audit-1', inboxes('audit'));
        await parkedMessage(app, 'audit-2', inboxes('audit'));
        const { body } = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
        expect(body.inbox.counts.parked).toBe(before + 1);
        const parked = body.inbox.parked.map((m: { id: string }) => m.id);
        expect(parked).toContain('main-1');
        expect(parked).not.toContain('audit-1');
        expect(Object.keys(body.namedInboxes)).toEqual(['audit']);
        expect(body.namedInboxes.audit.counts).toMatchObject({ parked: 2, total: 2 });
        expect(body.namedInboxes.audit.parked.map((m: { id: string }) => m.id).sort()).toEqual([
          'audit-1',
          'audit-2',
        ]);
      });

      it('acts on the inbox the body names, and on the default one without a name', async () => {
        await post('retry', { id: 'audit-1', inbox: 'audit' }).expect(200, {
          id: 'audit-1',
          action: 'retry',
          done: true,
        });
        expect(await status('audit-1', 'audit')).toBe('due');
        expect(await status('main-1')).toBe('parked');
        // The default inbox does not hold audit-2: without a name the action misses it.
        await post('retry', { id: 'audit-2' }).expect(404);
        expect(await status('audit-2', 'audit')).toBe('parked');
        await post('retry', { id: 'main-1' }).expect(200);
        expect(await status('main-1')).toBe('due');
      });

      it('refuses an inbox name that is not a string (400) or that the application lacks (404)', async () => {
        await post('retry', { id: 'audit-2', inbox: 42 }).expect(400);
        await post('retry', { id: 'audit-2', inbox: '' }).expect(400);
        const res = await post('retry', { id: 'audit-2', inbox: 'billing' }).expect(404);
        expect(res.body.message).toContain("no inbox named 'billing'");
        expect(await status('audit-2', 'audit')).toBe('parked');
      });
    });
  },
  {
    tables: [inboxTable(), AUDIT + inboxTable(), simbaTable(), lockTable()],
  },
);

@Injectable()
class Quotes {
  down = false;
  @Failover({ name: 'quote', expiry: '1h' })
  async quote(symbol: string): Promise<{ symbol: string; price: number }> {
    if (this.down) throw new Error('quotes upstream is down');
    return { symbol, price: 42 };
  }
}

describe('HoldfastDashboardModule with failover only (memory store)', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        FailoverModule.forRoot({ store: { type: 'memory' }, cleanup: { enabled: false } }),
        HoldfastDashboardModule.forRoot({ guard: { canActivate: () => true } }),
      ],
      providers: [Quotes],
    }).compile();
    app = await moduleRef.createNestApplication({ logger: false }).init();
  });
  afterAll(() => app?.close());

  it('shows each failover with its entries, stale answers and last error; no inbox, simba or locker', async () => {
    const quotes = app.get(Quotes);
    await quotes.quote('ACME');
    quotes.down = true;
    await quotes.quote('ACME');
    // The store write is asynchronous: wait until the entry is in the store.
    const body = await waitUntil(
      async () => {
        const res = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
        return res.body.failover.failovers[0]?.liveEntries === 1 ? res.body : undefined;
      },
      { message: 'the stored quote' },
    );
    expect(body.inbox).toBeUndefined();
    expect(body.simba).toBeUndefined();
    expect(body.locker).toBeUndefined();
    expect(body.failover.failovers).toEqual([
      expect.objectContaining({
        name: 'quote',
        declaredOn: 'Quotes.quote',
        liveEntries: 1,
        staleServed: 1,
        lastError: expect.objectContaining({ message: 'quotes upstream is down' }),
      }),
    ]);
    // A guard allows actions, but with no inbox there is nothing to act on.
    await request(app.getHttpServer())
      .post('/holdfast/api/inbox/retry')
      .set(ACTION_HEADER)
      .send({ id: 'x' })
      .expect(404);
  });

  it('rejects a path that is not a URL path, a guard that is not one, and guardReads without a guard', () => {
    expect(() => HoldfastDashboardModule.forRoot({ path: 'holdfast' })).toThrow(
      expect.objectContaining({ code: 'HOLDFAST_DASHBOARD_INVALID_PATH' }),
    );
    expect(() => HoldfastDashboardModule.forRoot({ guard: {} as CanActivate })).toThrow(
      expect.objectContaining({ code: 'HOLDFAST_DASHBOARD_INVALID_GUARD' }),
    );
    expect(() => HoldfastDashboardModule.forRoot({ guardReads: true })).toThrow(
      expect.objectContaining({ code: 'HOLDFAST_DASHBOARD_INVALID_GUARD_READS' }),
    );
  });
});

@Injectable()
class Rankings {
  @Failover({ name: 'ranking', store: 'reports' })
  async ranking(id: string): Promise<{ id: string }> {
    return { id };
  }
}

describe('HoldfastDashboardModule beside a named FailoverModule', () => {
  it('shows the default failover store, not the named one registered after it', async () => {
    const memory = { store: { type: 'memory' as const }, cleanup: { enabled: false } };
    const moduleRef = await Test.createTestingModule({
      imports: [
        FailoverModule.forRoot(memory),
        FailoverModule.forRoot({ ...memory, name: 'reports' }),
        HoldfastDashboardModule.forRoot({ guard: { canActivate: () => true } }),
      ],
      providers: [Quotes, Rankings],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const res = await request(app.getHttpServer()).get('/holdfast/api/state').expect(200);
      expect(res.body.failover.failovers.map((f: { name: string }) => f.name)).toEqual(['quote']);
    } finally {
      await app.close();
    }
  });
});

class DashboardOptionsFactory {
  create() {
    return { title: 'From a class' };
  }
}

describe('HoldfastDashboardModule.forRootAsync', () => {
  it.each([
    ['useFactory', { useFactory: () => ({ title: 'From a factory' }) }, 'From a factory'],
    ['useClass', { useClass: DashboardOptionsFactory }, 'From a class'],
  ])('%s: options from the provider, path and guard as extras', async (_, variant, title) => {
    const moduleRef = await Test.createTestingModule({
      imports: [HoldfastDashboardModule.forRootAsync({ ...variant, path: '/async', guard: HeaderGuard })],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const page = await request(app.getHttpServer()).get('/async').expect(200);
      expect(page.text).toContain(`<title>${title}</title>`);
      const { body } = await request(app.getHttpServer()).get('/async/api/state').expect(200);
      expect(body).toMatchObject({ title, actions: true });
      expect(Object.keys(body)).not.toEqual(expect.arrayContaining(['inbox']));
      await request(app.getHttpServer())
        .post('/async/api/inbox/retry')
        .set(ACTION_HEADER)
        .send({ id: 'x' })
        .expect(403);
    } finally {
      await app.close();
    }
  });
});
