import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HoldfastError } from '@holdfast/core/kit';
import { postgresBinDir } from './private-postgres';
import { account, alive, childrenOf, signal, type Account } from './processes';
import { TcpProxy } from './tcp-proxy';
import { waitUntil } from './wait-until';

const run = promisify(execFile);

export interface PatroniClusterOptions {
  /**
   * The first of 3 + 2 × `nodes` consecutive ports on 127.0.0.1: etcd's client and peer ports,
   * HAProxy's endpoint, then per node PostgreSQL's port and Patroni's REST port.
   */
  basePort: number;
  /** PostgreSQL nodes (default 3). */
  nodes?: number;
  /** Patroni's `synchronous_mode` (default false: asynchronous replicas). */
  synchronous?: boolean;
  /** Patroni's leader key `ttl` in seconds (default 20, Patroni's minimum). */
  ttl?: number;
  /** Patroni's `loop_wait` in seconds (default 1). */
  loopWait?: number;
  /** Patroni's `retry_timeout` in seconds (default 5; Patroni's rule: loop_wait + 2 × retry_timeout ≤ ttl). */
  retryTimeout?: number;
  /**
   * Patroni's `primary_start_timeout` in seconds (default Patroni's 300): 0 promotes a replica as
   * soon as the leader's PostgreSQL is seen down, instead of trying to restart it first.
   */
  primaryStartTimeout?: number;
  /** How long a start may take (default 120 s). */
  timeoutMs?: number;
  /**
   * Each node reaches etcd, and HAProxy reaches each node (PostgreSQL and Patroni's REST API),
   * through TCP proxies of the test's own (on free ports), so that `PatroniNode.isolate()` can
   * make a node silent without killing it (default false: direct connections).
   */
  isolatable?: boolean;
}

interface Member {
  name: string;
  role: string;
  state: string;
  lag?: number | string;
}

/** Every process this module started, killed if the test process exits without stopping them. */
const running = new Set<PatroniCluster>();
let exitHook = false;

function spawnLogged(
  command: string,
  args: string[],
  owner: Account,
  logFile: string,
  cwd: string,
): ChildProcess {
  const log = openSync(logFile, 'a');
  try {
    return spawn(command, args, {
      ...owner,
      cwd,
      stdio: ['ignore', log, log],
      env: { ...process.env, LC_ALL: 'C.UTF-8' },
    });
  } finally {
    closeSync(log);
  }
}

/** One Patroni-managed PostgreSQL node: the `patroni` process and the PostgreSQL it runs. */
export class PatroniNode {
  child?: ChildProcess;
  /** With `isolatable`: the paths to etcd and from HAProxy (PostgreSQL, REST API) of this node. */
  proxies?: { etcd: TcpProxy; postgres: TcpProxy; rest: TcpProxy };

  constructor(
    readonly name: string,
    readonly port: number,
    readonly restPort: number,
    readonly dir: string,
  ) {}

