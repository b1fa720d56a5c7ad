/**
 * Quiet outages (issue #36, item 7): while its database crashes and stays down for seconds,
 * restarts at once, and (PostgreSQL) turns read-only for a few seconds as in a switchover, a
 * worker running the inbox, Simba and a locker logs one warning when the outage starts and one
 * when it ends per module's logger, with the cause, no error line and no stack trace: not a line
 * per poll, tick or keep-alive. The counts are printed (HOLDFAST_TEST_VERBOSE=1 shows them).
 * MariaDB has no read-only window to imitate here: `read_only` does not bind root, the only
 * account of a private server. Private servers only: an SQLite-only run leaves this file out.
 */
import { Client } from 'pg';
import {
  PrivateMariadb,
  PrivatePostgres,
  testDatabases,
  uniqueTablePrefix,
  type PrivateServer,
} from '@holdfast/testing';
import { freePort, OutageWorker, sleep, type WorkerMessage } from './support/outage-worker-client';

jest.setTimeout(240_000);

const SERVERS: Record<string, (port: number) => PrivateServer> = {
  postgres: (port) => new PrivatePostgres({ port }),
  mariadb: (port) => new PrivateMariadb({ port }),
};

/** How long after recovery the test still listens (Simba's ttl, the locker's lease, hold-downs). */
const SETTLE_MS = 6_000;

/** One line per warning or error: "<level> [<context>] <message>". */
const lines = (logged: WorkerMessage[]) =>
  logged.map((m) => `${m.level} [${m.context}] ${m.message}${m.stack ? ' (with a stack trace)' : ''}`);

/** Warning and error lines per logger context. */
function perContext(logged: WorkerMessage[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of logged) counts[m.context ?? ''] = (counts[m.context ?? ''] ?? 0) + 1;
  return counts;
}

/** What is too loud in one outage's log: stack traces, error lines, a logger with more than two lines. */
function noise(label: string, logged: WorkerMessage[]): string[] {
  console.log(
    `[quiet outage] ${label}: ${logged.length} WARN/ERROR line(s)\n  ${lines(logged).join('\n  ')}`,
  );
  return [
    ...logged.filter((m) => m.stack).map((m) => `${label}: a stack trace with ${m.message}`),
    ...logged.filter((m) => m.level === 'error').map((m) => `${label}: an error line, ${m.message}`),
    // One line when the outage starts, one when it ends, per module's logger.
    ...Object.entries(perContext(logged))
      .filter(([, count]) => count > 2)
      .map(([context, count]) => `${label}: ${count} lines from ${context}`),
  ];
}

/** Works again: delivers a new message, and owns the Simba mutex and the lock (it is alone). */
async function recovered(worker: OutageWorker, id: string): Promise<void> {
  await worker.deliver(id);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await worker.status();
    if (status.simba && status.locker === 'master') break;
    if (Date.now() > deadline) throw new Error(`roles not back: ${JSON.stringify(status)}`);
    await sleep(250);
  }
  await sleep(SETTLE_MS);
}

/**
 * A switchover's read-only window on PostgreSQL: for a few seconds every new transaction is
 * read-only (each write fails with 25006), then writes work again.
 */
async function readOnlyWindow(server: PrivateServer, ms: number): Promise<void> {
  const admin = new Client({ connectionString: server.url });
  await admin.connect();
  try {
    // This session's own setting outranks the reloaded file: it can turn the window off again.
    await admin.query('SET default_transaction_read_only = off');
    await admin.query('ALTER SYSTEM SET default_transaction_read_only = on');
    await admin.query('SELECT pg_reload_conf()');
    await sleep(ms);
    await admin.query('ALTER SYSTEM RESET default_transaction_read_only');
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
}

const servers = testDatabases().filter((db) => db !== 'sqlite');

for (const db of servers) {
  describe(`a worker on ${db} through outages`, () => {
    let server: PrivateServer;
    let worker: OutageWorker | undefined;

    beforeAll(async () => {
      server = SERVERS[db](await freePort());
      await server.start();
    });

    afterAll(async () => {
      if (worker?.running) worker.child.kill('SIGKILL');
      await server?.destroy();
    });

    it('logs one warning when an outage starts and one when it ends, per module, without stacks', async () => {
      worker = new OutageWorker(db, server.url, uniqueTablePrefix('quiet'), 'inbox,simba,locker');
      await worker.ready();
      await Promise.all([worker.deliver('first'), worker.acquired('simba'), worker.acquired('locker')]);
      await sleep(1_000);
      // Every outage runs before the verdict, so that a failure shows them all.
      const found: string[] = [];

      let since = worker.messages.length;
      // A crash, and the server stays down for longer than Simba's ttl and the locker's lease.
      await server.kill();
      await sleep(4_000);
      await server.start();
      await recovered(worker, 'after-crash');
      found.push(...noise(`${db} crash, 4 s down`, worker.problems(since)));

      since = worker.messages.length;
      await server.restart();
      await recovered(worker, 'after-restart');
      found.push(...noise(`${db} immediate restart`, worker.problems(since)));

      if (db === 'postgres') {
        since = worker.messages.length;
        await readOnlyWindow(server, 5_000);
        await recovered(worker, 'after-read-only');
        found.push(...noise(`${db} 5 s read-only window`, worker.problems(since)));
      }
      expect(found).toEqual([]);
    });
  });
}
