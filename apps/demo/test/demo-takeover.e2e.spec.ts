import { testDatabases } from '@holdfast/testing';
import { demoDatabase, eventually, startDemo, type DemoProcess } from './demo-process';

/**
 * Two demo instances started as `npm start` does, on one fresh database of each kind selected by
 * HOLDFAST_TEST_DATABASES: one leader and one master, messages delivered, a value stored by one
 * instance served stale by the other while its upstream is down, and takeover after a crash (with
 * the old leader's fencing token refused by the demo's fenced table).
 */
describe.each(testDatabases())('two demo instances on one %s database', (db) => {
  let a: DemoProcess;
  let b: DemoProcess;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await demoDatabase(db);
    drop = database.drop;
    a = await startDemo(database.target);
    b = await startDemo(database.target);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await drop?.();
  });

  it('deliver every accepted message once the pair has a leader', async () => {
    for (let i = 0; i < 4; i++) {
      expect((await a.post('/inbox', { note: `a${i}` })).status).toBe(202);
      expect((await b.post('/inbox', { note: `b${i}` })).status).toBe(202);
    }
    await eventually(
      async () => {
        const [ia, ib] = await Promise.all([a.get('/inbox'), b.get('/inbox')]);
        const delivered = ia.body.handler.delivered + ib.body.handler.delivered;
        return delivered >= 8 ? delivered : undefined;
      },
      60_000,
      'delivery of 8 messages accepted by both instances',
    );
  }, 90_000);

  it('serve, from the shared store, a value the other instance fetched while the upstream is down', async () => {
    const fresh = await a.get('/countries/it');
    expect(fresh.body).toMatchObject({ code: 'IT', upToDate: true });
    expect((await b.post('/upstream/outage', { down: true })).status).toBeLessThan(300);
    try {
      const stale = await eventually(
        async () => {
          const answer = await b.get('/countries/it');
          return answer.status === 200 && answer.body.upToDate === false ? answer.body : undefined;
        },
        20_000,
        "instance b serving a's stored value stale",
      );
      expect(stale).toMatchObject({ code: 'IT', upToDate: false });
    } finally {
      await b.post('/upstream/outage', { down: false });
    }
  }, 60_000);

  it('elect one leader and one master; killing the leader moves both to the other', async () => {
    const roles = async () => {
      const [sa, sb, la, lb] = await Promise.all([
        a.get('/simba'),
        b.get('/simba'),
        a.get('/locker'),
        b.get('/locker'),
      ]);
      return {
        simba: [sa.body.isOwner, sb.body.isOwner],
        locker: [la.body.role, lb.body.role],
        token: sa.body.fencingToken ?? sb.body.fencingToken,
      };
    };
    const settled = await eventually(
      async () => {
        const r = await roles();
        const oneLeader = r.simba.filter(Boolean).length === 1;
        const oneMaster = r.locker.filter((x) => x === 'master').length === 1;
        return oneLeader && oneMaster ? r : undefined;
      },
      30_000,
      'one leader and one master',
    );
    const [leader, other] = settled.simba[0] ? [a, b] : [b, a];
    const master = settled.locker[0] === 'master' ? a : b;
    const tokenBefore = (await leader.get('/simba')).body.fencingToken as number;

    const killedAt = Date.now();
    leader.child.kill('SIGKILL');
    const newLeader = await eventually(
      async () => ((await other.get('/simba')).body.isOwner ? (await other.get('/simba')).body : undefined),
      30_000,
      'a new leader',
    );
    expect(newLeader.fencingToken).toBeGreaterThan(tokenBefore);
    // The new leader's job writes the demo's own table through fenced(); a write under the old
    // leader's token, as that leader would send it after waking from a pause, is refused.
    const ledger = await eventually(
      async () => {
        const body = (await other.get('/simba')).body;
        return body.ledger?.writer === newLeader.instanceId && body.ledger.fence >= newLeader.fencingToken
          ? body.ledger
          : undefined;
      },
      30_000,
      "the new leader's fenced write to the ledger",
    );
    const stale = await other.post('/simba/ledger', { token: tokenBefore });
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual({ written: 0, refused: 1, accepted: false });
    const after = (await other.get('/simba')).body.ledger;
    expect(after.writer).toBe(newLeader.instanceId);
    expect(after.fence).toBeGreaterThanOrEqual(ledger.fence);
    expect((await other.post('/simba/ledger', { token: 'yesterday' })).status).toBe(400);
    if (master === leader) {
      await eventually(
        async () => ((await other.get('/locker')).body.role === 'master' ? true : undefined),
        30_000,
        'a new master',
      );
    }
    console.log(`[demo ${db}] leadership moved ${Date.now() - killedAt} ms after SIGKILL of the leader`);
  }, 90_000);
});
