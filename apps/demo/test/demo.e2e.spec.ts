import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { tempSqliteFile, tsRegisterPath } from '@holdfast/core';

const root = resolve(__dirname, '../../..');

function freePort(): Promise<number> {
  return new Promise((res) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => res(port));
    });
  });
}

/** Starts the demo exactly as `npm start` does, on its own SQLite file. */
async function startDemo(sqliteFile: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', tsRegisterPath(), 'apps/demo/src/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), DEMO_SQLITE_FILE: sqliteFile, DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 45_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`demo exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/instance`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`demo did not answer within 45 s:\n${output}`);
}

describe('demo app (npm start) on an embedded SQLite file', () => {
  let demo: ChildProcess;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    demo = await startDemo(tempSqliteFile('demo'), port);
  }, 60_000);

  afterAll(async () => {
    if (!demo || demo.exitCode !== null) return;
    const exited = new Promise((r) => demo.once('exit', r));
    demo.kill('SIGTERM');
    await exited;
  });

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
