import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HoldfastError } from '@holdfast/core/kit';
import { MariadbServer, mariadbServerArgs } from './private-mariadb';
import { waitUntil } from './wait-until';

/** Debian's Galera 4 provider (package galera-4); HOLDFAST_GALERA_PROVIDER overrides. */
export function galeraProvider(env: NodeJS.ProcessEnv = process.env): string {
  const path = env.HOLDFAST_GALERA_PROVIDER ?? '/usr/lib/galera/libgalera_smm.so';
  if (!existsSync(path)) {
    throw new HoldfastError(
      `Galera provider not found at ${path}: install galera-4 or set HOLDFAST_GALERA_PROVIDER`,
      'HOLDFAST_TESTING_CONFIG',
    );
  }
  return path;
}

export interface GaleraClusterOptions {
  /**
   * The first of 4 × `nodes` consecutive ports on 127.0.0.1: per node the SQL port, then Galera's
   * group communication, incremental state transfer and full state transfer (rsync) ports.
   */
  basePort: number;
  /** Nodes (default 3: the smallest cluster that keeps a quorum when one node dies). */
  nodes?: number;
  /** A database created at first start (default 'test'). */
  database?: string;
  /** How long a node's start (a full state transfer included) may take (default 120 s). */
  timeoutMs?: number;
}

/**
 * One node of a GaleraCluster: `mariadbd` with the wsrep provider, in its own directory. Its
 * `crash()` (SIGKILL and start) makes it rejoin through a state transfer, as a crashed node does.
 */
export class GaleraNode extends MariadbServer {
  /** Set for the first start of the first node only: it founds the cluster. */
  bootstrap = false;

  constructor(
    readonly index: number,
    private readonly cluster: { addresses: string; gcommPort: number; istPort: number; sstPort: number },
    options: { port: number; database: string; timeoutMs: number },
  ) {
    super(options);
  }

  /** A node's statements answer within 10 s (its start, a state transfer included, takes longer). */
  protected override get clientTimeoutMs(): number {
    return 10_000;
  }

  async start(): Promise<void> {
    const dir = this.dir ?? (await this.installDb(`galera${this.index}`));
    const { addresses, gcommPort, istPort, sstPort } = this.cluster;
    // Timeouts shorter than Galera's defaults (suspect 5 s, inactive 15 s), so that a dead node
    // is voted out within a few seconds and a test's stall stays short; the ratios stay Galera's.
    const provider = [
      `gmcast.listen_addr=tcp://127.0.0.1:${gcommPort}`,
      `ist.recv_addr=127.0.0.1:${istPort}`,
      'gcache.size=32M',
      'evs.suspect_timeout=PT3S',
      'evs.inactive_timeout=PT6S',
      'evs.inactive_check_period=PT1S',
      'evs.keepalive_period=PT1S',
      'pc.recovery=false',
    ].join(';');
    const bootstrap = this.bootstrap;
    this.bootstrap = false;
    await this.spawnServer(
      'mariadbd',
      [
        ...mariadbServerArgs(dir, this.port, this.owner),
        // What Galera requires of every node.
        '--binlog-format=ROW',
        '--default-storage-engine=InnoDB',
        '--innodb-autoinc-lock-mode=2',
        '--wsrep-on=ON',
        `--wsrep-provider=${galeraProvider()}`,
        `--wsrep-provider-options=${provider}`,
        '--wsrep-cluster-name=holdfast-test',
        `--wsrep-node-name=node${this.index}`,
        `--wsrep-node-address=127.0.0.1:${gcommPort}`,
        `--wsrep-cluster-address=gcomm://${addresses}`,
        '--wsrep-sst-method=rsync',
        `--wsrep-sst-receive-address=127.0.0.1:${sstPort}`,
        ...(bootstrap ? ['--wsrep-new-cluster'] : []),
      ],
      {},
      join(dir, 'stdout.log'),
      () => this.synced(),
    );
  }

  /** True when the node accepts connections and is a synced member of the primary component. */
  async synced(): Promise<boolean> {
    const state = await this.state();
    return state !== undefined && state.ready && state.local === 'Synced' && state.primary;
  }

  /**
   * The node's own view of the cluster (undefined when it does not answer). A node thawed after
   * a SIGSTOP answers with the view it had when it froze (Synced, ready, Primary, the old size)
   * for a few seconds, until its group communication learns that the others voted it out: only
   * its view number (`wsrep_cluster_conf_id`), older than theirs, tells it apart.
   */
  async state(): Promise<GaleraNodeState | undefined> {
    try {
      const out = await this.client(
        'SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ' +
          "('wsrep_ready','wsrep_local_state_comment','wsrep_cluster_status','wsrep_cluster_size','wsrep_cluster_conf_id')",
      );
      const status = new Map(
        out
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split('\t') as [string, string])
          .map(([name, value]) => [name.toLowerCase(), value]),
      );
      return {
        ready: status.get('wsrep_ready') === 'ON',
        local: status.get('wsrep_local_state_comment') ?? '',
        primary: status.get('wsrep_cluster_status') === 'Primary',
        size: Number(status.get('wsrep_cluster_size') ?? 0),
        view: status.get('wsrep_cluster_conf_id') ?? '',
      };
    } catch {
      return undefined;
    }
  }
}