  /** A connection URL straight to this node (not through the endpoint). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** The postmaster's pid while PostgreSQL runs. */
  postmasterPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return pid > 0 && alive(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** SIGKILL of PostgreSQL only (postmaster and its children); Patroni keeps running. */
  async killPostgres(): Promise<void> {
    const pid = this.postmasterPid();
    if (pid === undefined) return;
    const pids = [pid, ...childrenOf(pid)];
    for (const p of pids) signal(p, 'SIGKILL');
    await waitUntil(() => pids.every((p) => !alive(p)), {
      timeout: 10_000,
      message: `${this.name}'s PostgreSQL to die`,
    });
  }

  /** SIGKILL of Patroni and of its PostgreSQL: the node dies as a machine would. */
  async kill(): Promise<void> {
    const patroni = this.child;
    // A child killed by a signal has exitCode null and signalCode set: it has exited all the same.
    const patroniRunning = patroni && patroni.exitCode === null && patroni.signalCode === null;
    const exited = patroniRunning ? new Promise((r) => patroni.once('exit', r)) : undefined;
    if (patroniRunning) signal(patroni.pid, 'SIGKILL');
    await exited;
    await this.killPostgres();
  }

  /**
   * Cuts the node off, silently (needs `isolatable`): its Patroni hears nothing from etcd, and
   * HAProxy nothing from its PostgreSQL or its REST API; open connections stay open and silent,
   * new ones are accepted and never answered, as on a path that drops every packet. The node
   * itself runs on: as a leader, Patroni demotes it once etcd stays unreachable, and the leader
   * key expires after `ttl`. The replicas' own streaming connections to it are not cut.
   */
  isolate(): void {
    if (!this.proxies) throw new Error(`${this.name}: isolate() needs a cluster started with isolatable`);
    for (const proxy of Object.values(this.proxies)) proxy.blackhole({ passCloses: false, dropNew: true });
  }

  /** Ends `isolate()`: new connections pass again (the silenced ones stay silent). */
  reconnect(): void {
    for (const proxy of Object.values(this.proxies ?? {})) proxy.restore();
  }

  /**
   * Patroni's REST API: `GET path` as JSON (undefined when it does not answer within
   * `timeoutMs`). Patroni is a Python process that answers in milliseconds on an idle machine
   * and in seconds on a loaded one (the CI machine runs the suites beside other work): 10 s.
   */
  async rest<T>(
    path: string,
    init?: RequestInit,
    timeoutMs = 10_000,
  ): Promise<{ status: number; body: T } | undefined> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.restPort}${path}`, {
        ...init,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // plain text answer
      }
      return { status: response.status, body: body as T };
    } catch {
      return undefined;
    }
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'patroni.log'), 'utf8');
    } catch {
      return '';
    }
  }
}

/**
 * PostgreSQL under Patroni for tests, from Debian's packages (patroni, python3-etcd, etcd-server,
 * haproxy): one etcd member, `nodes` Patroni nodes (PostgreSQL as user postgres when run as root),
 * and HAProxy in front (`url`), which sends connections to the node whose Patroni answers
 * `GET /primary` with 200 and closes the open ones when that node is marked down
 * (`on-marked-down shutdown-sessions`). Everything on 127.0.0.1 in one temporary directory;
 * `destroy()` kills it all and removes the directory. Linux only.
 */
export class PatroniCluster {
  readonly nodes: PatroniNode[];
  readonly etcdPort: number;
  readonly endpointPort: number;
  private readonly dir: string;
  private readonly owner: Account;
  private readonly options: Required<Omit<PatroniClusterOptions, 'primaryStartTimeout'>> & {
    primaryStartTimeout?: number;
  };
  private etcd?: ChildProcess;
  private haproxy?: ChildProcess;

  constructor(options: PatroniClusterOptions) {
    this.options = {
      nodes: 3,
      synchronous: false,
      ttl: 20,
      loopWait: 1,
      retryTimeout: 5,
      timeoutMs: 120_000,
      isolatable: false,
      ...options,
    };
    const { nodes, ttl, loopWait, retryTimeout } = this.options;
    if (!Number.isInteger(nodes) || nodes < 2) {
      throw new HoldfastError(
        `PatroniCluster: nodes must be an integer of at least 2, got ${nodes}`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
    if (loopWait + 2 * retryTimeout > ttl) {
      throw new HoldfastError(
        `PatroniCluster: loop_wait + 2 × retry_timeout must not exceed ttl (Patroni's rule), got ${loopWait} + 2 × ${retryTimeout} > ${ttl}`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
    for (const tool of ['/usr/bin/patroni', '/usr/bin/etcd', '/usr/sbin/haproxy']) {
      if (!existsSync(tool)) {
        throw new HoldfastError(
          `PatroniCluster: ${tool} is missing (apt-get install patroni python3-etcd etcd-server haproxy)`,
          'HOLDFAST_TESTING_CONFIG',
        );
      }
    }
    this.owner = account('postgres');
    this.dir = mkdtempSync(join(tmpdir(), `holdfast-patroni-${options.basePort}-`));
    if (this.owner.uid !== undefined) chownSync(this.dir, this.owner.uid, this.owner.gid!);
    this.etcdPort = options.basePort;
    this.endpointPort = options.basePort + 2;
    this.nodes = Array.from({ length: nodes }, (_, i) => {
      const dir = join(this.dir, `pg${i}`);
      return new PatroniNode(`pg${i}`, options.basePort + 3 + 2 * i, options.basePort + 4 + 2 * i, dir);
    });
  }

