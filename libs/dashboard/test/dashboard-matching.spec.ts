import type { CanActivate, ExecutionContext, INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { describeEachDatabase } from '@holdfast/testing';
import { InboxModule, MessageAcceptor, MessageManagement, INBOX_TABLES } from '@holdfast/inbox';
import { HoldfastDashboardModule } from '../src';
import { statement } from '@holdfast/core/kit';

const MAX_RETRIES = 1;
const ACTION = { 'x-holdfast-request': '1', 'x-user': 'alice' };
/** More parked messages of one type than one bulk request of ids may name (1000). */
const NOTES = 1_005;

/** The audit lines the application logs. */
class AuditLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown, context?: unknown) {
    if (context === 'HoldfastDashboardAudit') this.lines.push(`log ${String(message)}`);
  }
  warn(message: unknown, context?: unknown) {
    if (context === 'HoldfastDashboardAudit') this.lines.push(`warn ${String(message)}`);
  }
  error() {}
  debug() {}
  verbose() {}
}

/** Lets everyone act and names them as Passport does (`request.user`), from a header. */
const namingGuard: CanActivate = {
  canActivate(context: ExecutionContext) {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string>; user?: unknown }>();
    if (req.headers['x-user']) req.user = { username: req.headers['x-user'] };
    return true;
  },
};

describeEachDatabase(
  'the dashboard acts on everything a filter matches',
  (ctx) => {
    let app: INestApplication;
    const logger = new AuditLogger();
    const http = () => request(app.getHttpServer());

    beforeAll(async () => {
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
          HoldfastDashboardModule.forRoot({ guard: namingGuard }),
        ],
      }).compile();
      app = moduleRef.createNestApplication({ logger });
      await app.init();
      const acceptor = app.get(MessageAcceptor);
      const management = app.get(MessageManagement);
      const park = async (id: string, name: string) => {
        await acceptor.accept({ id, type: { namespace: 'op', name }, payload: {} });
        await management.setRetries(id, MAX_RETRIES);
      };
      for (let i = 0; i < NOTES; i++) await park(`note-${String(i).padStart(5, '0')}`, 'note');
      await park('other-1', 'other');
      await acceptor.accept({ id: 'note-due', type: { namespace: 'op', name: 'note' }, payload: {} });
    }, 300_000);

    afterAll(async () => {
      await app?.close();
    });

    const listed = async (status: string, type: string) =>
      (await http().get('/holdfast/api/inbox/messages').query({ status, type, limit: 1 }).expect(200)).body
        .total as number;

    it('refuses a bad filter with a 400 naming it, and ids beside a filter', async () => {
      for (const [body, named] of [
        [{ action: 'delete', matching: { status: 'gone' } }, 'matching.status'],
        [{ action: 'delete', matching: 'parked' }, 'matching'],
        [{ action: 'delete', matching: { status: 'parked', type: 7 } }, 'matching.type'],
        [{ action: 'delete', matching: { status: 'parked' }, ids: ['note-00001'] }, 'ids'],
      ] as const) {
        const res = await http().post('/holdfast/api/inbox/bulk').set(ACTION).send(body).expect(400);
        expect(res.body.message).toContain(named);
      }
      expect(await listed('parked', 'op:note')).toBe(NOTES);
    });

    it('deletes every parked message of a type, past the 1000 ids one request may name, audited with the user', async () => {
      expect(await listed('parked', 'op:note')).toBe(NOTES);
      const res = await http()
        .post('/holdfast/api/inbox/bulk')
        .set(ACTION)
        .send({ action: 'delete', matching: { status: 'parked', type: 'op:note' } })
        .expect(200);
      expect(res.body.done).toHaveLength(NOTES);
      expect(res.body.skipped).toEqual([]);
      expect(await listed('parked', 'op:note')).toBe(0);
      // Another type, and the due one of the same type, are not matched.
      expect(await listed('parked', 'op:other')).toBe(1);
      expect(await listed('due', 'op:note')).toBe(1);
      const [row] = await ctx.sql.query<{ n: unknown }>(
        statement(`SELECT COUNT(*) AS n FROM ${ctx.prefix}${INBOX_TABLES.message.name}`),
      );
      expect(Number(row.n)).toBe(2);
      expect(logger.lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^log alice \\(.+\\) delete \\(matching status parked, type op:note\\) ${NOTES} of ${NOTES} message\\(s\\) in inbox 'default': note-00000, .* and ${NOTES - 20} more$`,
          ),
        ),
      ]);
    });

    it('acts on every type without one, in the status given', async () => {
      const res = await http()
        .post('/holdfast/api/inbox/bulk')
        .set(ACTION)
        .send({ action: 'pause', matching: { status: 'due' } })
        .expect(200);
      expect(res.body.done).toEqual(['note-due']);
      expect(await listed('paused', 'op:note')).toBe(1);
    });
  },
  { tables: [INBOX_TABLES.message.name, 'HOLDFAST_INBOX_LEASE', 'HOLDFAST_INBOX_GROUP'] },
);
