import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HoldfastError } from '@holdfast/core/kit';
import { waitUntil } from './wait-until';

const run = promisify(execFile);

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

export interface Account {
  uid?: number;
  gid?: number;
}

/** The system account a server must run as when we are root (PostgreSQL refuses root). */
export function account(user: string): Account {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line)
    throw new HoldfastError(`Private database server: no system user '${user}'`, 'HOLDFAST_CORE_TEST_CONFIG');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A private mariadbd's command line: its own datadir, port, socket and logs under `dir`, small
 * buffers, and every commit written to the OS (a killed server keeps what it committed).
 */
export function mariadbServerArgs(dir: string, port: number, owner: Account): string[] {
  return [
    '--no-defaults',
    `--datadir=${join(dir, 'data')}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${join(dir, 'mysqld.sock')}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--log-error=${join(dir, 'error.log')}`,
    ...(owner.uid !== undefined ? ['--user=mysql'] : []),
    '--skip-name-resolve',
    '--innodb-buffer-pool-size=32M',
    '--innodb-log-file-size=16M',
    '--innodb-flush-log-at-trx-commit=2',
    '--max-connections=100',
  ];
}

/** Child pids of `pid`, from /proc (Linux). */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** True while `pid` runs (a zombie, dead but not yet reaped, counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export interface PrivateServerOptions {
  /** TCP port on 127.0.0.1. */
  port: number;
  /** A database created at first start (default 'test'). */
  database?: string;
  /** How long start and stop may take (default 60 s). */
  timeoutMs?: number;
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
  protected dir?: string;
  private child?: ChildProcess;

  constructor(options: PrivateServerOptions) {
    this.port = options.port;
    this.database = options.database ?? 'test';
    this.timeoutMs = options.timeoutMs ?? 60_000;
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

  /** SIGSTOP of every server process: connections stay open and nothing answers. */
  pause(): void {
    for (const pid of this.processes()) signal(pid, 'SIGSTOP');
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
        'HOLDFAST_CORE_TEST_CONFIG',
      );
    }
  }
}

/** The newest PostgreSQL server binaries (HOLDFAST_PG_BIN overrides), e.g. /usr/lib/postgresql/15/bin. */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOLDFAST_PG_BIN) return env.HOLDFAST_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length) {
    throw new HoldfastError(
      `PostgreSQL server binaries not found under ${root}; set HOLDFAST_PG_BIN`,
      'HOLDFAST_CORE_TEST_CONFIG',
    );
  }
  return join(root, versions[0], 'bin');
}

/**
 * A private PostgreSQL cluster: `initdb` as user postgres (when run as root) in a temporary
 * directory, the server on 127.0.0.1:`port`, trust authentication, fsync off (commits are
 * written to the OS at once, so a killed server keeps them; only a machine crash would lose them).
 */
export class PrivatePostgres extends PrivateServer {
  private readonly bin = postgresBinDir();
  private readonly owner = account('postgres');
  /** PostgreSQL's "fast" shutdown. */
  protected readonly cleanStopSignal = 'SIGINT';

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${this.database}`;
  }

  private tool(name: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
    return run(join(this.bin, name), args, {
      ...this.owner,
      cwd: this.dir,
      timeout: this.timeoutMs,
      env: { ...process.env, LC_ALL: 'C' },
    });
  }

  async start(): Promise<void> {
    let fresh = false;
    if (!this.dir) {
      await this.assertPortFree();
      this.dir = this.makeDir('pg', this.owner);
      await this.tool('initdb', [
        '-D',
        join(this.dir, 'data'),
        '-U',
        'postgres',
        '--auth=trust',
        '-E',
        'UTF8',
        '--no-sync',
      ]);
      fresh = true;
    }
    const dir = this.dir;
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: dir,
      fsync: 'off',
      full_page_writes: 'off',
      shared_buffers: '16MB',
      max_connections: '60',
      timezone: 'UTC',
    };
    await this.spawnServer(
      join(this.bin, 'postgres'),
      [
        '-D',
        join(dir, 'data'),
        '-p',
        String(this.port),
        ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
      ],
      this.owner,
      join(dir, 'server.log'),
      async () => {
        try {
          await this.tool('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(this.port)]);
          return true;
        } catch {
          return false;
        }
      },
    );
    if (fresh)
      await this.tool('createdb', [
        '-h',
        '127.0.0.1',
        '-p',
        String(this.port),
        '-U',
        'postgres',
        this.database,
      ]);
  }

  /** Immediate shutdown (SIGQUIT, what `pg_ctl restart -m immediate` sends), then start: crash recovery runs. */
  async restart(): Promise<void> {
    await this.signalAndWait('SIGQUIT');
    await this.start();
  }

  log(): string {
    try {
      return this.dir ? readFileSync(join(this.dir, 'server.log'), 'utf8') : '';
    } catch {
      return '';
    }
  }
}

/**
 * A private MariaDB server: `mariadb-install-db` into its own data directory, `mariadbd` on
 * 127.0.0.1:`port` with its own socket, root without a password, as user mysql when run as root.
 */
export class PrivateMariadb extends PrivateServer {
  private readonly owner = account('mysql');
  protected readonly cleanStopSignal = 'SIGTERM';

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/${this.database}`;
  }

  async start(): Promise<void> {
    let fresh = false;
    if (!this.dir) {
      await this.assertPortFree();
      this.dir = this.makeDir('mariadb', this.owner);
      await run(
        'mariadb-install-db',
        [
          '--no-defaults',
          `--datadir=${join(this.dir, 'data')}`,
          ...(this.owner.uid !== undefined ? ['--user=mysql'] : []),
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
        ],
        { timeout: this.timeoutMs },
      );
      fresh = true;
    }
    const dir = this.dir;
    await this.spawnServer(
      'mariadbd',
      [...mariadbServerArgs(dir, this.port, this.owner), '--skip-log-bin'],
      {},
      join(dir, 'stdout.log'),
      async () => {
        try {
          await this.client('SELECT 1');
          return true;
        } catch {
          return false;
        }
      },
    );
    if (fresh) await this.client(`CREATE DATABASE IF NOT EXISTS \`${this.database}\``);
  }

  /** Runs one statement with the mariadb command-line client. */
  async client(sql: string): Promise<string> {
    const { stdout } = await run(
      'mariadb',
      ['--no-defaults', '-h', '127.0.0.1', '-P', String(this.port), '-u', 'root', '-N', '-e', sql],
      { timeout: this.timeoutMs },
    );
    return stdout;
  }

  /** SIGKILL and start (MariaDB has no "immediate" shutdown of its own). */
  async restart(): Promise<void> {
    await this.crash();
  }

  log(): string {
    try {
      return this.dir ? readFileSync(join(this.dir, 'error.log'), 'utf8') : '';
    } catch {
      return '';
    }
  }
}
