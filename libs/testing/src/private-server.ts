import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HoldfastError } from '@holdfast/core/kit';
import { alive, childrenOf, portOpen, signal, threadsStopped, type Account } from './processes';
import { waitUntil } from './wait-until';

/** Every server this process started, killed if the process exits without stopping them. */
const running = new Set<PrivateServer>();
let exitHookInstalled = false;
function track(server: PrivateServer): void {
  running.add(server);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const s of running) s.killNow();
  });
}

export interface PrivateServerOptions {
  /** TCP port on 127.0.0.1. */
  port: number;
  /** A database created at first start (default 'test'). */
  database?: string;
  /** How long start and stop may take (default 60 s). */
  timeoutMs?: number;
  /**
   * Server settings on its command line, over the kit's own (`max_connections: 30`): PostgreSQL
   * `-c name=value`, MariaDB `--name=value`.
   */
  settings?: Record<string, string | number>;
}

/**
 * A database server of a test's own, in a temporary directory on a given port, which the test
 * may stop, crash, restart and freeze: the shared servers are never touched. The server runs as
 * a child of this process (so a killed server is reaped, never left as a zombie). Linux only.
 */
export abstract class PrivateServer {
  readonly port: number;
  readonly database: string;
  protected readonly timeoutMs: number;
  protected readonly settings: Record<string, string | number>;
  protected dir?: string;
  private child?: ChildProcess;

  constructor(options: PrivateServerOptions) {
    this.port = options.port;
    this.database = options.database ?? 'test';
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.settings = options.settings ?? {};
  }

  /** A connection URL (TypeORM `url`). */
  abstract get url(): string;
  /** Creates the data directory on first use, starts the server, and waits until it accepts connections. */
  abstract start(): Promise<void>;
  /** An abrupt restart: PostgreSQL's immediate shutdown (`pg_ctl restart -m immediate`); MariaDB SIGKILL and start. */
  abstract restart(): Promise<void>;
  /** The server's log so far. */
  abstract log(): string;

  /** The main server process, while it runs. */
  get pid(): number | undefined {
    const child = this.child;
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
  }

  /** Every process of the server (the main one first). */
  protected processes(): number[] {
    const pid = this.pid;
    if (pid === undefined || !alive(pid)) return [];
    return [pid, ...childrenOf(pid)];
  }

  /** Starts the server process and waits until `ready` says it accepts connections. */
  protected async spawnServer(
    command: string,
    args: string[],
    owner: Account,
    logFile: string,
    ready: () => Promise<boolean>,
  ): Promise<void> {
    await this.assertPortFree();
    track(this);
    const log = openSync(logFile, 'a');
    try {
      this.child = spawn(command, args, {
        ...owner,
        stdio: ['ignore', log, log],
        env: { ...process.env, LC_ALL: 'C' },
      });
    } finally {
      closeSync(log);
    }
    const child = this.child;
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, sig) =>
        reject(
          new Error(
            `${command} exited during start (${code ?? sig}); log tail:\n${this.log().slice(-2_000)}`,
          ),
        ),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([
      waitUntil(ready, {
        timeout: this.timeoutMs,
        interval: 100,
        message: `the private server on port ${this.port} to accept connections`,
      }),
      exited,
    ]);
  }

  /** Sends `sig` to the server and waits for it to exit and its port to close. */
  protected async signalAndWait(sig: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || this.pid === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(sig);
    await exited;
    await this.waitForPort(false);
  }

  /** Stops the server cleanly and waits for it to exit. */
  async stop(): Promise<void> {
    await this.signalAndWait(this.cleanStopSignal);
  }

  protected abstract readonly cleanStopSignal: NodeJS.Signals;

  /** SIGKILL of every server process, as a crash or an OOM kill would do; the server stays down. */
  async kill(): Promise<void> {
    const pids = this.processes();
    for (const pid of pids) signal(pid, 'SIGKILL');
    await waitUntil(() => pids.every((pid) => !alive(pid)) && this.pid === undefined, {
      timeout: this.timeoutMs,
      message: `the private server on port ${this.port} to die`,
    });
    await this.waitForPort(false);
  }

  /** SIGKILL of every server process, then start again. */
  async crash(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /**
   * SIGSTOP of every server process: connections stay open and nothing answers. Resolves once
   * every thread of them has stopped: on a busy machine a multithreaded server takes the signal
   * late (one of its threads must run to begin the stop), and a thread that a query wakes
   * meanwhile still answers it.
   */
  async pause(): Promise<void> {
    const pids = this.processes();
    for (const pid of pids) signal(pid, 'SIGSTOP');
    await waitUntil(() => pids.every(threadsStopped), {
      timeout: this.timeoutMs,
      interval: 5,
      message: `every thread of the private server on port ${this.port} to stop`,
    });
  }

  /** SIGCONT of every server process. */
  resume(): void {
    for (const pid of [...this.processes()].reverse()) signal(pid, 'SIGCONT');
  }

  /** Stops the server (killing it if a clean stop fails) and removes its directory. */
  async destroy(): Promise<void> {
    if (this.pid !== undefined) {
      this.resume();
      await this.stop().catch(() => this.kill());
    }
    running.delete(this);
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  /** Synchronous last resort at process exit. */
  killNow(): void {
    for (const pid of this.processes()) signal(pid, 'SIGKILL');
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  protected async waitForPort(open: boolean): Promise<void> {
    await waitUntil(async () => (await portOpen(this.port)) === open, {
      timeout: this.timeoutMs,
      interval: 100,
      message: `the private server on port ${this.port} to ${open ? 'accept connections' : 'close its port'}`,
    });
  }

  protected makeDir(tag: string, owner: Account): string {
    const dir = mkdtempSync(join(tmpdir(), `holdfast-${tag}-${this.port}-`));
    if (owner.uid !== undefined) chownSync(dir, owner.uid, owner.gid!);
    return dir;
  }

  protected async assertPortFree(): Promise<void> {
    if (await portOpen(this.port)) {
      throw new HoldfastError(
        `Private database server: port ${this.port} is already in use; pick another port`,
        'HOLDFAST_TESTING_CONFIG',
      );
    }
  }
}
