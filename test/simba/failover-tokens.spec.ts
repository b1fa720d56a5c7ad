/**
 * Fencing tokens across a PostgreSQL failover (#20), on real replication: a private primary and a
 * hot standby made with `pg_basebackup -R`, streaming through a TcpProxy that can be silenced, and
 * an endpoint (another proxy) that the test moves from the primary to the standby.
 * Runs when HOLDFAST_TEST_DATABASES lists postgres; uses ports 25410-25413.
 */
import type { ChildProcess } from 'node:child_process';
import { connect as tcpConnect, createServer, type AddressInfo, type Server } from 'node:net';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { SchemaManager, sqlClientFor } from '@holdfast/core/kit';
import { forkTs, testDatabases, uniqueTablePrefix, waitForExit } from '@holdfast/testing';
import { FenceColumn, fenced, SIMBA_TABLES } from '@holdfast/simba';
import { join } from 'node:path';
import { PgReplicaPair } from './support/pg-cluster';
import { SwitchableProxy } from './support/switchable-proxy';

const PRIMARY = 25410;
const STANDBY = 25411;
const REPLICATION = 25412;
const ENDPOINT = 25413;
const TTL = 2_000;
const TRANSITION = 1_000;
const WORKER = join(__dirname, 'workers', 'contender.worker.ts');
const MUTEX = 'failover';

@Entity({ name: 'fenced_account' })
class Account {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id!: string;

  @Column({ type: 'int' })
  balance!: number;

  @FenceColumn()
  fence?: number | null;
}

interface Grant {
  pid: number;
  token: number;
  at: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  ms: number,
  what: string,
): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && (value as unknown) !== false) return value;
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

function connect(port: number): Promise<DataSource> {
  return new DataSource({
    type: 'postgres',
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    poolSize: 2,
    connectTimeoutMS: 3_000,
  }).initialize();
}

/** Three contender processes on the endpoint; their grants, in the order they happen. */
class Contenders {
  readonly grants: Grant[] = [];
  readonly owners = new Set<number>();
  readonly output: { at: number; pid: number; line: string }[] = [];
  readonly children: ChildProcess[] = [];

