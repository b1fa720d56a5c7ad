import { tempSqliteFile } from '@holdfast/testing';
import { eventually, startDemo, type DemoProcess } from './demo-process';

describe('demo app (npm start) on an embedded SQLite file', () => {
  let demo: DemoProcess;
  let base: string;

  beforeAll(async () => {
    demo = await startDemo(tempSqliteFile('demo'));
    base = demo.base;
  }, 60_000);

  afterAll(() => demo?.stop());

  const get = async (path: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + path);
    return {
      status: res.status,
      body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text(),
    };
  };
  const outage = (down: boolean) =>
    fetch(`${base}/upstream/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ down }),
    });

  it('starts without a warning about its own settings', async () => {
    await eventually(
      async () => (demo.output().includes('Nest application successfully started') ? true : undefined),
      20_000,
      'the start line',
    );
    // Up to the start: the demo's settings checked by each module (it warned that its SQLite busy
    // timeout, 10 s, outlasted its leader's transition, 3 s).
    const start = demo.output().split('Nest application successfully started')[0];
    expect(start.split('\n').filter((line) => /\b(WARN|ERROR)\b/.test(line))).toEqual([]);
  });

  it('shows the leader, the master and the inbox, and delivers messages with a retry', async () => {
    const simba = await eventually(
      async () => ((await get('/simba')).body.isOwner ? (await get('/simba')).body : undefined),
      20_000,
      'leadership',
    );
    expect(simba).toMatchObject({ mutex: 'demo-leader', isOwner: true });
    expect(typeof simba.fencingToken).toBe('number');
    const locker = await eventually(
      async () => ((await get('/locker')).body.role === 'master' ? (await get('/locker')).body : undefined),
      20_000,
      'master role',
    );
    expect(locker.lockName).toBe('demo-master');
    for (let i = 0; i < 6; i++) expect((await demo.post('/inbox', { note: i })).status).toBe(202);
    const inbox = await eventually(
      async () => {
        const body = (await get('/inbox')).body;
        return body.handler.delivered >= 6 ? body : undefined;
      },
      30_000,
      'delivery of 6 messages',
    );
    expect(inbox.handler.failedFirstAttempts).toBeGreaterThanOrEqual(2);
  });

  it('shows one instance id for every module of the process: simba, locker, @ScheduledLock, the dashboard', async () => {
    const { instanceId, pid } = (await get('/instance')).body;
    expect(instanceId).toMatch(/^[0-9a-f]{8}:[0-9]+@/);
    const state = await eventually(
      async () => {
        const body = (await get('/api/state')).body;
        const leader = body.simba?.mutexes?.find((m: { mutex: string }) => m.mutex === 'demo-leader');
        return leader?.ownedHere && body.locker?.role === 'master' ? body : undefined;
      },
      20_000,
      'leadership and the master role',
    );
    expect(state.instance).toMatchObject({ id: instanceId, pid });
    // Every mutex of this process (the demo's leader and the inbox's, on SQLite) is owned under it.
    const owned = state.simba.mutexes.filter((m: { ownedHere: boolean }) => m.ownedHere);
    expect(owned.length).toBeGreaterThanOrEqual(1);
    for (const m of owned) expect(m.owner).toBe(instanceId);
    expect((await get('/simba')).body.instanceId).toBe(instanceId);
    expect(state.locker).toMatchObject({ instanceId, holder: instanceId });
    expect(state.locker.locks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ lock: 'demo-master', master: instanceId, masterHere: true }),
      ]),
    );
    expect(state.scheduled.holderPrefix).toBe(instanceId);
  });

  it('serves the status page at /', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Holdfast demo</title>');
  });

  it('serves a list by scatter/gather, and keeps tenants apart (X-Tenant)', async () => {
    const asAcme = (path: string): Promise<any> =>
      fetch(base + path, { headers: { 'x-tenant': 'acme' } }).then((r) => r.json());
    await asAcme('/countries?codes=IT,ES');
    expect((await get('/countries?codes=FR,JP')).body.map((c: { code: string }) => c.code)).toEqual([
      'FR',
      'JP',
    ]);
    await new Promise((r) => setTimeout(r, 300));
    await outage(true);
    try {
      const shared = (await get('/countries?codes=JP,XX,FR')).body;
      expect(shared.map((c: { code: string } | null) => c?.code ?? null)).toEqual(['JP', null, 'FR']);
      expect((await get('/countries/it')).status).toBe(503);
      expect((await asAcme('/countries/it')).upToDate).toBe(false);
      expect((await get('/countries?codes=F1')).status).toBe(400);
    } finally {
      await outage(false);
    }
  });

  it('stores the countries a list found even when one code is unknown (?codes=FR,XX)', async () => {
    // Tenant globex: its own table, where nothing else stored FR.
    const asGlobex = async (path: string) => {
      const res = await fetch(base + path, { headers: { 'x-tenant': 'globex' } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const before = (await get('/upstream')).body;
    const list = (await asGlobex('/countries?codes=FR,XX')).body as Array<{ code: string } | null>;
    expect(list.map((c: { code: string } | null) => c?.code ?? null)).toEqual(['FR', null]);
    const after = await eventually(
      async () => {
        const state = (await get('/upstream')).body;
        return state.rowsWritten > before.rowsWritten ? state : undefined;
      },
      10_000,
      'the write of FR',
    );
    expect(after.missingSlices).toBe(before.missingSlices + 1);
    await outage(true);
    try {
      const fr = await asGlobex('/countries/fr');
      expect(fr.status).toBe(200);
      expect(fr.body).toMatchObject({ code: 'FR', name: 'France', upToDate: false });
      expect((await asGlobex('/countries/de')).status).toBe(503);
    } finally {
      await outage(false);
    }
  });

  it('serves a country fresh, then stale with asOf while the upstream is down', async () => {
    const fresh = await get('/countries/fr');
    expect(fresh.body).toMatchObject({ code: 'FR', name: 'France', upToDate: true });
    await new Promise((r) => setTimeout(r, 300)); // the async write lands
    await outage(true);
    try {
      const stale = await get('/countries/fr');
      expect(stale.status).toBe(200);
      expect(stale.body).toMatchObject({
        code: 'FR',
        upToDate: false,
        metadata: { causeType: 'ServiceUnavailableException' },
      });
      expect(Date.parse(stale.body.asOf)).toBeGreaterThan(Date.now() - 60_000);
      const never = await get('/countries/de');
      expect(never.status).toBe(503);
    } finally {
      await outage(false);
    }
  });
});
