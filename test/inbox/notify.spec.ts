import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Logger, type INestApplicationContext } from '@nestjs/common';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { SchemaManager, sqlClientFor, statement } from '@holdfast/core/kit';
import {
  createTestDataSource,
  forkTs,
  TcpProxy,
  uniqueTablePrefix,
  waitForExit,
  waitForMessage,
  waitUntil,
} from '@holdfast/testing';
import { MessageAcceptor, type InboxModuleOptions, INBOX_TABLES } from '@holdfast/inbox';
import { InboxConnection, InboxNotifyListener } from '@holdfast/inbox/internal';
import { inboxNotifyChannel } from '@holdfast/inbox/internal';
import { inboxNode } from './support/inbox-node';

/**
 * PostgreSQL LISTEN/NOTIFY wake-up (PostgreSQL only; in the server suites). Behind PgBouncer in
 * transaction mode (test/pgbouncer/run.sh) the listeners go to the server directly through
 * HOLDFAST_TEST_PG_DIRECT_URL, as the README tells users to.
 */
const WORKER = join(__dirname, 'workers', 'notify-worker.ts');
const type = { namespace: 'notify', name: 'item' };
const PG_URL = process.env.HOLDFAST_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The server itself (PgBouncer's run sets it; otherwise the test URL is the server). */
const DIRECT_URL = process.env.HOLDFAST_TEST_PG_DIRECT_URL || PG_URL;

/** A DIRECT_URL variant: another port (a TcpProxy in front of the server) or another database. */
function directUrl({ port, database }: { port?: number; database?: string } = {}): string {
  const url = new URL(DIRECT_URL);
  if (port) url.port = String(port);
  if (database) url.pathname = `/${database}`;
  return url.toString();
}

interface Node {
  app: INestApplicationContext;
  handled: string[];
  acceptor: MessageAcceptor;
  listener: InboxNotifyListener;
}

async function startNode(dataSource: DataSource, prefix: string, options: Partial<InboxModuleOptions>) {
  const handled: string[] = [];
  const app = await inboxNode({
    dataSource,
    prefix,
    type,
    handle: (message) => void handled.push(message.id),
    inbox: { cleanupInterval: '1h', wakeOnAccept: true, ...options },
    logger: ['error', 'warn'],
  });
  const node: Node = {
    app,
    handled,
    acceptor: app.get(MessageAcceptor),
    listener: app.get(InboxNotifyListener),
  };
  return node;
}

const listenWarnings = (spy: jest.SpyInstance) =>
  spy.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('LISTEN'));

