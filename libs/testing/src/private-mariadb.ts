import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PrivateServer } from './private-server';
import { account, type Account } from './processes';

const run = promisify(execFile);

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

/**
 * A mariadbd of a test's own, root without a password, as user mysql when run as root: what a
 * private server and a Galera node share (the data directory, the client, the log).
 */
export abstract class MariadbServer extends PrivateServer {
  protected readonly owner = account('mysql');
  protected readonly cleanStopSignal = 'SIGTERM';
  /** How long one `client` call may take (default: the start and stop timeout). */
  protected get clientTimeoutMs(): number {
    return this.timeoutMs;
  }

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/${this.database}`;
  }

  /** A fresh data directory, `holdfast-<tag>-<port>-*` in the temporary folder, with `mariadb-install-db`. */
  protected async installDb(tag: string): Promise<string> {
    await this.assertPortFree();
    const dir = this.makeDir(tag, this.owner);
    this.dir = dir;
    await run(
      'mariadb-install-db',
      [
        '--no-defaults',
        `--datadir=${join(dir, 'data')}`,
        ...(this.owner.uid !== undefined ? ['--user=mysql'] : []),
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
      ],
      { timeout: this.timeoutMs },
    );
    return dir;
  }

  /** Runs statements with the mariadb command-line client; returns its tab-separated output. */
  async client(sql: string): Promise<string> {
    const { stdout } = await run(
      'mariadb',
      ['--no-defaults', '-h', '127.0.0.1', '-P', String(this.port), '-u', 'root', '-N', '-e', sql],
      { timeout: this.clientTimeoutMs },
    );
    return stdout;
  }

  /**
   * SIGKILL and start (MariaDB has no "immediate" shutdown of its own); a Galera node rejoins its
   * cluster with a state transfer.
   */
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

/**
 * A private MariaDB server: `mariadb-install-db` into its own data directory, `mariadbd` on
 * 127.0.0.1:`port` with its own socket, root without a password, as user mysql when run as root.
 */
export class PrivateMariadb extends MariadbServer {
  async start(): Promise<void> {
    const fresh = !this.dir;
    const dir = this.dir ?? (await this.installDb('mariadb'));
    await this.spawnServer(
      'mariadbd',
      [
        ...mariadbServerArgs(dir, this.port, this.owner),
        '--skip-log-bin',
        ...Object.entries(this.settings).map(([name, value]) => `--${name}=${value}`),
      ],
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
}
