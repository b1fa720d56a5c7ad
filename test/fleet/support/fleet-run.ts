/**
 * A fleet of replicas (test/fleet/workers/fleet-replica.worker.ts, real processes) booted at once
 * on a private server of a given `max_connections`, watched from an admin connection opened before
 * them: connections and statements every second (and connections every 100 ms while they boot),
 * the server's CPU, each replica's events and log lines. Then, as the options ask: the idle fleet
 * for `idleMs`, a SIGKILL of the leader and the takeover, and `messages` accepted at once and
 * delivered. Used by the fleet test (test/fleet/fleet.spec.ts) and `npm run bench -- fleet`.
 *
 * The replicas connect as `app`, a role without superuser rights (as an application does), so the
 * server keeps its reserved connections for the admin connection of this run.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { Client } from 'pg';
import mysql from 'mysql2/promise';
import { forkTs, PrivateMariadb, PrivatePostgres, waitUntil, type PrivateServer } from '@holdfast/testing';
import { InboxModule, MessageAcceptor } from '@holdfast/inbox';
import { inboxNotifyChannel } from '@holdfast/inbox/internal';
import { LockerModule } from '@holdfast/locker';
import { SimbaModule } from '@holdfast/simba';
import { FLEET_TYPE, type FleetReplicaConfig } from '../workers/fleet-replica.worker';

const WORKER = join(__dirname, '../workers/fleet-replica.worker.ts');
const RAW_WORKER = join(__dirname, '../workers/raw-consumer.worker.ts');
/** The raw consumers' inbox table (`rawDelivery`), beside the fleet's. */
const RAW_PREFIX = 'fleet_raw_';
const PREFIX = 'fleet_';

export interface FleetRunOptions {
  db: 'postgres' | 'mariadb';
  port: number;
  replicas: number;
  maxConnections: number;
  shards?: number;
  /** Watch the idle fleet this long once every replica booted (after `settleMs`). */
  idleMs?: number;
  settleMs?: number;
  /** SIGKILL the leader after the idle window and wait for the next. */
  killLeader?: boolean;
  /** Messages accepted at once, then delivered by the fleet (0: none). */
  messages?: number;
  /** The replicas' SimbaModule options beside the defaults. */
  simba?: FleetReplicaConfig['simba'];
  /** The replicas' InboxModule options beside the defaults. */
  inbox?: FleetReplicaConfig['inbox'];
  /** configureCoordinationPool options of every replica. */
  budget?: FleetReplicaConfig['budget'];
  /** Progress lines. */
  log?: (line: string) => void;
  /** PostgreSQL: log the statements of the busiest second after the leader's SIGKILL. */
  traceStatements?: boolean;
  /**
   * PostgreSQL: after the fleet, as many processes of the pg driver doing the same job by hand
   * (test/fleet/workers/raw-consumer.worker.ts) deliver `messages` accepted the same way: the
   * baseline of the fleet's delivery rate on the same server.
   */
  rawDelivery?: boolean;
  /** Delivery rounds (each: the fleet's delivery, then the raw driver's); the medians are reported. */
  rounds?: number;
}

export interface ReplicaRecord {
  name: string;
  child: ChildProcess;
  booted: boolean;
  failed?: { code?: string; message: string };
  exited: boolean;
  killed: boolean;
  leader: boolean;
  master: boolean;
  shards: Set<string>;
  errors: string[];
  warnings: string[];
  delivered: number;
}

export interface SecondSample {
  at: number;
  connections: number;
  statements: number;
  serverCpuMs: number;
}