describe('inbox wake-up by PostgreSQL LISTEN/NOTIFY', () => {
  let dataSource: DataSource;
  let prefix: string;
  const apps: INestApplicationContext[] = [];
  const proxies: TcpProxy[] = [];
  let warn: jest.SpyInstance;

  beforeEach(async () => {
    dataSource = await createTestDataSource('postgres');
    prefix = uniqueTablePrefix('notify');
    // The competing nodes' cleanup lease table, for the check-mode worker process.
    await new SchemaManager(sqlClientFor(dataSource)).apply(INBOX_TABLES.lease, prefix, 'create');
    warn = jest.spyOn(Logger.prototype, 'warn');
  });

  afterEach(async () => {
    warn.mockRestore();
    for (const app of apps.splice(0).reverse()) await app.close().catch(() => undefined);
    for (const proxy of proxies.splice(0)) await proxy.stop();
    for (const table of [INBOX_TABLES.message, INBOX_TABLES.lease]) {
      await sqlClientFor(dataSource)
        .execute(statement(`DROP TABLE IF EXISTS ${prefix}${table.name}`))
        .catch(() => undefined);
    }
    await dataSource.destroy();
  });

  /** A node that only accepts (its own wake-up cannot deliver anything). */
  async function acceptOnly(): Promise<MessageAcceptor> {
    const node = await startNode(dataSource, prefix, { deliver: false });
    apps.push(node.app);
    return node.acceptor;
  }

  async function proxyToServer(): Promise<TcpProxy> {
    const server = new URL(DIRECT_URL);
    const proxy = new TcpProxy(Number(server.port || 5432), server.hostname);
    await proxy.start();
    proxies.push(proxy);
    return proxy;
  }

  it('a node polling every 60 s delivers a message accepted by another process long before its next poll', async () => {
    const acceptor = await acceptOnly(); // creates the table
    const worker: ChildProcess = forkTs(WORKER, [prefix]);
    try {
      await waitForMessage(worker, (m: { t: string }) => m.t === 'ready', 60_000);
      const handled = waitForMessage<{ t: string; id: string; sinceStart: number }>(
        worker,
        (m) => m.t === 'handled',
        30_000,
      );
      const { id } = await acceptor.accept({ type, payload: { n: 1 } });
      const report = await handled;
      expect(report.id).toBe(id);
      // The worker's first poll is due 60,000 ms after its start: this delivery was the notification's.
      expect(report.sinceStart).toBeLessThan(60_000);
    } finally {
      worker.send({ t: 'stop' });
      await waitForExit(worker, 15_000);
    }
  });

  it('sends one notification per accept transaction: one per single accept, one per acceptAll chunk, none for a duplicate', async () => {
    const node = await startNode(dataSource, prefix, { deliver: false, acceptChunkSize: 500 });
    apps.push(node.app);
    const channel = inboxNotifyChannel(`${prefix}COR_MESSAGE`);
    const listener = new Client({ connectionString: DIRECT_URL });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => {
      if (n.channel === channel) heard.push(n.payload ?? '');
    });
    await listener.query(`LISTEN "${channel}"`);
    /** What was heard up to a marker notified after the accepts (delivered in commit order). */
    const heardUntilMarker = async (marker: string): Promise<string[]> => {
      await sqlClientFor(dataSource).query(statement(`SELECT pg_notify($1, $2)`, [channel, marker]));
      await waitUntil(() => heard.includes(marker), { timeout: 10_000, message: `the marker ${marker}` });
      return heard.splice(0).filter((p) => p !== marker);
    };
    try {
      const messages = (n: number, tag: string) =>
        Array.from({ length: n }, (_, i) => ({ id: `${tag}-${i}`, type, payload: { i } }));
      await node.acceptor.accept({ id: 'one', type, payload: {} });
      expect(await heardUntilMarker('m1')).toEqual(['']);
      await node.acceptor.acceptAll(messages(300, 'small'));
      expect(await heardUntilMarker('m2')).toEqual(['']);
      // 1,000 messages in chunks of 500: two insert transactions, two notifications.
      await node.acceptor.acceptAll(messages(1_000, 'big'));
      expect(await heardUntilMarker('m3')).toEqual(['', '']);
      // A duplicate id stores nothing and notifies nobody.
      expect(await node.acceptor.accept({ id: 'one', type, payload: {} })).toEqual({
        id: 'one',
        accepted: false,
      });
      expect(await heardUntilMarker('m4')).toEqual([]);
      // A replace or a debounce of a stored id notifies as an insert does: the new content is news.
      expect(
        await node.acceptor.accept({ id: 'one', type, payload: { v: 2 }, onExisting: 'replace' }),
      ).toMatchObject({
        accepted: true,
        replaced: true,
      });
      expect(await heardUntilMarker('m5')).toEqual(['']);
      await node.acceptor.acceptAll([
        { id: 'small-1', type, payload: {}, onExisting: 'debounce', delay: '1s' },
        { id: 'fresh-1', type, payload: {}, onExisting: 'replace' },
      ]);
      // The debounce (an UPDATE) and the insert of the id not stored yet: one each.
      expect(await heardUntilMarker('m6')).toEqual(['', '']);
    } finally {
      await listener.end();
    }
  });

  it("a node's LISTEN health probe wakes nobody: every node hears it on the shared channel (#43)", async () => {
    await acceptOnly();
    // Neither polls within the test; B checks its listener every 200 ms, A every hour. LISTEN on
    // the direct path (behind PgBouncer's transaction pooling it needs one, as the README says).
    const listen = { pollInterval: '1h', notifyListenUrl: directUrl() };
    const a = await startNode(dataSource, prefix, { ...listen, notifyCheckInterval: '1h' });
    apps.push(a.app);
    const b = await startNode(dataSource, prefix, { ...listen, notifyCheckInterval: '200ms' });
    apps.push(b.app);
    await waitUntil(() => a.listener.listening && b.listener.listening, {
      timeout: 20_000,
      message: 'both listeners',
    });
    const claims = (node: Node) => jest.spyOn(node.app.get(InboxConnection).store.claims, 'claim');
    const [aClaims, bClaims] = [claims(a), claims(b)];
    const probes = jest.spyOn(b.app.get(InboxConnection).sql, 'query');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const probed = probes.mock.calls.filter((c) =>
      // A Statement, or text.
      String(typeof c[0] === 'string' ? c[0] : (c[0] as { sql: string }).sql).includes('pg_notify'),
    ).length;
    expect(probed).toBeGreaterThanOrEqual(5);
    // Before, each probe made every node claim: A and B each claimed once per probe of B's.
    expect([aClaims.mock.calls.length, bClaims.mock.calls.length]).toEqual([0, 0]);
    // An accept still wakes both.
    await (await acceptOnly()).accept({ type, payload: { n: 1 } });
    await waitUntil(() => aClaims.mock.calls.length > 0 && bClaims.mock.calls.length > 0, {
      timeout: 10_000,
      message: 'the accept waking both nodes',
    });
  });

  it('falls back to polling while the LISTEN connection is cut', async () => {
    const acceptor = await acceptOnly();
    const proxy = await proxyToServer();
    const node = await startNode(dataSource, prefix, {
      pollInterval: '1s',
      notifyListenUrl: directUrl({ port: proxy.port }),
    });
    apps.push(node.app);
    await waitUntil(() => node.listener.listening, { timeout: 20_000, message: 'the listener' });
    proxy.cut();
    await waitUntil(() => !node.listener.listening, {
      timeout: 20_000,
      message: 'the listener noticing the cut',
    });
    const { id } = await acceptor.accept({ type, payload: { n: 1 } });
    await waitUntil(() => node.handled.includes(id), { timeout: 20_000, message: 'delivery by polling' });
    expect(node.listener.listening).toBe(false);
  });

  it('with notify: false, no listener, and delivery by polling', async () => {
    const acceptor = await acceptOnly();
    const node = await startNode(dataSource, prefix, { pollInterval: '1s', notify: false });
    apps.push(node.app);
    const { id } = await acceptor.accept({ type, payload: { n: 1 } });
    await waitUntil(() => node.handled.includes(id), { timeout: 20_000, message: 'delivery by polling' });
    expect(node.listener.listening).toBe(false);
  });

  it('reconnects after a cut, with one warning when the outage starts and one when it ends, and wakes again', async () => {
    const acceptor = await acceptOnly();
    const proxy = await proxyToServer();
    const node = await startNode(dataSource, prefix, {
      pollInterval: '60s',
      notifyListenUrl: directUrl({ port: proxy.port }),
    });
    apps.push(node.app);
    await waitUntil(() => node.listener.listening, { timeout: 20_000, message: 'the listener' });
    expect(listenWarnings(warn)).toEqual([]);
    proxy.cut();
    await waitUntil(() => listenWarnings(warn).length === 1, {
      timeout: 20_000,
      message: 'the outage warning',
    });
    // Several reconnect attempts fail while the proxy refuses connections: no warning for them.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(node.listener.listening).toBe(false);
    proxy.restore();
    await waitUntil(() => node.listener.listening, { timeout: 30_000, message: 'the reconnect' });
    const warnings = listenWarnings(warn);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/the database is unavailable/);
    expect(warnings[1]).toMatch(/answers again after/);
    const { id } = await acceptor.accept({ type, payload: { n: 2 } });
    // pollInterval is 60 s: only the reconnected listener can deliver this within the wait.
    await waitUntil(() => node.handled.includes(id), {
      timeout: 20_000,
      message: 'delivery by notification',
    });
  });

  it('replaces a LISTEN connection that went silent without closing, and wakes again', async () => {
    const acceptor = await acceptOnly();
    const proxy = await proxyToServer();
    const node = await startNode(dataSource, prefix, {
      pollInterval: '60s',
      notifyListenUrl: directUrl({ port: proxy.port }),
      notifyCheckInterval: '1s',
    });
    apps.push(node.app);
    await waitUntil(() => node.listener.listening, { timeout: 20_000, message: 'the listener' });
    // The listener's connection stays open and silent for good; new connections are refused.
    proxy.blackhole({ passCloses: false });
    await waitUntil(() => !node.listener.listening, {
      timeout: 20_000,
      message: 'the listener noticing it no longer hears',
    });
    proxy.restore();
    await waitUntil(() => node.listener.listening, { timeout: 30_000, message: 'a new LISTEN connection' });
    const { id } = await acceptor.accept({ type, payload: { n: 3 } });
    // pollInterval is 60 s: only the new listener can deliver this within the wait.
    await waitUntil(() => node.handled.includes(id), {
      timeout: 20_000,
      message: 'delivery by notification',
    });
  });

  it("on the DataSource's own connection options: listens on the server, detects PgBouncer's deaf LISTEN", async () => {
    const acceptor = await acceptOnly();
    const node = await startNode(dataSource, prefix, { pollInterval: '1s' }); // no notifyListenUrl
    apps.push(node.app);
    const behindBouncer = Boolean(process.env.HOLDFAST_TEST_PG_DIRECT_URL); // test/pgbouncer/run.sh
    if (behindBouncer) {
      // Transaction pooling: LISTEN succeeds and hears nothing; the probe notices.
      await waitUntil(() => listenWarnings(warn).length === 1, {
        timeout: 20_000,
        message: 'the probe warning',
      });
      expect(listenWarnings(warn)[0]).toMatch(/does not hear/);
      expect(node.listener.listening).toBe(false);
    } else {
      await waitUntil(() => node.listener.listening, { timeout: 20_000, message: 'the listener' });
    }
    const { id } = await acceptor.accept({ type, payload: { n: 1 } });
    await waitUntil(() => node.handled.includes(id), { timeout: 20_000, message: 'delivery' });
  });

  it('a listener that does not hear (LISTEN on another database) warns once and leaves delivery to polling', async () => {
    const acceptor = await acceptOnly();
    const node = await startNode(dataSource, prefix, {
      pollInterval: '1s',
      notifyListenUrl: directUrl({ database: 'postgres' }),
    });
    apps.push(node.app);
    await waitUntil(() => listenWarnings(warn).length === 1, {
      timeout: 20_000,
      message: 'the probe warning',
    });
    expect(listenWarnings(warn)[0]).toMatch(/does not hear/);
    expect(node.listener.listening).toBe(false);
    const { id } = await acceptor.accept({ type, payload: { n: 1 } });
    await waitUntil(() => node.handled.includes(id), { timeout: 20_000, message: 'delivery by polling' });
    expect(listenWarnings(warn)).toHaveLength(1);
  });
});
