import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, childrenOf, signal } from '../processes';
import type { TcpProxy } from '../tcp-proxy';
import { waitUntil } from '../wait-until';
import { HoldfastError } from '@holdfast/core/kit';

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
    if (!this.proxies)
      throw new HoldfastError(
        `${this.name}: isolate() needs a cluster started with isolatable`,
        'HOLDFAST_TESTING_CONFIG',
      );
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
