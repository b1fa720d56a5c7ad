/**
 * Workers outlive a database outage (issue #36, item 6). A worker-only application context (no
 * HTTP server, shutdown hooks on, its IPC channel unref()'d: nothing of its own keeps it alive)
 * runs the inbox's delivery loop, a Simba contender or a locker. Its database server, a private
 * one, is killed (SIGKILL of every server process: a crash) and stays down for a while: the
 * worker must still run, deliver / own again once the server is back, and end promptly on
 * SIGTERM. And after app.close() nothing keeps the process: it ends by itself.
 * SQLite has no outage of this kind (a file is not a server that goes away): it runs the
 * app.close() case only.
 */
import {
  PrivateMariadb,
  PrivatePostgres,
  tempSqliteFile,
  testDatabases,
  uniqueTablePrefix,
  waitForExit,
  type PrivateServer,
} from '@holdfast/testing';
import { freePort, OutageWorker, sleep } from './support/outage-worker-client';

jest.setTimeout(180_000);

const SERVERS: Record<string, (port: number) => PrivateServer> = {
  postgres: (port) => new PrivatePostgres({ port }),
  mariadb: (port) => new PrivateMariadb({ port }),
};

const servers = testDatabases().filter((db) => db !== 'sqlite');

/** `promise`'s value, or 'still running' after `ms` (its timer cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>(
    (resolve) => (timer = setTimeout(() => resolve('still running'), ms)),
  );
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

for (const db of servers) {
  describe(`a worker-only application on ${db}`, () => {
    let server: PrivateServer;
    const workers: OutageWorker[] = [];

    beforeAll(async () => {
      server = SERVERS[db](await freePort());
      await server.start();
    });

    afterAll(async () => {
      for (const w of workers) if (w.running) w.child.kill('SIGKILL');
      await server?.destroy();
    });

    it('keeps running through a database crash, works again after it, and ends on SIGTERM', async () => {
      const prefix = uniqueTablePrefix('life');
      // One worker per module: each module's started work alone must keep its process alive.
      for (const modules of ['inbox', 'simba', 'locker'])
        workers.push(new OutageWorker(db, server.url, prefix, modules));
      const [inbox, simba, locker] = workers;
      await Promise.all(workers.map((w) => w.ready()));
      await Promise.all([inbox.deliver('before-crash'), simba.acquired('simba'), locker.acquired('locker')]);

      const crashed = workers.map((w) => w.messages.length);
      await server.kill();
      // Longer than Simba's ttl and the locker's lease: both lose their role, the pools lose every
      // connection, and every reconnect attempt is refused.
      await sleep(6_000);
      expect(
        workers
          .filter((w) => !w.running)
          .map((w) => `${w.modules}: exited ${w.child.exitCode ?? w.child.signalCode}`),
      ).toEqual([]);

      await server.start();
      const [, simbaSince, lockerSince] = crashed;
      await Promise.all([
        inbox.deliver('after-crash'),
        simba.acquired('simba', simbaSince, 90_000),
        locker.acquired('locker', lockerSince, 90_000),
      ]);
      expect(workers.every((w) => w.running)).toBe(true);

      // enableShutdownHooks(): Nest closes the app, then raises the signal again, which ends the
      // process (or exits with 0 under its useProcessExit option).
      const since = workers.map((w) => w.messages.length);
      for (const w of workers) w.child.kill('SIGTERM');
      for (const [i, w] of workers.entries()) {
        const end = await within(w.ended, 20_000);
        expect([
          { code: null, signal: 'SIGTERM' },
          { code: 0, signal: null },
        ]).toContainEqual(end);
        expect(w.messages.slice(since[i]).some((m) => m.t === 'closed')).toBe(true);
      }
    });
  });
}

describe.each(testDatabases())('a worker-only application on %s after app.close()', (db) => {
  it('ends by itself: nothing Holdfast started keeps the process alive', async () => {
    const worker = new OutageWorker(
      db,
      '-',
      uniqueTablePrefix('close'),
      'inbox,simba,locker',
      db === 'sqlite' ? tempSqliteFile('life') : '',
    );
    try {
      await worker.ready();
      await Promise.all([worker.deliver('one'), worker.acquired('simba'), worker.acquired('locker')]);
      worker.child.send({ t: 'close' });
      // Nothing calls process.exit: the process ends when its event loop has nothing left.
      expect(await waitForExit(worker.child, 30_000)).toBe(0);
      expect(await worker.ended).toEqual({ code: 0, signal: null });
    } finally {
      if (worker.running) worker.child.kill('SIGKILL');
    }
  });
});