function describe(s: GaleraNodeState): string {
  return `${s.local}, ${s.ready ? 'ready' : 'not ready'}, ${s.primary ? 'primary' : 'non-primary'}, size ${s.size}, view ${s.view}`;
}

/** What a Galera node says of itself and of the cluster (GaleraNode.state). */
export interface GaleraNodeState {
  /** `wsrep_ready` ON: the node takes statements (else they fail with 1047). */
  ready: boolean;
  /** `wsrep_local_state_comment`: Synced, Joining, Joined, Donor/Desynced, Initialized. */
  local: string;
  /** `wsrep_cluster_status` is Primary: the node is in the primary component. */
  primary: boolean;
  /** `wsrep_cluster_size`: the members of the component the node is in. */
  size: number;
  /** `wsrep_cluster_conf_id`: the number of the view (membership) the node is in. */
  view: string;
}

/**
 * A MariaDB Galera cluster of its own for tests: `nodes` mariadbd processes on 127.0.0.1 (each in
 * its own temporary directory, root without a password), synchronous certification-based
 * replication through Debian's galera-4 provider, rsync state transfers. The first node founds the
 * cluster; the others join it. Linux only; as root the nodes run as user mysql.
 */
export class GaleraCluster {
  readonly nodes: GaleraNode[];
  readonly database: string;

  constructor(options: GaleraClusterOptions) {
    const count = options.nodes ?? 3;
    if (!Number.isInteger(count) || count < 1) {
      throw new HoldfastError(
        `GaleraCluster: nodes must be a positive integer, got ${count}`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
    this.database = options.database ?? 'test';
    const ports = (i: number) => ({
      port: options.basePort + 4 * i,
      gcommPort: options.basePort + 4 * i + 1,
      istPort: options.basePort + 4 * i + 2,
      sstPort: options.basePort + 4 * i + 3,
    });
    const addresses = Array.from({ length: count }, (_, i) => `127.0.0.1:${ports(i).gcommPort}`).join(',');
    this.nodes = Array.from(
      { length: count },
      (_, i) =>
        new GaleraNode(
          i,
          { addresses, ...ports(i) },
          { port: ports(i).port, database: this.database, timeoutMs: options.timeoutMs ?? 120_000 },
        ),
    );
    this.nodes[0].bootstrap = true;
  }

  /** Connection URLs, one per node. */
  get urls(): string[] {
    return this.nodes.map((n) => n.url);
  }

  /** Starts the first node (a new cluster), then the others one by one (each joins with a state transfer). */
  async start(): Promise<void> {
    await this.nodes[0].start();
    await this.nodes[0].client(`CREATE DATABASE IF NOT EXISTS \`${this.database}\``);
    for (const node of this.nodes.slice(1)) await node.start();
  }

  /** The number of members in the primary component, as `node` sees it (0 when it does not answer). */
  async size(node = this.nodes.find((n) => n.pid !== undefined)): Promise<number> {
    if (!node) return 0;
    try {
      const out = await node.client("SHOW STATUS LIKE 'wsrep_cluster_size'");
      return Number(out.trim().split('\t')[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /**
   * Waits until every running node is a synced, ready member of the primary component and all of
   * them are in the same view of `members` members. The same view matters after a SIGSTOP: the
   * thawed node still reports its old view (Synced, ready, Primary) for seconds, then goes
   * non-primary (1047 to every statement, a DDL fails with 1205 as it cannot enter total order)
   * until it has rejoined; a wait on its own status or on the others' size alone returned at once.
   */
  async waitForSize(members: number, timeoutMs = 120_000): Promise<void> {
    await waitUntil(
      async () => {
        const running = this.nodes.filter((n) => n.pid !== undefined);
        const states = await Promise.all(running.map((n) => n.state()));
        const converged =
          states.every((s) => s?.ready && s.local === 'Synced' && s.primary && s.size === members) &&
          new Set(states.map((s) => s?.view)).size === 1;
        if (converged) return true;
        // Thrown, not returned: the timeout's error shows the last states seen.
        throw new Error(
          states.map((s, i) => `node${running[i].index} ${s ? describe(s) : 'does not answer'}`).join('; '),
        );
      },
      {
        timeout: timeoutMs,
        interval: 200,
        message: `the Galera cluster to have ${members} synced members in one view`,
      },
    );
  }

  /** Stops every node and removes its directory (also after a failed test). */
  async destroy(): Promise<void> {
    // Killed, not stopped: a clean leave of each node costs seconds, and the data is thrown away.
    await Promise.all(this.nodes.map((node) => node.kill().catch(() => node.killNow())));
    for (const node of this.nodes) await node.destroy().catch(() => node.killNow());
  }
}
