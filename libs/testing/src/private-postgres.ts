import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HoldfastError } from '@holdfast/core/kit';
import { PrivateServer } from './private-server';
import { account } from './processes';

const run = promisify(execFile);

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
      'HOLDFAST_TESTING_CONFIG',
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
    const fresh = !this.dir;
    const dir = this.dir || (await this.initCluster());
    const settings = {
      listen_addresses: '127.0.0.1',
      unix_socket_directories: dir,
      fsync: 'off',
      full_page_writes: 'off',
      shared_buffers: '16MB',
      max_connections: '60',
      timezone: 'UTC',
      ...this.settings,
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
      () => this.isReady(),
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

  /** A new data directory (initdb), on a port nothing listens on yet: its path, now `this.dir`. */
  private async initCluster(): Promise<string> {
    await this.assertPortFree();
    const dir = (this.dir = this.makeDir('pg', this.owner));
    await this.tool('initdb', [
      '-D',
      join(dir, 'data'),
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    return dir;
  }

  private async isReady(): Promise<boolean> {
    try {
      await this.tool('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(this.port)]);
      return true;
    } catch {
      return false;
    }
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