export interface FleetRunResult {
  booted: number;
  refused: Array<{ name: string; code?: string; message: string }>;
  replicas: ReplicaRecord[];
  /** Client connections of the replicas (the admin connections left out). */
  connections: { bootPeak: number; idle: number; idlePerReplica: number };
  statements: {
    idleMedianSecond: number;
    idleBusiestSecond: number;
    perReplicaPerSecond: number;
    afterKillBusiestSecond?: number;
    afterKillMedianSecond?: number;
  };
  serverCpuPercentIdle: number;
  replicaCpuPercentIdle: number;
  leaderTerms: number;
  masterTerms: number;
  /** Times two replicas believed they were leader (or master) at once: from the events' times. */
  overlaps: { leader: number; master: number };
  takeoverMs?: number;
  shards: {
    owners: number;
    maxPerReplica: number;
    minPerBooted: number;
    movesTotal: number;
    movesIdle: number;
    unowned: number;
  };
  /** The raw driver's delivery by as many processes (`rawDelivery`). */
  rawDelivery?: {
    processes: number;
    /** True when its rounds took turns with the fleet's; false when it ran after the fleet stopped. */
    interleaved: boolean;
    duplicates: number;
    ratePerSecond: number;
    seconds: number;
    profile?: DeliveryProfile;
  };
  delivery?: {
    messages: number;
    /** Replicas that delivered (those running after the leader's SIGKILL). */
    processes: number;
    unique: number;
    duplicates: number;
    /** Rows still in the table once every message was delivered: each is delivered again after its lease. */
    leftBehind: number;
    ratePerSecond: number;
    seconds: number;
    profile?: DeliveryProfile;
    /** Each round's rate, and Holdfast ÷ raw per round (`rawDelivery`). */
    rounds: number[];
    ratios?: number[];
  };
  /** Error lines logged by replicas that booted (a newcomer's refusal must cost them nothing). */
  runningErrors: string[];
  runningWarnings: string[];
}

interface StatementTotals {
  calls: number;
  rows: number;
  ms: number;
}

/** Where a delivery's time went: per claim, and CPU per 1,000 messages (processes and server). */
export interface DeliveryProfile {
  claims: number;
  rowsPerClaim: number;
  /** The server's execution time of a claim, mean (pg_stat_statements). */
  serverMsPerClaim: number;
  deletes: number;
  serverMsPerDelete: number;
  /** CPU time of the delivering processes, and of the server's processes, per 1,000 messages. */
  processCpuMsPerThousand: number;
  serverCpuMsPerThousand: number;
}

interface Event {
  at: number;
  replica: string;
  t: string;
  on?: boolean;
  mutex?: string;
}

/** The monitor: an admin connection of its own, opened before the fleet. */
interface Monitor {
  sample(): Promise<{ connections: number; statements: number }>;
  /** PostgreSQL: calls so far per statement text (pg_stat_statements), for `traceStatements`. */
  byStatement?(): Promise<Map<string, number>>;
  /** PostgreSQL: the claims' and the deletes' calls, rows and server time so far (pg_stat_statements). */
  deliveryStatements?(): Promise<{ claims: StatementTotals; deletes: StatementTotals }>;
  close(): Promise<void>;
}

async function openMonitor(db: FleetRunOptions['db'], url: string): Promise<Monitor> {
  if (db === 'postgres') {
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    return {
      async sample() {
        const { rows } = await client.query(
          `SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = 'app') AS c, ` +
            `(SELECT COALESCE(sum(calls), 0) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = 'app') AS s`,
        );
        return { connections: Number(rows[0].c), statements: Number(rows[0].s) };
      },
      async byStatement() {
        const { rows } = await client.query(
          `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 400) AS q, sum(calls) AS n FROM pg_stat_statements s ` +
            `JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = 'app' GROUP BY 1`,
        );
        return new Map(rows.map((r: { q: string; n: string }) => [r.q, Number(r.n)]));
      },
      async deliveryStatements() {
        const totals = async (pattern: string, not = '-'): Promise<StatementTotals> => {
          const { rows } = await client.query(
            `SELECT COALESCE(sum(calls), 0) AS calls, COALESCE(sum(rows), 0) AS rows, ` +
              `COALESCE(sum(total_exec_time), 0) AS ms FROM pg_stat_statements s JOIN pg_roles r ` +
              `ON r.oid = s.userid WHERE r.rolname = 'app' AND query LIKE $1 AND query NOT LIKE $2`,
            [pattern, not],
          );
          return { calls: Number(rows[0].calls), rows: Number(rows[0].rows), ms: Number(rows[0].ms) };
        };
        return {
          claims: await totals('WITH claimed AS (UPDATE %COR_MESSAGE%'),
          // The deletes of delivered messages; not the expiry cleanup's (its condition names EXPIRATION).
          deletes: await totals('DELETE FROM %COR_MESSAGE%', '%EXPIRATION%'),
        };
      },
      close: () => client.end(),
    };
  }
  const connection = await mysql.createConnection({ uri: url });
  return {
    async sample() {
      const [rows] = await connection.query(
        `SELECT (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'app') AS c, ` +
          `(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'QUESTIONS') AS q`,
      );
      const row = (rows as Array<{ c: number; q: string }>)[0];
      return { connections: Number(row.c), statements: Number(row.q) };
    },
    close: () => connection.end(),
  };
}

