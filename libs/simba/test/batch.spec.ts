import type { INestApplicationContext } from '@nestjs/common';
import { MutexContendServiceFactory, type MutexContendService } from '../src';
import {
  createSimbaApp,
  describeEachSimbaTable,
  freshMutex,
  RecordingContender,
  waitUntil,
} from './simba-test.support';
import { statement } from '@holdfast/core/kit';

describeEachSimbaTable('one instance, many mutexes, one loop', (ctx) => {
  let app: INestApplicationContext;
  const services: MutexContendService[] = [];

  beforeAll(async () => {
    app = await createSimbaApp(ctx, { ttl: '1s', transition: '1s', standbyPoll: '100ms' });
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => (s.status === 'RUNNING' ? s.stop() : undefined)));
    await app?.close();
  });

  it('contenders with their own ids on 40 mutexes each own theirs, rows name each owner, renewals keep it', async () => {
    const factory = app.get(MutexContendServiceFactory);
    const contenders = Array.from({ length: 40 }, () => new RecordingContender(freshMutex('many')));
    // A rival per mutex in the same instance: one statement names one owner per row.
    const rivals = contenders.map((c) => new RecordingContender(c.mutex));
    for (const c of [...contenders, ...rivals]) services.push(factory.createMutexContendService(c));
    services.forEach((s) => s.start());
    await waitUntil(
      () => contenders.every((c, i) => c.count('acquired') + rivals[i].count('acquired') === 1),
      10_000,
      'every mutex owned once',
    );
    const owners = contenders.map((c, i) => (c.count('acquired') ? c : rivals[i]));
    const d = ctx.sql.dialect;
    const rows = await ctx.sql.query<{ mutex: string; owner_id: string }>(
      statement(
        `SELECT mutex AS mutex, owner_id AS owner_id FROM ${ctx.prefix}simba_mutex WHERE mutex IN (${d.placeholders(40)})`,
        contenders.map((c) => c.mutex),
      ),
    );
    const byMutex = new Map(rows.map((r) => [r.mutex, String(r.owner_id).trimEnd()]));
    expect(owners.map((o) => byMutex.get(o.mutex))).toEqual(owners.map((o) => o.contenderId));
    await new Promise((r) => setTimeout(r, 2_500)); // two renewals
    expect(contenders.every((c, i) => c.count('released') + rivals[i].count('released') === 0)).toBe(true);
    expect(services.filter((s) => s.isOwner)).toHaveLength(40);
  });
});
