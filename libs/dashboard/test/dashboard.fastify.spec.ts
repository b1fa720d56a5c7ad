import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { describeEachDatabase } from '@holdfast/testing';
import { InboxModule, MessageAcceptor, MessageManagement, inboxTable } from '@holdfast/inbox';
import { HoldfastDashboardModule } from '../src';

const MAX_RETRIES = 1;

/**
 * The dashboard on Nest's Fastify adapter: the same routes, guards and answers as on Express
 * (the page, the state, actions only as JSON with X-Holdfast-Request).
 */
describeEachDatabase(
  'HoldfastDashboardModule on Fastify',
  (ctx) => {
    let app: NestFastifyApplication;
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
          HoldfastDashboardModule.forRoot({ guard: { canActivate: () => true }, guardReads: true }),
        ],
      }).compile();
      app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
      await app.init();
      await app.getHttpAdapter().getInstance().ready();
    });
    afterAll(() => app?.close());
    const http = () => request(app.getHttpServer());

    it('serves the page and the state, and acts only on JSON with X-Holdfast-Request', async () => {
      const page = await http().get('/holdfast').expect(200);
      expect(page.headers['content-type']).toContain('text/html');
      expect(page.text).toContain('function render(state)');

      await app.get(MessageAcceptor).accept({ id: 'fy-1', type: { name: 'fastify' }, payload: {} });
      await app.get(MessageManagement).setRetries('fy-1', MAX_RETRIES);
      const { body } = await http().get('/holdfast/api/state').expect(200);
      expect(body.inbox.parked.map((m: { id: string }) => m.id)).toEqual(['fy-1']);
      expect(body.health.inbox.status).toBe('up');

      await http().post('/holdfast/api/inbox/retry').type('form').send({ id: 'fy-1' }).expect(415);
      await http().post('/holdfast/api/inbox/retry').send({ id: 'fy-1' }).expect(403);
      expect((await app.get(MessageManagement).get('fy-1'))?.status).toBe('parked');
      await http()
        .post('/holdfast/api/inbox/retry')
        .set('x-holdfast-request', '1')
        .send({ id: 'fy-1' })
        .expect(200, { id: 'fy-1', action: 'retry', done: true });
      expect((await app.get(MessageManagement).get('fy-1'))?.status).toBe('due');
      const page2 = await http().get('/holdfast/api/inbox/messages?status=due').expect(200);
      expect(page2.body.messages.map((m: { id: string }) => m.id)).toEqual(['fy-1']);
    });

    it('takes bulk actions and searches by type through Fastify as well', async () => {
      for (const id of ['fy-b1', 'fy-b2']) {
        await app.get(MessageAcceptor).accept({ id, type: { namespace: 'fy', name: 'bulk' }, payload: {} });
        await app.get(MessageManagement).setRetries(id, MAX_RETRIES);
      }
      const found = await http().get('/holdfast/api/inbox/messages?status=parked&type=fy:bulk').expect(200);
      expect(found.body).toEqual({ total: 2, messages: expect.any(Array) });
      const bulk = { action: 'delete', ids: ['fy-b1', 'fy-b2'] };
      await http().post('/holdfast/api/inbox/bulk').send(bulk).expect(403);
      await http()
        .post('/holdfast/api/inbox/bulk')
        .set('x-holdfast-request', '1')
        .send(bulk)
        .expect(200, { action: 'delete', done: ['fy-b1', 'fy-b2'], skipped: [] });
      expect(await app.get(MessageManagement).get('fy-b1')).toBeUndefined();
    });
  },
  { tables: [inboxTable()] },
);