/** User + system CPU (ms) of `pid`, and of its children (and, for their ended children, what they were reaped with). */
function treeCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const tick = 10;
  let total = 0;
  const read = (p: string) => {
    const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  };
  try {
    const f = read(String(pid));
    total += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * tick;
  } catch {
    return NaN;
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = read(entry);
      if (Number(f[1]) === pid) total += (Number(f[11]) + Number(f[12])) * tick;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

const median = (values: number[]) => {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks each child to stop ({t:'stop'}), SIGKILL after 20 s. */
function stopChildren(children: ChildProcess[]): Promise<unknown> {
  return Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map(
        (child) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              child.kill('SIGKILL');
              resolve();
            }, 20_000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            if (child.connected) child.send({ t: 'stop' });
            else child.kill('SIGKILL');
          }),
      ),
  );
}

/** Accepts `count` messages in acceptAll chunks of 2,000 (one insert and one notification each). */
async function acceptMessages(acceptor: MessageAcceptor, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i += 2_000)
    await acceptor.acceptAll(
      Array.from({ length: Math.min(2_000, count - i) }, (_, j) => ({
        id: `${tag}-${i + j}`,
        type: FLEET_TYPE,
        payload: { i: i + j },
      })),
    );
}

function appUrl(server: PrivateServer, db: FleetRunOptions['db']): string {
  return db === 'postgres'
    ? `postgres://app@127.0.0.1:${server.port}/${server.database}`
    : `mysql://app@127.0.0.1:${server.port}/${server.database}`;
}

function dataSourceOptions(db: FleetRunOptions['db'], url: string, poolSize: number): DataSourceOptions {
  return db === 'postgres'
    ? ({
        type: 'postgres',
        url,
        poolSize,
        extra: { max: poolSize, idleTimeoutMillis: 0 },
      } as DataSourceOptions)
    : ({
        type: 'mariadb',
        url,
        timezone: 'Z',
        poolSize,
        extra: { connectionLimit: poolSize },
      } as DataSourceOptions);
}

/** The app role, pg_stat_statements, and the tables (created by the app role, which then owns them). */
async function prepare(server: PrivateServer, db: FleetRunOptions['db']): Promise<void> {
  if (db === 'postgres') {
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    await admin.query('CREATE ROLE app LOGIN');
    await admin.query(`ALTER DATABASE ${server.database} OWNER TO app`);
    await admin.end();
  } else {
    await (server as PrivateMariadb).client(
      `CREATE USER 'app'@'%'; GRANT ALL ON \`${server.database}\`.* TO 'app'@'%';`,
    );
  }
  const dataSource = await new DataSource(dataSourceOptions(db, appUrl(server, db), 2)).initialize();
  const common = { dataSource, tablePrefix: PREFIX, schema: 'create' as const };
  @Module({
    imports: [
      SimbaModule.forRoot({ ...common, autoStart: false }),
      LockerModule.forRoot({
        ...common,
        locker: { type: 'lease-database' },
        lockName: 'setup',
        startup: 'block',
      }),
      InboxModule.forRoot({ ...common, cluster: 'competing' }),
    ],
  })
  class SetupModule {}
  const app = await NestFactory.createApplicationContext(SetupModule, { logger: ['error'] });
  await app.close();
  await dataSource.destroy();
}

