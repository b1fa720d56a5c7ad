/**
 * `holdfast status` against a running demo (`npm start` as a real process on a SQLite file):
 * what the CLI reads from the tables matches what the demo's modules say over HTTP.
 */
import { tempSqliteFile } from '@holdfast/testing';
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

  it("counts a parked note as the demo's dashboard does, and the dashboard's retry delivers it", async () => {
    const status = async () => {
      const { code, stdout } = await cli(['status', '--json', '--max-retries', '3'], {
        DATABASE_URL: `sqlite:${file}`,
      });
      expect(code).toBe(0);
      return (JSON.parse(stdout) as HoldfastStatus).inbox!;
    };
    // Fails its first 3 attempts: the demo's maxRetries, so it is parked (the case: the
    // CLI, assuming 5, showed it as due).
    const accepted = await demo.post('/inbox', { failAttempts: 3 });
    expect(accepted.status).toBe(202);
    const id: string = accepted.body.id;
    const parked = await eventually(
      async () => {
        const counts = (await demo.get('/inbox')).body.counts;
        return counts.parked === 1 && counts.due === 0 && counts.retrying === 0 ? counts : undefined;
      },
      60_000,
      'the note to be parked',
    );
    const { oldestDueAgeMs: _, maxRetries: __, byRetries, ...counts } = await status();
    expect(counts).toEqual(parked);
    expect(byRetries).toContainEqual({ retries: 3, count: 1 });

    expect(await demo.post('/api/inbox/retry', { id }, { 'x-holdfast-request': '1' })).toMatchObject({
      status: 200,
      body: { done: true },
    });
    const delivered = await eventually(
      async () => {
        const recent: { id: string; retries: number }[] = (await demo.get('/inbox')).body.handler.recent;
        return recent.find((m) => m.id === id);
      },
      30_000,
      'the retried note to be delivered',
    );
    // One more attempt: RETRIES was set to maxRetries - 1 (what camunda-bpm-correlate does).
    expect(delivered.retries).toBe(2);
    expect(await status()).toMatchObject({ parked: 0 });
  }, 120_000);
});
