/**
 * #43: an instance opens Holdfast's connections (every coordination lane of every module on the
 * DataSource) all at once, within what the server allows, or is refused at startup with
 * ConnectionBudgetError naming what Holdfast needs, what the server allows and how many are in
 * use; with `whenServerFull: 'wait'` it waits for room, bounded. An instance that was admitted
 * keeps its connections open: a server filled up afterwards (newcomers, other clients) costs it
 * nothing. On a private server of a small `max_connections`, the application connecting as a role
 * without superuser rights.
 */
import { Client } from 'pg';
import mysql from 'mysql2/promise';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { ConnectionBudgetError, configureCoordinationPool } from '@holdfast/core/kit';
import { PrivateMariadb, PrivatePostgres, testDatabases, type PrivateServer } from '@holdfast/testing';
import { ModuleDatabase } from './support/module-database';

const MAX_CONNECTIONS = 12;
const PORTS = { postgres: 25_524, mariadb: 25_525 };

jest.setTimeout(120_000);

for (const db of testDatabases().filter((d): d is 'postgres' | 'mariadb' => d !== 'sqlite')) {
  describe(`connection budget on a server of max_connections ${MAX_CONNECTIONS} [${db}]`, () => {
    let server: PrivateServer;
    const appUrl = () => `${db === 'postgres' ? 'postgres' : 'mysql'}://app@127.0.0.1:${server.port}/test`;
    /** Connections of the app role held open by other clients (fillers). */
    const fillers: Array<{ close(): Promise<void> }> = [];
    const cleanup: Array<() => Promise<unknown>> = [];

    const connectFiller = async () => {
      if (db === 'postgres') {
        const client = new Client({ connectionString: appUrl() });
        await client.connect();
        fillers.push({ close: () => client.end() });
      } else {
        const connection = await mysql.createConnection({ uri: appUrl() });
        fillers.push({ close: () => connection.end() });
      }
    };
    /** Other clients take every connection the app role may have but `free`. */
    const fillLeaving = async (free: number) => {
      const limits = await inUse();
      for (let i = 0; i < limits.allowed - limits.inUse - free; i++) await connectFiller();
    };
    const release = async (count: number) => {
      for (const f of fillers.splice(0, count)) await f.close();
    };
    /** Client connections in use and what the app role may use, read as the administrator. */
    const inUse = async (): Promise<{ inUse: number; allowed: number }> => {
      if (db === 'postgres') {
        const admin = new Client({ connectionString: server.url });
        await admin.connect();
        try {
          const { rows } = await admin.query(
            `SELECT count(*) FILTER (WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()) AS n FROM pg_stat_activity`,
          );
          return { inUse: Number(rows[0].n), allowed: MAX_CONNECTIONS - 3 };
        } finally {
          await admin.end();
        }
      }
      const [, value] = (
        await (server as PrivateMariadb).client("SHOW GLOBAL STATUS LIKE 'Threads_connected'")
      )
        .trim()
        .split('\t');
      return { inUse: Number(value) - 1, allowed: MAX_CONNECTIONS };
    };
    const application = async (extra: Record<string, unknown> = {}) => {
      const options =
        db === 'postgres'
          ? { type: 'postgres', url: appUrl(), poolSize: 1, extra: { max: 1, ...extra } }
          : {
              type: 'mariadb',
              url: appUrl(),
              timezone: 'Z',
              poolSize: 1,
              extra: { connectionLimit: 1, ...extra },
            };
      const dataSource = await new DataSource(options as DataSourceOptions).initialize();
      cleanup.push(() => dataSource.destroy().catch(() => undefined));
      return dataSource;
    };
    /** Simba's and a delivering inbox's statements: two lanes. */
    const modules = (dataSource: DataSource) => {
      const lease = new ModuleDatabase({ dataSource });
      const inbox = new ModuleDatabase(
        { dataSource },
        { key: 'inbox:T', what: 'inbox T (claims, completions)' },
      );
      cleanup.push(() => Promise.all([lease.onApplicationShutdown(), inbox.onApplicationShutdown()]));
      void lease.sql;
      void inbox.sql;
      return { lease, inbox };
    };

    beforeAll(async () => {
      server =
        db === 'postgres'
          ? new PrivatePostgres({ port: PORTS.postgres, settings: { max_connections: MAX_CONNECTIONS } })
          : new PrivateMariadb({ port: PORTS.mariadb, settings: { max_connections: MAX_CONNECTIONS } });
      await server.start();
      if (db === 'postgres') {
        const admin = new Client({ connectionString: server.url });
        await admin.connect();
        await admin.query('CREATE ROLE app LOGIN');
        await admin.end();
      } else {
        await (server as PrivateMariadb).client("CREATE USER 'app'@'%'; GRANT ALL ON test.* TO 'app'@'%';");
      }
    });
    afterEach(async () => {
      for (const step of cleanup.splice(0).reverse()) await step();
      await release(fillers.length);
    });
    afterAll(() => server?.destroy());

    it('refuses an instance the server has no room for, naming what Holdfast needs, what the server allows and how many are in use; it keeps nothing open', async () => {
      const dataSource = await application();
      const { lease, inbox } = modules(dataSource);
      await fillLeaving(2); // room for 2: Holdfast needs 2, and leaves one free for the next client
      const before = await inUse();
      const refused = await lease.admitted().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ConnectionBudgetError);
      const error = refused as ConnectionBudgetError;
      expect(error.code).toBe('HOLDFAST_CORE_CONNECTION_BUDGET');
      expect(error.needed).toBe(2);
      expect(error.free).toBe(2);
      expect(error.message).toMatch(/needs 2 connection\(s\) of its own/);
      expect(error.message).toMatch(/lease statements \(Simba.*\): 1; inbox T \(claims, completions\): 1/);
      expect(error.message).toMatch(new RegExp(`max_connections ${MAX_CONNECTIONS}`));
      expect(error.message).toMatch(new RegExp(`${before.inUse} in use`));
      if (db === 'postgres') expect(error.message).toMatch(/3 of them reserved for administrators/);
      // Refused: no lane is open, the server has what it had, and a statement gets the same error.
      expect(lease.sql.dataSource.isInitialized || inbox.sql.dataSource.isInitialized).toBe(false);
      expect((await inUse()).inUse).toBe(before.inUse);
      await expect(inbox.sql.nowMillis()).rejects.toThrow(ConnectionBudgetError);
      // With room (one connection more than it needs), the same instance is admitted, both lanes at once.
      await release(1);
      await lease.admitted();
      expect((await inUse()).inUse).toBe(before.inUse - 1 + 2);
      expect(await inbox.sql.nowMillis()).toBeGreaterThan(0);
    });

    it("whenServerFull: 'wait' waits for room, and fails after serverFullWait when none comes", async () => {
      const waiting = await application();
      configureCoordinationPool(waiting, { whenServerFull: 'wait', serverFullWait: '30s' });
      const patient = modules(waiting);
      const hasty = await application();
      configureCoordinationPool(hasty, { whenServerFull: 'wait', serverFullWait: '1s' });
      const impatient = modules(hasty);
      await fillLeaving(1);
      const started = Date.now();
      await expect(impatient.lease.admitted()).rejects.toThrow(
        /waited 1 s for room \(whenServerFull: 'wait'\)/,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      let admitted = false;
      const admission = patient.lease.admitted().then(() => (admitted = true));
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(admitted).toBe(false);
      await release(2);
      await admission;
      expect(await patient.inbox.sql.nowMillis()).toBeGreaterThan(0);
    });

    it("a lane opened on demand (the inbox's deletes of a backlog) takes a connection only while open, and is refused at once unless a tenth of the server stays free", async () => {
      const dataSource = await application();
      // 'wait' for the instance's own lanes, longer than the test may take: a lane on demand never waits.
      configureCoordinationPool(dataSource, { whenServerFull: 'wait', serverFullWait: '10m' });
      const { lease, inbox } = modules(dataSource);
      await lease.admitted();
      const lane = { key: 'inbox-deletes:T', what: 'inbox T (deletes while delivering a backlog)' };
      const before = await inUse();
      const opened = await inbox.openOnDemand(lane);
      expect(opened).toBeDefined();
      expect(await opened!.nowMillis()).toBeGreaterThan(0);
      expect((await inUse()).inUse).toBe(before.inUse + 1);
      await inbox.closeOnDemand(opened!);
      expect((await inUse()).inUse).toBe(before.inUse);

      // Two free: enough at boot (one for the lane, one left over), but a lane on demand leaves a
      // tenth of max_connections (2 of 12) free for the newcomers of a deploy.
      await fillLeaving(2);
      const refused = await inbox.openOnDemand(lane).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ConnectionBudgetError);
      expect((refused as ConnectionBudgetError).needed).toBe(1);
      expect((refused as ConnectionBudgetError).free).toBe(2);
      // Nothing kept: the lanes admitted before still work, and a later request with room is admitted.
      expect(await inbox.sql.nowMillis()).toBeGreaterThan(0);
      await release(1);
      const again = await inbox.openOnDemand(lane);
      expect(await again!.nowMillis()).toBeGreaterThan(0);
      await inbox.closeOnDemand(again!);
    });

    it('an instance that was admitted keeps working when other clients then fill the server', async () => {
      // Its application pool closes idle connections after 300 ms; Holdfast's lanes keep theirs.
      const dataSource = await application(
        db === 'postgres' ? { idleTimeoutMillis: 300 } : { idleTimeout: 300, maxIdle: 0 },
      );
      const { lease, inbox } = modules(dataSource);
      await lease.sql.nowMillis();
      await inbox.sql.nowMillis();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await fillLeaving(0);
      await expect(connectFiller()).rejects.toThrow(); // the server is full for the app role
      expect(await lease.sql.nowMillis()).toBeGreaterThan(0);
      expect(await inbox.sql.transaction((tx) => tx.nowMillis())).toBeGreaterThan(0);
    });
  });
}
