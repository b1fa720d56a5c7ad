import type { CanActivate, ExecutionContext, INestApplication, LoggerService } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { describeEachDatabase, type TestDatabaseContext } from '@holdfast/testing';
import { InboxModule, MessageAcceptor, MessageManagement, inboxTable } from '@holdfast/inbox';
import { HoldfastDashboardModule, type HoldfastDashboardExtras } from '../src';

const MAX_RETRIES = 1;
const ACTION = { 'x-holdfast-request': '1' };

/** Every line the application logs, with its level and context. */
class CapturingLogger implements LoggerService {
  readonly lines: { level: string; message: string; context?: string }[] = [];
  private add(level: string, message: unknown, context?: unknown): void {
    this.lines.push({ level, message: String(message), context: context as string | undefined });
  }
  log(message: unknown, context?: unknown) {
    this.add('log', message, context);
  }
  warn(message: unknown, context?: unknown) {
    this.add('warn', message, context);
  }
  error(message: unknown, _trace?: unknown, context?: unknown) {
    this.add('error', message, context);
  }
  debug(message: unknown, context?: unknown) {
    this.add('debug', message, context);
  }
  verbose(message: unknown, context?: unknown) {
    this.add('verbose', message, context);
  }
  audit(): string[] {
    return this.lines
      .filter((l) => l.context === 'HoldfastDashboardAudit')
      .map((l) => `${l.level} ${l.message}`);
  }
}

/** A guard that lets everyone act and names them as Passport does (`request.user`), from a header. */
const namingGuard: CanActivate = {
  canActivate(context: ExecutionContext) {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string>; user?: unknown }>();
    if (req.headers['x-user']) req.user = { id: 7, username: req.headers['x-user'] };
    return true;
  },
};

async function dashboardApp(
  ctx: TestDatabaseContext,
  adapter: 'express' | 'fastify',
  {
    extras = {},
    logger = false,
    prefix,
  }: { extras?: HoldfastDashboardExtras; logger?: LoggerService | false; prefix?: string } = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      InboxModule.forRoot({
        dataSource: ctx.dataSource,
        tablePrefix: ctx.prefix,
        schema: 'create',
        deliver: false,
        cleanupInterval: '1h',
        retry: { maxRetries: MAX_RETRIES },
      }),
      HoldfastDashboardModule.forRoot({ guard: namingGuard, ...extras }),
    ],
  }).compile();
  const app =
    adapter === 'express'
      ? moduleRef.createNestApplication({ logger })
      : moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger });
  if (prefix) app.setGlobalPrefix(prefix);
  await app.init();
  if (adapter === 'fastify') await (app as NestFastifyApplication).getHttpAdapter().getInstance().ready();
  return app;
}

async function parked(app: INestApplication, ...ids: string[]): Promise<void> {
  for (const id of ids) {
    await app.get(MessageAcceptor).accept({ id, type: { namespace: 'op', name: 'note' }, payload: {} });
    await app.get(MessageManagement).setRetries(id, MAX_RETRIES);
  }
}

/**
 * What an operator meets at the dashboard's edges: its URL with a trailing slash, a bulk request
 * over the limit, and the audit trail of the actions taken.
 */