  /** The endpoint (HAProxy): always the current primary, as an application connects. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.endpointPort}/postgres`;
  }

  async start(): Promise<void> {
    running.add(this);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => {
        for (const c of running) c.killNow();
      });
    }
    await this.startEtcd();
    if (this.options.isolatable) {
      for (const node of this.nodes) {
        const proxies = {
          etcd: new TcpProxy(this.etcdPort),
          postgres: new TcpProxy(node.port),
          rest: new TcpProxy(node.restPort),
        };
        for (const proxy of Object.values(proxies)) await proxy.start();
        node.proxies = proxies;
      }
    }
    for (const node of this.nodes) this.startNode(node);
    await this.waitForMembers(this.nodes.length);
    await this.startHaproxy();
    // HAProxy takes every server for up until its first checks say otherwise: only once the
    // replicas are marked down (2 checks 500 ms apart) does the endpoint lead to the leader alone.
    await waitUntil(() => this.haproxyReady(), {
      timeout: this.options.timeoutMs,
      interval: 200,
      message: 'HAProxy to mark the replicas down and reach the Patroni leader',
    });
  }

  private async haproxyReady(): Promise<boolean> {
    const log = safeRead(join(this.dir, 'haproxy.log'));
    const down = this.nodes.filter((n) => log.includes(`Server primary/${n.name} is DOWN`)).length;
    return down >= this.nodes.length - 1 && (await this.writable());
  }

  private async startEtcd(): Promise<void> {
    const data = join(this.dir, 'etcd');
    const peer = `http://127.0.0.1:${this.etcdPort + 1}`;
    this.etcd = spawnLogged(
      '/usr/bin/etcd',
      [
        '--name=holdfast',
        `--data-dir=${data}`,
        `--listen-client-urls=http://127.0.0.1:${this.etcdPort}`,
        `--advertise-client-urls=http://127.0.0.1:${this.etcdPort}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=holdfast=${peer}`,
        '--enable-v2=true',
        '--unsafe-no-fsync',
      ],
      {},
      join(this.dir, 'etcd.log'),
      this.dir,
    );
    await waitUntil(
      async () => {
        try {
          return (
            await fetch(`http://127.0.0.1:${this.etcdPort}/health`, { signal: AbortSignal.timeout(1_000) })
          ).ok;
        } catch {
          return false;
        }
      },
      { timeout: this.options.timeoutMs, interval: 100, message: 'etcd to answer' },
    );
  }

  /** Starts (or starts again) the Patroni process of `node`. */
  startNode(node: PatroniNode): void {
    if (!existsSync(node.dir)) {
      mkdirSync(node.dir, { mode: 0o700 });
      if (this.owner.uid !== undefined) chownSync(node.dir, this.owner.uid, this.owner.gid!);
    }
    const { ttl, loopWait, retryTimeout, synchronous, primaryStartTimeout } = this.options;
    const hba = [
      'local all all trust',
      'host all all 127.0.0.1/32 trust',
      'host replication all 127.0.0.1/32 trust',
    ];
    const config = {
      scope: `holdfast-${this.etcdPort}`,
      name: node.name,
      log: { level: 'INFO' },
      restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
      // Through the node's proxy, if any: `use_proxies` keeps Patroni from discovering etcd's own
      // address (and going around the proxy).
      etcd: node.proxies
        ? { host: `127.0.0.1:${node.proxies.etcd.port}`, use_proxies: true }
        : { host: `127.0.0.1:${this.etcdPort}` },
      bootstrap: {
        dcs: {
          ttl,
          loop_wait: loopWait,
          retry_timeout: retryTimeout,
          maximum_lag_on_failover: 1_048_576,
          synchronous_mode: synchronous,
          ...(primaryStartTimeout !== undefined ? { primary_start_timeout: primaryStartTimeout } : {}),
          postgresql: {
            use_pg_rewind: true,
            use_slots: true,
            parameters: {
              wal_level: 'replica',
              hot_standby: 'on',
              wal_log_hints: 'on',
              max_wal_senders: 10,
              max_replication_slots: 10,
              wal_keep_size: '64MB',
              max_connections: 100,
            },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { auth: 'trust' }],
      },
      postgresql: {
        listen: `127.0.0.1:${node.port}`,
        connect_address: `127.0.0.1:${node.port}`,
        data_dir: node.dataDir,
        bin_dir: postgresBinDir(),
        pgpass: join(node.dir, 'pgpass'),
        authentication: {
          superuser: { username: 'postgres', password: 'postgres' },
          replication: { username: 'replicator', password: 'replicator' },
          rewind: { username: 'postgres', password: 'postgres' },
        },
        // fsync off as in PrivatePostgres: a killed server keeps what it wrote to the OS.
        parameters: {
          unix_socket_directories: node.dir,
          fsync: 'off',
          full_page_writes: 'on',
          shared_buffers: '16MB',
        },
        pg_hba: hba,
      },
    };
    // YAML is a superset of JSON.
    const file = join(node.dir, 'patroni.yml');
    writeFileSync(file, JSON.stringify(config, null, 2));
    if (this.owner.uid !== undefined) chownSync(file, this.owner.uid, this.owner.gid!);
    node.child = spawnLogged('/usr/bin/patroni', [file], this.owner, join(node.dir, 'patroni.log'), node.dir);
  }

  private async startHaproxy(): Promise<void> {
    const servers = this.nodes
      .map(
        (n) =>
          `  server ${n.name} 127.0.0.1:${n.proxies?.postgres.port ?? n.port} check port ${n.proxies?.rest.port ?? n.restPort}`,
      )
      .join('\n');
    const config = [
      'global',
      '  maxconn 300',
      'defaults',
      '  mode tcp',
      '  timeout connect 2s',
      '  timeout client 30m',
      '  timeout server 30m',
      // A check that takes long is not a down node: Patroni's /primary answers a demoted or
      // stopped leader at once (503, refused); on a loaded machine a healthy one may take over a
      // second, and a check timing out then would mark the primary down and cut its sessions.
      '  timeout check 5s',
      'listen primary',
      `  bind 127.0.0.1:${this.endpointPort}`,
      '  option httpchk GET /primary',
      '  http-check expect status 200',
      // Checked every 500 ms, down after 2 failures, up after 1; a node marked down has its
      // connections closed, so clients reconnect to the new primary instead of hanging.
      '  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
      servers,
      '',
    ].join('\n');
    const file = join(this.dir, 'haproxy.cfg');
    writeFileSync(file, config);
    this.haproxy = spawnLogged(
      '/usr/sbin/haproxy',
      ['-f', file, '-db'],
      {},
      join(this.dir, 'haproxy.log'),
      this.dir,
    );
  }

  /** The members as Patroni's REST API lists them (asked of any node that answers). */
  async members(): Promise<Member[]> {
    for (const node of this.nodes) {
      const answer = await node.rest<{ members?: Member[] }>('/cluster');
      if (answer?.status === 200 && answer.body.members) return answer.body.members;
    }
    return [];
  }

  /** The node that Patroni names leader, if any. */
  async leader(): Promise<PatroniNode | undefined> {
    const leader = (await this.members()).find((m) => m.role === 'leader' && m.state === 'running');
    return this.nodes.find((n) => n.name === leader?.name);
  }

  /** The node that Patroni names leader, once it names one (within the cluster's timeout). */
  async waitForLeader(): Promise<PatroniNode> {
    let leader: PatroniNode | undefined;
    await waitUntil(async () => (leader = await this.leader()) !== undefined, {
      timeout: this.options.timeoutMs,
      interval: 250,
      message: 'Patroni to name a running leader',
    });
    return leader!;
  }

  /**
   * Waits until there is a running leader, `count` members in all are running or streaming, and
   * (in synchronous mode) one of them is the synchronous standby.
   */
  async waitForMembers(count: number, timeoutMs = this.options.timeoutMs): Promise<void> {
    await waitUntil(
      async () => {
        const members = await this.members();
        const up = members.filter((m) => m.state === 'running' || m.state === 'streaming');
        return (
          members.some((m) => m.role === 'leader' && m.state === 'running') &&
          up.length >= count &&
          // In synchronous mode a switchover needs a synchronous standby, named a moment after startup.
          (!this.options.synchronous || members.some((m) => m.role === 'sync_standby'))
        );
      },
      { timeout: timeoutMs, interval: 250, message: `a Patroni leader and ${count} running members` },
    );
  }

  /** A planned switchover to `candidate` (or any replica), through the leader's REST API. */
  async switchover(candidate?: PatroniNode): Promise<void> {
    const leader = await this.waitForLeader();
    // Patroni answers a switchover only once it is over (the old leader demoted, the candidate
    // promoted): on a busy machine that takes longer than the other calls' 3 s.
    const answer = await leader.rest<string>(
      '/switchover',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leader: leader.name, ...(candidate ? { candidate: candidate.name } : {}) }),
      },
      this.options.timeoutMs,
    );
    if (!answer || answer.status !== 200) {
      throw new HoldfastError(
        `PatroniCluster: switchover refused (${answer?.status}: ${JSON.stringify(answer?.body)})`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
  }

  /**
   * Changes Patroni's dynamic configuration (PATCH /config on the leader), e.g.
   * `{ primary_start_timeout: 0 }`. The PATCH sets values (sent again it changes nothing more), so
   * a call that got no answer in time is sent again, within the cluster's timeout.
   */
  async patchConfig(settings: Record<string, unknown>): Promise<void> {
    let answer: { status: number; body: unknown } | undefined;
    try {
      await waitUntil(
        async () => {
          const leader = await this.leader();
          answer = await leader?.rest('/config', {
            method: 'PATCH',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(settings),
          });
          return answer?.status === 200;
        },
        { timeout: this.options.timeoutMs, interval: 500, message: 'Patroni to take the configuration' },
      );
    } catch {
      throw new HoldfastError(
        `PatroniCluster: configuration ${JSON.stringify(settings)} not changed (${answer?.status}: ${JSON.stringify(answer?.body)})`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
  }

  /** Turns Patroni's `synchronous_mode` on or off (PATCH /config) and waits until it holds. */
  async setSynchronous(on: boolean): Promise<void> {
    await this.patchConfig({ synchronous_mode: on });
    this.options.synchronous = on;
    await waitUntil(async () => (await this.members()).some((m) => m.role === 'sync_standby') === on, {
      timeout: this.options.timeoutMs,
      interval: 250,
      message: `synchronous_mode ${on ? 'on' : 'off'}`,
    });
  }

  /** True when the endpoint leads to a writable primary. */
  async writable(): Promise<boolean> {
    try {
      const { stdout } = await run(
        join(postgresBinDir(), 'psql'),
        [this.url, '-tAc', 'SELECT pg_is_in_recovery()'],
        {
          timeout: 3_000,
        },
      );
      return stdout.trim() === 'f';
    } catch {
      return false;
    }
  }

  /** Kills everything at once (the process is exiting). */
  killNow(): void {
    for (const node of this.nodes) {
      signal(node.child?.pid, 'SIGKILL');
      const pid = node.postmasterPid();
      if (pid !== undefined) for (const p of [pid, ...childrenOf(pid)]) signal(p, 'SIGKILL');
    }
    signal(this.haproxy?.pid, 'SIGKILL');
    signal(this.etcd?.pid, 'SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async stopProxies(): Promise<void> {
    for (const node of this.nodes) {
      for (const proxy of Object.values(node.proxies ?? {})) await proxy.stop().catch(() => undefined);
      node.proxies = undefined;
    }
  }

  /** Kills every process and removes the directory (also after a failed test). */
  async destroy(): Promise<void> {
    for (const node of this.nodes) await node.kill().catch(() => undefined);
    for (const child of [this.haproxy, this.etcd]) {
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      signal(child.pid, 'SIGKILL');
      await exited;
    }
    await this.stopProxies();
    running.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Every log of the cluster (Patroni's, etcd's, HAProxy's), for a failed test. */
  logs(): string {
    return [
      ...this.nodes.map((n) => `--- ${n.name}\n${n.log().slice(-4_000)}`),
      `--- haproxy\n${safeRead(join(this.dir, 'haproxy.log')).slice(-2_000)}`,
      `--- etcd\n${safeRead(join(this.dir, 'etcd.log')).slice(-2_000)}`,
    ].join('\n');
  }
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
