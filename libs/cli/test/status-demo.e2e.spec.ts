/**
 * `holdfast status` against a running demo (`npm start` as a real process on a SQLite file):
 * what the CLI reads from the tables matches what the demo's modules say over HTTP.
 */
import { tempSqliteFile } from '@holdfast/core/testing';
import { eventually, startDemo, type DemoProcess } from '../../../apps/demo/test/demo-process';
import type { HoldfastStatus } from '../src';
import { cli } from './cli-support';

describe('holdfast status against a running demo', () => {
  let demo: DemoProcess;
  let file: string;

  beforeAll(async () => {
    file = tempSqliteFile('cli-demo');
    demo = await startDemo(file);
  }, 60_000);

  afterAll(async () => {
    await demo?.stop();
  });

  it('shows the demo leader, its master, its inbox counts and its live failover entries', async () => {
    const simba = await eventually(
      async () => ((await demo.get('/simba')).body.isOwner ? (await demo.get('/simba')).body : undefined),
      30_000,
      'the demo to lead',
    );
    const locker = await eventually(
      async () =>
        (await demo.get('/locker')).body.role === 'master' ? (await demo.get('/locker')).body : undefined,
      30_000,
      'the demo to be master',
    );
    expect((await demo.get('/countries/FR')).status).toBe(200);
    expect((await demo.post('/inbox', { note: 'from the CLI test' })).status).toBe(202);
    // Settled: no message in flight, so the demo's counts and the CLI's are of the same rows.
    const inbox = await eventually(
      async () => {
        const body = (await demo.get('/inbox')).body;
        return body.handler.delivered > 0 && body.counts.due === 0 && body.counts.retrying === 0
          ? body
          : undefined;
      },
      30_000,
      'the note to be delivered',
    );

    // The demo stores failover answers write-behind: read until that write has landed.
    const status = await eventually(
      async () => {
        // The demo's InboxModule has retry.maxRetries 3 (apps/demo/src/inbox/inbox-demo.module.ts).
        const { code, stdout, stderr } = await cli(['status', '--json', '--max-retries', '3'], {
          DATABASE_URL: `sqlite:${file}`,
        });
        expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
        const read = JSON.parse(stdout) as HoldfastStatus;
        return (read.failover?.reduce((n, f) => n + f.liveEntries, 0) ?? 0) >= 1 ? read : undefined;
      },
      30_000,
      'the failover answer in the store',
    );

    const leader = status.owners?.find((m) => m.mutex === simba.mutex);
    expect(leader).toMatchObject({ owner: simba.owner, state: 'owned' });
    expect(leader!.fencingToken).toBeGreaterThanOrEqual(simba.fencingToken);
    expect(status.masters).toContainEqual(
      expect.objectContaining({ lock: locker.lockName, master: locker.holder ?? locker.instanceId }),
    );
    const { oldestDueAgeMs: _, maxRetries, byRetries, ...counts } = status.inbox!;
    expect(counts).toEqual(inbox.counts);
    expect(maxRetries).toBe(3);
    expect(byRetries.reduce((n, r) => n + r.count, 0)).toBe(inbox.counts.total - inbox.counts.expired);
    expect(status.failover?.reduce((n, f) => n + f.liveEntries, 0)).toBeGreaterThanOrEqual(1);
  }, 90_000);
});