describeEachDatabase(
  'the dashboard at its edges',
  (ctx) => {
    it.each(['express', 'fastify'] as const)(
      'answers <path>/ as <path> on %s: a redirect to the page, kept relative (a proxy prefix stays)',
      async (adapter) => {
        for (const [path, prefix] of [
          ['/holdfast', ''],
          ['/ops/dash', ''],
          ['/holdfast', 'admin'],
        ]) {
          const app = await dashboardApp(ctx, adapter, { extras: { path }, prefix });
          try {
            const page = `${prefix ? `/${prefix}` : ''}${path}`;
            const last = path.split('/').pop();
            const http = () => request(app.getHttpServer());
            const where = { adapter, page };
            // Fastify answered 404 here, Express the page.
            const slashed = await http().get(`${page}/`);
            expect({ ...where, status: slashed.status, location: slashed.headers.location }).toEqual({
              ...where,
              status: 301,
              location: `../${last}`,
            });
            const query = await http().get(`${page}/?inbox=default`);
            expect(query.headers.location).toBe(`../${last}?inbox=default`);
            // Where the redirect leads: the page itself.
            const target = new URL(slashed.headers.location, `http://host${page}/`).pathname;
            expect(target).toBe(page);
            const html = await http().get(target);
            expect({ ...where, status: html.status }).toEqual({ ...where, status: 200 });
            expect(html.text).toContain('function render(state)');
            await http().get(`${page}/api/state`).expect(200);
          } finally {
            await app.close();
          }
        }
      },
    );

    it('refuses 1,001 ids with a short 400 that names the count and echoes three of them', async () => {
      const app = await dashboardApp(ctx, 'express');
      try {
        await parked(app, 'big-1');
        const ids = [
          'big-1',
          ...Array.from({ length: 1000 }, (_, i) => `message-id-${String(i).padStart(6, '0')}`),
        ];
        const res = await request(app.getHttpServer())
          .post('/holdfast/api/inbox/bulk')
          .set(ACTION)
          .send({ action: 'delete', ids });
        expect(res.status).toBe(400);
        // It echoed every id before: 41 kB for an answer that says "too many".
        expect(res.text.length).toBeLessThan(400);
        expect(res.body.message).toBe(
          'Holdfast dashboard: ids ["big-1", "message-id-000000", "message-id-000001", … (1001 items)] ' +
            'must be a list of 1 to 1000 message ids.',
        );
        expect((await app.get(MessageManagement).get('big-1'))?.status).toBe('parked');
        // Long values are cut too: an action, or a refused list of ids of 10,000 characters each.
        for (const body of [
          { action: 'x'.repeat(5000), ids: ['big-1'] },
          { action: 'delete', ids: ['a', 'b', 'c', 'd'].map((c) => c.repeat(10_000)).concat([42 as never]) },
        ]) {
          const long = await request(app.getHttpServer())
            .post('/holdfast/api/inbox/bulk')
            .set(ACTION)
            .send(body);
          expect(long.status).toBe(400);
          expect(long.text.length).toBeLessThan(400);
        }
      } finally {
        await app.close();
      }
    });

    it("logs each admin action at log level: the guard's user and address, what, how many, which ids", async () => {
      const logger = new CapturingLogger();
      const app = await dashboardApp(ctx, 'express', { logger });
      try {
        await parked(app, 'au-1', 'au-2', 'au-3');
        const act = (path: string, body: object, user?: string) =>
          request(app.getHttpServer())
            .post(`/holdfast/api/inbox/${path}`)
            .set({ ...ACTION, ...(user ? { 'x-user': user } : {}) })
            .send(body);
        await act('retry', { id: 'au-1' }, 'alice').expect(200);
        await act('bulk', { action: 'delete', ids: ['au-2', 'au-3', 'nope'] }, 'bob').expect(200);
        await act('resume', { id: 'au-1' }, 'alice').expect(200, {
          id: 'au-1',
          action: 'resume',
          done: false,
        });
        await act('delete', { id: 'nope' }, 'alice').expect(404);
        await act('pause', { id: 'au-1' }).expect(200);
        // The client's address as Express gives it (IPv4, or IPv4 mapped into IPv6).
        const audit = logger.audit().map((line) => line.replace(/ \((::ffff:)?127\.0\.0\.1\) /, ' (local) '));
        expect(audit).toEqual([
          "log alice (local) retry 1 of 1 message(s) in inbox 'default': au-1",
          "log bob (local) delete 2 of 3 message(s) in inbox 'default': au-2, au-3",
          "log alice (local) resume 0 of 1 message(s) in inbox 'default'",
          "log alice (local) delete 0 of 1 message(s) in inbox 'default'",
          "log an unnamed user (the guard set no request.user) (local) pause 1 of 1 message(s) in inbox 'default': au-1",
        ]);
      } finally {
        await app.close();
      }
    });
  },
  { tables: [inboxTable()] },
);