  constructor(prefix: string) {
    for (let i = 0; i < 3; i++) {
      const child = forkTs(WORKER, ['postgres', prefix, MUTEX, '-', '-', String(TTL), String(TRANSITION)], {
        env: {
          ...process.env,
          HOLDFAST_TEST_PG_URL: `postgres://postgres@127.0.0.1:${ENDPOINT}/postgres`,
          SIMBA_WORKER_LOG_LEVELS: 'error,warn',
          NO_COLOR: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      });
      const pid = child.pid!;
      child.on('message', (m: { type: string; token?: number }) => {
        if (m.type === 'acquired') {
          this.grants.push({ pid, token: m.token!, at: performance.now() });
          this.owners.add(pid);
        }
        if (m.type === 'released') this.owners.delete(pid);
      });
      for (const stream of [child.stdout!, child.stderr!]) {
        stream.setEncoding('utf8');
        stream.on('data', (text: string) => {
          for (const line of text.split('\n').filter(Boolean))
            this.output.push({ at: performance.now(), pid, line });
        });
      }
      this.children.push(child);
    }
  }

  owner(): ChildProcess | undefined {
    return this.children.find((c) => this.owners.has(c.pid!) && c.exitCode === null && c.signalCode === null);
  }

  async stop(): Promise<void> {
    for (const c of this.children) c.kill('SIGKILL');
    await Promise.all(this.children.map((c) => waitForExit(c, 5_000)));
  }
}

async function rowOn(dataSource: DataSource, prefix: string) {
  const [row] = await dataSource.query(
    `SELECT owner_id, acquired_at, transition_at, ${'CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)'} AS now_ms FROM ${prefix}simba_mutex WHERE mutex = $1`,
    [MUTEX],
  );
  return row as { owner_id: string; acquired_at: string; transition_at: string; now_ms: string } | undefined;
}

describe('the failover endpoint (SwitchableProxy)', () => {
  it('sends new connections to the new target and drops the open ones', async () => {
    const servers = await Promise.all(
      ['one', 'two'].map(
        (name) =>
          new Promise<Server>((resolve) => {
            const server = createServer((socket) => socket.end(name));
            server.listen(0, '127.0.0.1', () => resolve(server));
          }),
      ),
    );
    const port = (s: Server) => (s.address() as AddressInfo).port;
    const read = (to: number) =>
      new Promise<string>((resolve) => {
        let text = '';
        tcpConnect(to, '127.0.0.1')
          .on('data', (d) => (text += String(d)))
          .on('close', () => resolve(text));
      });
    const proxy = new SwitchableProxy(port(servers[0]));
    await proxy.start();
    try {
      expect(await read(proxy.port)).toBe('one');
      proxy.switchTo(port(servers[1]));
      expect(await read(proxy.port)).toBe('two');
    } finally {
      await proxy.stop();
      servers.forEach((s) => s.close());
    }
  });
});

const pgSelected = testDatabases().includes('postgres');

if (pgSelected)
  describe('simba fencing tokens across a PostgreSQL failover (private primary + hot standby)', () => {
    let cluster: PgReplicaPair | undefined;
    let endpoint: SwitchableProxy | undefined;
    let contenders: Contenders | undefined;
    const open: DataSource[] = [];

    afterEach(async () => {
      await contenders?.stop();
      await Promise.all(open.splice(0).map((d) => d.destroy().catch(() => undefined)));
      await endpoint?.stop();
      await cluster?.stop();
      contenders = undefined;
      endpoint = undefined;
      cluster = undefined;
    });

    async function setUp(synchronous: boolean): Promise<{ prefix: string; standby: DataSource }> {
      cluster = new PgReplicaPair(PRIMARY, STANDBY, REPLICATION, synchronous);
      await cluster.start();
      endpoint = new SwitchableProxy(PRIMARY);
      await endpoint.start(ENDPOINT);
      const prefix = uniqueTablePrefix('fo');
      const setup = await connect(ENDPOINT);
      open.push(setup);
      await new SchemaManager(sqlClientFor(setup)).apply(SIMBA_TABLES.mutex, prefix, 'create');
      const standby = await connect(STANDBY);
      open.push(standby);
      await until(
        async () =>
          (await standby.query(`SELECT 1 FROM pg_tables WHERE tablename = $1`, [`${prefix}simba_mutex`]))
            .length > 0,
        20_000,
        'the table on the standby',
      );
      return { prefix, standby };
    }

    it('asynchronous standby that lost the last grants: every token is new and higher; one warning per outage', async () => {
      const { prefix, standby } = await setUp(false);
      contenders = new Contenders(prefix);
      const first = await until(() => contenders!.grants[0], 30_000, 'a first owner');
      await until(
        async () => (await rowOn(standby, prefix))?.owner_id?.trim() === `worker-${first.pid}`,
        20_000,
        'the first grant on the standby',
      );

      // 1. Replication goes quiet. 2. The owner is killed; another takes over on the primary.
      cluster!.replication.blackhole();
      contenders.owner()!.kill('SIGKILL');
      const second = await until(
        () => contenders!.grants.find((g) => g.pid !== first.pid),
        TTL + TRANSITION + 10_000,
        'a takeover on the primary',
      );
      await sleep(TTL + 500); // the new owner renews at least once, on the primary only
      expect((await rowOn(standby, prefix))?.owner_id?.trim()).toBe(`worker-${first.pid}`); // commits lost

      // 3. The primary crashes; the endpoint moves to the standby, which is read-only for a while.
      const grantsBefore = contenders.grants.length;
      const outageStart = performance.now();
      await cluster!.crashPrimary();
      endpoint!.switchTo(STANDBY);
      await sleep(4_000);
      await cluster!.promoteStandby();
      // 4. Somebody acquires on the new primary.
      const third = await until(
        () => contenders!.grants.slice(grantsBefore)[0],
        TTL + TRANSITION + 15_000,
        'a grant on the promoted standby',
      );
      await sleep(1_000);

      const tokens = contenders.grants.map((g) => g.token);
      const described = contenders.grants.map((g) => `${g.token}@${g.pid}`).join(', ');
      const outageLines = contenders.output.filter((o) => o.at >= outageStart);
      console.log(
        `grants: ${described}\nlines from the crash on (${outageLines.length}):\n` +
          outageLines.map((o) => `  ${o.pid}: ${o.line}`).join('\n'),
      );
      for (let i = 1; i < tokens.length; i++) {
        expect({ grants: described, ok: tokens[i] > tokens[i - 1] }).toEqual({ grants: described, ok: true });
      }
      expect(third.token).toBeGreaterThan(second.token);

      // The fencing helper (#12) across the failover: the new owner writes to a fenced table on the
      // new primary, then the old owner's write (token of its grant the standby never saw), delayed
      // over the failover, arrives and is refused.
      const fencedDb = await new DataSource({
        type: 'postgres',
        url: `postgres://postgres@127.0.0.1:${ENDPOINT}/postgres`,
        entities: [Account],
        synchronize: true,
      }).initialize();
      open.push(fencedDb);
      const accounts = fencedDb.getRepository(Account);
      await accounts.insert({ id: 'a', balance: 0, fence: null });
      expect((await fenced(accounts).update({ id: 'a' }, { balance: 30 }, third.token)).accepted).toBe(true);
      const stale = await fenced(accounts).update({ id: 'a' }, { balance: 20 }, second.token);
      expect(stale).toMatchObject({ written: 0, refused: 1, accepted: false });
      expect((await accounts.findOneByOrFail({ id: 'a' })).balance).toBe(30);
      expect(new Set(tokens).size).toBe(tokens.length);

      // One warning per process when the outage starts and one when it ends (an owner's step-down
      // within it is an info line), no ERROR line and no stack trace.
      const lines = contenders.output.filter((o) => o.at >= outageStart);
      const warnings = lines.filter((o) => /\bWARN\b/.test(o.line));
      const errors = lines.filter((o) => /\bERROR\b/.test(o.line) || /^\s+at /.test(o.line));
      const alive = contenders.children.filter((c) => c.signalCode === null).length;
      const perProcess = new Map<number, number>();
      for (const w of warnings) perProcess.set(w.pid, (perProcess.get(w.pid) ?? 0) + 1);
      expect({ errors: errors.map((e) => e.line) }).toEqual({ errors: [] });
      expect(warnings.length).toBeLessThanOrEqual(alive * 2);
      expect(Math.max(0, ...perProcess.values())).toBeLessThanOrEqual(2);
      const outageWarnings = new Map<number, number>();
      for (const w of warnings.filter((o) => o.line.includes('the database is unavailable')))
        outageWarnings.set(w.pid, (outageWarnings.get(w.pid) ?? 0) + 1);
      expect(Math.max(0, ...outageWarnings.values())).toBeLessThanOrEqual(1);
    }, 180_000);

    it('synchronous standby: the switchover stays clean (tokens grow, an owner soon after the promotion)', async () => {
      const { prefix } = await setUp(true);
      contenders = new Contenders(prefix);
      await until(() => contenders!.grants[0], 30_000, 'a first owner');
      await sleep(TTL + 500);
      const newPrimary = await connect(STANDBY);
      open.push(newPrimary);
      const before = await rowOn(newPrimary, prefix); // synchronous: the standby has the owner's last renewal
      expect(before?.owner_id?.trim()).toMatch(/^worker-/);

      await cluster!.stopPrimary();
      endpoint!.switchTo(STANDBY);
      await cluster!.promoteStandby();
      const promotedAt = performance.now();
      // Commits on the promoted standby do not hang, and an owner holds a live lease soon after.
      const after = await until(
        async () => {
          const row = await rowOn(newPrimary, prefix);
          return row &&
            row.owner_id.trim() !== '' &&
            Number(row.transition_at) > Number(row.now_ms) &&
            Number(row.acquired_at) > Number(before!.acquired_at)
            ? row
            : undefined;
        },
        TTL + TRANSITION + 10_000,
        'an owner renewing or acquiring on the promoted standby',
      );
      expect(performance.now() - promotedAt).toBeLessThan(TTL + TRANSITION + 10_000);
      expect(Number(after.acquired_at)).toBeGreaterThan(Number(before!.acquired_at));
      const tokens = contenders.grants.map((g) => g.token);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    }, 180_000);
  });
