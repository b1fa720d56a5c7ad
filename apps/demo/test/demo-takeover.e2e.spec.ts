import { tempSqliteFile } from '@holdfast/core/testing';
import { eventually, startDemo, type DemoProcess } from './demo-process';

/** Two demo instances on one database: one leader and one master, and takeover after a crash. */
describe('two demo instances on one SQLite file', () => {
  let a: DemoProcess;
  let b: DemoProcess;

  beforeAll(async () => {
    const file = tempSqliteFile('demo-pair');
    a = await startDemo(file);
    b = await startDemo(file);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

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
    if (master === leader) {
      await eventually(
        async () => ((await other.get('/locker')).body.role === 'master' ? true : undefined),
        30_000,
        'a new master',
      );
    }
    console.log(`[demo] leadership moved ${Date.now() - killedAt} ms after SIGKILL of the leader`);
  }, 90_000);
});
