import { execFile, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HoldfastError } from '@holdfast/core/kit';
import { startEtcd } from './patroni/etcd';
import { nodesMarkedDown, startHaproxy } from './patroni/haproxy';
import { patroniConfig } from './patroni/patroni-config';
import { PatroniNode } from './patroni/patroni-node';
import { safeRead, spawnLogged } from './patroni/spawn-logged';
import { postgresBinDir } from './private-postgres';
import { account, childrenOf, signal, type Account } from './processes';
import { TcpProxy } from './tcp-proxy';
import { waitUntil } from './wait-until';

export { PatroniNode } from './patroni/patroni-node';

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
    this.etcd = await startEtcd(this.dir, this.etcdPort, this.options.timeoutMs);
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
    this.haproxy = startHaproxy(this.dir, this.nodes, this.endpointPort);
    // HAProxy takes every server for up until its first checks say otherwise: only once the
    // replicas are marked down (2 checks 500 ms apart) does the endpoint lead to the leader alone.
    await waitUntil(() => this.haproxyReady(), {
      timeout: this.options.timeoutMs,
      interval: 200,
      message: 'HAProxy to mark the replicas down and reach the Patroni leader',
    });
  }

  private async haproxyReady(): Promise<boolean> {
    return nodesMarkedDown(this.dir, this.nodes) >= this.nodes.length - 1 && (await this.writable());
  }

  /** Starts (or starts again) the Patroni process of `node`. */
  startNode(node: PatroniNode): void {
    if (!existsSync(node.dir)) {
      mkdirSync(node.dir, { mode: 0o700 });
      if (this.owner.uid !== undefined) chownSync(node.dir, this.owner.uid, this.owner.gid!);
    }
    const config = patroniConfig(node, this.etcdPort, this.options);
    // YAML is a superset of JSON.
    const file = join(node.dir, 'patroni.yml');
    writeFileSync(file, JSON.stringify(config, null, 2));
    if (this.owner.uid !== undefined) chownSync(file, this.owner.uid, this.owner.gid!);
    node.child = spawnLogged('/usr/bin/patroni', [file], this.owner, join(node.dir, 'patroni.log'), node.dir);
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