export async function runFleet(o: FleetRunOptions): Promise<FleetRunResult> {
  const log = o.log ?? (() => undefined);
  const shards = o.shards ?? 20;
  const server: PrivateServer =
    o.db === 'postgres'
      ? new PrivatePostgres({
          port: o.port,
          settings: {
            max_connections: o.maxConnections,
            shared_preload_libraries: 'pg_stat_statements',
            shared_buffers: '64MB',
          },
        })
      : new PrivateMariadb({ port: o.port, settings: { max_connections: o.maxConnections } });
  const replicas: ReplicaRecord[] = [];
  const events: Event[] = [];
  const samples: SecondSample[] = [];
  let monitor: Monitor | undefined;
  type App = { close(): Promise<void>; get<T>(t: new (...a: never[]) => T): T };
  let seeder: { app: App; rawApp?: App; ds: DataSource } | undefined;
  let sampling: NodeJS.Timeout | undefined;
  try {
    await server.start();
    await prepare(server, o.db);
    monitor = await openMonitor(o.db, server.url);
    // The seeder's one connection is open before the fleet boots (it is the admin's).
    const seedDs = await new DataSource(dataSourceOptions(o.db, server.url, 1)).initialize();
    @Module({ imports: [InboxModule.forRoot({ dataSource: seedDs, tablePrefix: PREFIX, deliver: false })] })
    class SeedModule {}
    seeder = {
      app: await NestFactory.createApplicationContext(SeedModule, { logger: ['error'] }),
      ds: seedDs,
    };
    if (o.rawDelivery && o.db === 'postgres') {
      @Module({
        imports: [
          InboxModule.forRoot({
            dataSource: seedDs,
            tablePrefix: RAW_PREFIX,
            deliver: false,
            schema: 'create',
          }),
        ],
      })
      class RawSeedModule {}
      seeder.rawApp = await NestFactory.createApplicationContext(RawSeedModule, { logger: ['error'] });
      await seedDs.query(`ALTER TABLE ${RAW_PREFIX}COR_MESSAGE OWNER TO app`);
    }

    // Every second: connections, statements, the server's CPU.
    const traces: Array<{ at: number; calls: Map<string, number> }> = [];
    const sampleOnce = async () => {
      const s = await monitor!.sample();
      samples.push({ at: Date.now(), ...s, serverCpuMs: treeCpuMs(server.pid) });
      if (o.traceStatements && monitor!.byStatement)
        traces.push({ at: Date.now(), calls: await monitor!.byStatement() });
    };
    await sampleOnce();
    sampling = setInterval(() => void sampleOnce().catch(() => undefined), 1_000);

    const deliveries: string[] = [];
    /** The fleet's deliveries of the round under way: every id reported, the first and the last report's time. */
    const ours = { ids: deliveries, first: undefined as number | undefined, last: 0 };
    const url = appUrl(server, o.db);
    log(`${o.db}: ${o.replicas} replicas, max_connections ${o.maxConnections}`);
    for (let i = 0; i < o.replicas; i++) {
      const name = `replica-${String(i).padStart(2, '0')}`;
      const config: FleetReplicaConfig = {
        db: o.db,
        url,
        prefix: PREFIX,
        name,
        shards,
        simba: o.simba,
        inbox: o.inbox,
        budget: o.budget,
      };
      const child = forkTs(WORKER, [], {
        env: { ...process.env, HOLDFAST_FLEET_REPLICA: JSON.stringify(config) },
      });
      const r: ReplicaRecord = {
        name,
        child,
        booted: false,
        exited: false,
        killed: false,
        leader: false,
        master: false,
        shards: new Set(),
        errors: [],
        warnings: [],
        delivered: 0,
      };
      child.on('exit', () => (r.exited = true));
      child.on('message', (m: { t: string; [k: string]: unknown }) => {
        const at = Date.now();
        switch (m.t) {
          case 'booted':
            r.booted = true;
            break;
          case 'failed':
            r.failed = { code: m.code as string | undefined, message: String(m.message) };
            break;
          case 'leader':
            r.leader = Boolean(m.on);
            events.push({ at: Number(m.at ?? at), replica: name, t: 'leader', on: r.leader });
            break;
          case 'master':
            r.master = Boolean(m.on);
            events.push({ at: Number(m.at ?? at), replica: name, t: 'master', on: r.master });
            break;
          case 'shard':
            if (m.on) r.shards.add(String(m.mutex));
            else r.shards.delete(String(m.mutex));
            events.push({
              at: Number(m.at ?? at),
              replica: name,
              t: 'shard',
              on: Boolean(m.on),
              mutex: String(m.mutex),
            });
            break;
          case 'delivered':
            for (const id of m.ids as string[]) deliveries.push(id);
            r.delivered += (m.ids as string[]).length;
            ours.last = at;
            ours.first ??= at;
            break;
          case 'log':
            (m.level === 'error' ? r.errors : r.warnings).push(String(m.message));
            break;
        }
      });
      replicas.push(r);
    }

    // Boot: connections every 100 ms until every replica booted or failed.
    let bootPeak = 0;
    const bootStarted = Date.now();
    while (replicas.some((r) => !r.booted && !r.failed && !r.exited)) {
      if (Date.now() - bootStarted > 240_000) throw new Error('the fleet did not finish booting in 240 s');
      const s = await monitor.sample();
      bootPeak = Math.max(bootPeak, s.connections);
      await sleep(100);
    }
    const running = () => replicas.filter((r) => r.booted && !r.killed && !r.exited);
    const booted = running().length;
    const reasons = replicas
      .filter((r) => r.failed)
      .map((r) => `${r.failed!.code ?? ''} ${r.failed!.message}`);
    for (const reason of new Set(reasons)) log(`refused: ${reason}`);
    if (booted === 0) throw new Error('no replica booted');
    log(
      `booted ${booted}, refused ${replicas.length - booted} in ${Date.now() - bootStarted} ms; boot peak ${bootPeak} connections`,
    );

    await sleep(o.settleMs ?? 10_000);
    const idleFrom = Date.now();
    const eventsBeforeIdle = events.length;
    const cpuBefore = new Map(running().map((r) => [r, processCpuMs(r.child.pid)]));
    await sleep(o.idleMs ?? 20_000);
    const idleTo = Date.now();
    const replicaCpu =
      [...cpuBefore].reduce((sum, [r, before]) => sum + processCpuMs(r.child.pid) - before, 0) /
      Math.max(1, cpuBefore.size) /
      ((idleTo - idleFrom) / 100);
    const idleSamples = samples.filter((s) => s.at >= idleFrom && s.at <= idleTo);
    const perSecond = (list: SecondSample[]) =>
      list.slice(1).map((s, i) => (s.statements - list[i].statements) / ((s.at - list[i].at) / 1000));
    const idleRates = perSecond(idleSamples);
    const idleTraces = traces.filter((t) => t.at >= idleFrom && t.at <= idleTo);
    if (idleTraces.length > 1) {
      const [a, b] = [idleTraces[0], idleTraces[idleTraces.length - 1]];
      const perReplica = (n: number) => n / ((b.at - a.at) / 1000) / running().length;
      log(
        `idle statements per replica per second, by statement:\n      ` +
          [...b.calls]
            .map(([q, n]): [string, number] => [q, perReplica(n - (a.calls.get(q) ?? 0))])
            .filter(([, n]) => n > 0.01)
            .sort((x, y) => y[1] - x[1])
            .slice(0, 10)
            .map(([q, n]) => `${n.toFixed(2)} × ${q.slice(0, 140)}`)
            .join('\n      '),
      );
    }
    const idleConnections = median(idleSamples.map((s) => s.connections));
    const serverCpu =
      idleSamples.length > 1
        ? ((idleSamples[idleSamples.length - 1].serverCpuMs - idleSamples[0].serverCpuMs) /
            (idleSamples[idleSamples.length - 1].at - idleSamples[0].at)) *
          100
        : NaN;
    const movesIdle = events.slice(eventsBeforeIdle).filter((e) => e.t === 'shard' && e.on).length;
    log(
      `idle: ${idleConnections} connections (${(idleConnections / booted).toFixed(2)} per replica), ` +
        `statements/s median ${median(idleRates).toFixed(0)}, busiest ${Math.max(...idleRates).toFixed(0)}; ` +
        `shard moves while idle ${movesIdle}`,
    );
    const shardStats = () => {
      const counts = running().map((r) => r.shards.size);
      const owned = new Set(running().flatMap((r) => [...r.shards]));
      return {
        owners: counts.filter((c) => c > 0).length,
        maxPerReplica: Math.max(0, ...counts),
        minPerBooted: counts.length ? Math.min(...counts) : 0,
        unowned: shards - owned.size,
      };
    };
    const shardsAtIdle = shardStats();

    let takeoverMs: number | undefined;
    let afterKill: number[] | undefined;
    if (o.killLeader) {
      const leader = running().find((r) => r.leader);
      if (leader) {
        const killedAt = Date.now();
        leader.killed = true;
        leader.child.kill('SIGKILL');
        const next = await waitUntil(() => running().find((r) => r.leader), {
          timeout: 60_000,
          interval: 50,
          message: 'no new leader within 60 s of the leader SIGKILL',
        });
        const term = [...events].reverse().find((e) => e.t === 'leader' && e.on && e.replica === next.name);
        takeoverMs = (term?.at ?? Date.now()) - killedAt;
        await sleep(8_000);
        afterKill = perSecond(samples.filter((s) => s.at >= killedAt - 1_000 && s.at <= Date.now()));
        const window = traces.filter((t) => t.at >= killedAt - 1_000);
        let busiest: { total: number; diff: Array<[string, number]> } | undefined;
        for (let i = 1; i < window.length; i++) {
          const diff = [...window[i].calls].map(([q, n]): [string, number] => [
            q,
            n - (window[i - 1].calls.get(q) ?? 0),
          ]);
          const total = diff.reduce((sum, [, n]) => sum + n, 0);
          if (!busiest || total > busiest.total) busiest = { total, diff: diff.filter(([, n]) => n > 0) };
        }
        if (busiest)
          log(
            `busiest second after the kill, ${busiest.total} statements:\n      ` +
              busiest.diff
                .sort((a, b) => b[1] - a[1])
                .slice(0, 8)
                .map(([q, n]) => `${n} × ${q}`)
                .join('\n      '),
          );
        log(
          `takeover ${takeoverMs} ms; statements/s after the kill: busiest ${Math.max(...afterKill).toFixed(0)}`,
        );
      }
    }

    const profileFrom = async (pids: Array<number | undefined>) => ({
      server: treeCpuMs(server.pid),
      processes: pids.reduce((sum: number, pid) => sum + processCpuMs(pid), 0),
      statements: await monitor!.deliveryStatements?.(),
    });
    const profileTo = async (
      from: Awaited<ReturnType<typeof profileFrom>>,
      pids: Array<number | undefined>,
      messages: number,
    ): Promise<DeliveryProfile | undefined> => {
      const to = await profileFrom(pids);
      if (!from.statements || !to.statements) return undefined;
      const claims = to.statements.claims.calls - from.statements.claims.calls;
      const deletes = to.statements.deletes.calls - from.statements.deletes.calls;
      return {
        claims,
        rowsPerClaim: (to.statements.claims.rows - from.statements.claims.rows) / Math.max(1, claims),
        serverMsPerClaim: (to.statements.claims.ms - from.statements.claims.ms) / Math.max(1, claims),
        deletes,
        serverMsPerDelete: (to.statements.deletes.ms - from.statements.deletes.ms) / Math.max(1, deletes),
        processCpuMsPerThousand: ((to.processes - from.processes) * 1000) / messages,
        serverCpuMsPerThousand: ((to.server - from.server) * 1000) / messages,
      };
    };
    /** The deletes of what was delivered have run: the table is empty (or 15 s passed). */
    const deletesDone = (prefix: string) =>
      waitUntil(
        async () => {
          const [row] = (await seeder!.ds.query(`SELECT COUNT(*) AS n FROM ${prefix}COR_MESSAGE`)) as Array<{
            n: unknown;
          }>;
          return Number(row.n) === 0;
        },
        { timeout: 15_000, interval: 100 },
      ).catch(() => undefined);
    const describeProfile = (p?: DeliveryProfile) =>
      p
        ? `${p.claims} claims of ${p.rowsPerClaim.toFixed(0)} rows, ${p.serverMsPerClaim.toFixed(2)} ms each on the server; ` +
          `${p.deletes} deletes, ${p.serverMsPerDelete.toFixed(2)} ms each; CPU per 1,000 messages: processes ` +
          `${p.processCpuMsPerThousand.toFixed(0)} ms, server ${p.serverCpuMsPerThousand.toFixed(0)} ms`
        : '';

    /** The raw consumers, on an inbox table of their own (`RAW_PREFIX`), fed by an acceptor of their own. */
    const startRaw = async (processes: number) => {
      const delivered = { ids: [] as string[], first: undefined as number | undefined, last: 0 };
      const children = Array.from({ length: processes }, () =>
        forkTs(RAW_WORKER, [], {
          env: {
            ...process.env,
            HOLDFAST_RAW_CONSUMER: JSON.stringify({
              url,
              table: `${RAW_PREFIX}COR_MESSAGE`,
              channel: inboxNotifyChannel(`${RAW_PREFIX}COR_MESSAGE`),
            }),
          },
        }),
      );
      let ready = 0;
      for (const child of children)
        child.on('message', (m: { t: string; ids?: string[] }) => {
          if (m.t === 'ready') ready++;
          if (m.t !== 'delivered') return;
          delivered.ids.push(...m.ids!);
          delivered.first ??= Date.now();
          delivered.last = Date.now();
        });
      await waitUntil(() => ready === processes, { timeout: 120_000, message: 'the raw consumers' });
      return {
        children,
        pids: children.map((c) => c.pid),
        delivered,
        acceptor: seeder!.rawApp!.get(MessageAcceptor),
      };
    };

    /** Accepts `messages` into `prefix`'s inbox, waits until `delivered` holds them all and their rows are gone. */
    const deliverRound = async (
      prefix: string,
      acceptor: MessageAcceptor,
      delivered: { ids: string[]; first?: number; last: number },
      pids: Array<number | undefined>,
      tag: string,
    ) => {
      delivered.ids.length = 0;
      delivered.first = undefined;
      const from = await profileFrom(pids);
      await acceptMessages(acceptor, o.messages!, tag);
      await waitUntil(() => new Set(delivered.ids).size >= o.messages!, {
        timeout: 300_000,
        interval: 100,
        message: `not every message was delivered in 300 s (${tag})`,
      });
      await deletesDone(prefix);
      const profile = await profileTo(from, pids, o.messages!);
      const seconds = (delivered.last - delivered.first!) / 1000;
      return { seconds, rate: new Set(delivered.ids).size / Math.max(seconds, 0.001), profile };
    };

    let delivery: FleetRunResult['delivery'];
    let rawDelivery: FleetRunResult['rawDelivery'];
    if (o.messages) {
      const pids = running().map((r) => r.child.pid);
      const processes = running().length;
      const rawWanted = o.rawDelivery && o.db === 'postgres';
      // The raw consumers (two connections each) beside the fleet when the server has room for
      // them, the rounds taking turns; otherwise after the fleet stopped, its rounds then theirs.
      const appSlots = o.maxConnections - 3; // PostgreSQL's superuser_reserved_connections
      const interleave = rawWanted && appSlots - samples[samples.length - 1].connections > 2 * processes + 1;
      let rawRun = interleave ? await startRaw(processes) : undefined;
      const rounds: Array<{
        holdfast: Awaited<ReturnType<typeof deliverRound>>;
        raw?: Awaited<ReturnType<typeof deliverRound>>;
      }> = [];
      let duplicates = 0;
      let unique = 0;
      let rawDuplicates = 0;
      const rawRound = async (round: number) => {
        const raw = await deliverRound(
          RAW_PREFIX,
          rawRun!.acceptor,
          rawRun!.delivered,
          rawRun!.pids,
          `r${round}`,
        );
        await sleep(1_000);
        rawDuplicates += rawRun!.delivered.ids.length - new Set(rawRun!.delivered.ids).size;
        return raw;
      };
      const report = (round: number) => {
        const { holdfast, raw } = rounds[round];
        log(
          `delivery round ${round + 1}: ${o.messages} in ${holdfast.seconds.toFixed(2)} s (${holdfast.rate.toFixed(0)}/s). ${describeProfile(holdfast.profile)}` +
            (raw
              ? `\n      raw driver, ${rawRun!.pids.length} processes${interleave ? '' : ' (after the fleet)'}: ${raw.seconds.toFixed(2)} s (${raw.rate.toFixed(0)}/s). ${describeProfile(raw.profile)}`
              : ''),
        );
      };
      try {
        for (let round = 0; round < (o.rounds ?? 1); round++) {
          const holdfast = await deliverRound(
            PREFIX,
            seeder.app.get(MessageAcceptor),
            ours,
            pids,
            `m${round}`,
          );
          await sleep(2_000); // a late duplicate still counts
          duplicates += deliveries.length - new Set(deliveries).size;
          unique += new Set(deliveries).size;
          rounds.push({ holdfast, raw: rawRun ? await rawRound(round) : undefined });
          if (rawRun || !rawWanted) report(round);
        }
        if (rawWanted && !interleave) {
          await stopChildren(replicas.map((r) => r.child));
          rawRun = await startRaw(processes);
          for (let round = 0; round < rounds.length; round++) {
            rounds[round].raw = await rawRound(round);
            report(round);
          }
        }
      } finally {
        if (rawRun) await stopChildren(rawRun.children);
      }
      const [left] = (await seeder.ds.query(`SELECT COUNT(*) AS n FROM ${PREFIX}COR_MESSAGE`)) as Array<{
        n: unknown;
      }>;
      const middle = <T>(list: T[], key: (t: T) => number) =>
        [...list].sort((a, b) => key(a) - key(b))[Math.floor(list.length / 2)];
      const mid = middle(rounds, (r) => r.holdfast.rate).holdfast;
      delivery = {
        messages: o.messages,
        processes,
        unique,
        duplicates,
        leftBehind: Number(left.n),
        ratePerSecond: mid.rate,
        seconds: mid.seconds,
        profile: mid.profile,
        rounds: rounds.map((r) => r.holdfast.rate),
        ratios: rawRun ? rounds.map((r) => r.holdfast.rate / r.raw!.rate) : undefined,
      };
      if (rawRun) {
        const rawMid = middle(rounds, (r) => r.raw!.rate).raw!;
        rawDelivery = {
          processes,
          interleaved: Boolean(interleave),
          duplicates: rawDuplicates,
          ratePerSecond: rawMid.rate,
          seconds: rawMid.seconds,
          profile: rawMid.profile,
        };
      }
    }

    const terms = (t: string) => events.filter((e) => e.t === t && e.on).length;
    const overlapsOf = (t: string) => {
      const holders = new Set<string>();
      let overlaps = 0;
      for (const e of [...events].filter((x) => x.t === t).sort((a, b) => a.at - b.at)) {
        if (e.on) {
          if (holders.size > 0) overlaps++;
          holders.add(e.replica);
        } else holders.delete(e.replica);
        // a SIGKILLed holder says nothing: it stops holding when it dies
        for (const r of replicas) if (r.killed) holders.delete(r.name);
      }
      return overlaps;
    };
    const runningNow = replicas.filter((r) => r.booted);
    return {
      booted,
      refused: replicas
        .filter((r) => !r.booted)
        .map((r) => ({ name: r.name, ...(r.failed ?? { message: 'exited' }) })),
      replicas,
      connections: { bootPeak, idle: idleConnections, idlePerReplica: idleConnections / booted },
      statements: {
        idleMedianSecond: median(idleRates),
        idleBusiestSecond: Math.max(...idleRates),
        perReplicaPerSecond: median(idleRates) / booted,
        afterKillBusiestSecond: afterKill ? Math.max(...afterKill) : undefined,
        afterKillMedianSecond: afterKill ? median(afterKill) : undefined,
      },
      serverCpuPercentIdle: serverCpu,
      replicaCpuPercentIdle: replicaCpu,
      leaderTerms: terms('leader'),
      masterTerms: terms('master'),
      overlaps: { leader: overlapsOf('leader'), master: overlapsOf('master') },
      takeoverMs,
      shards: {
        ...shardsAtIdle,
        movesTotal: events.filter((e) => e.t === 'shard' && e.on).length,
        movesIdle,
      },
      delivery,
      rawDelivery,
      runningErrors: runningNow.flatMap((r) => r.errors.map((e) => `${r.name}: ${e}`)),
      runningWarnings: runningNow.flatMap((r) => r.warnings.map((e) => `${r.name}: ${e}`)),
    };
  } finally {
    if (sampling) clearInterval(sampling);
    await stopChildren(replicas.map((r) => r.child));
    await seeder?.app.close().catch(() => undefined);
    await seeder?.rawApp?.close().catch(() => undefined);
    await seeder?.ds.destroy().catch(() => undefined);
    await monitor?.close().catch(() => undefined);
    await server.destroy();
  }
}
