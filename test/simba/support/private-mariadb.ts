import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';

const run = promisify(execFile);

/**
 * A private MariaDB server (own datadir, port and socket), so that server-wide counters
 * (`SHOW GLOBAL STATUS`) count this test's statements only, never the shared server's.
 */
export class PrivateMariaDb {
  readonly dir = mkdtempSync(join(tmpdir(), 'simba-maria-'));
  private server?: ChildProcess;

  constructor(readonly port: number) {}

  get url(): string {
    return `mysql://root@127.0.0.1:${this.port}/simba`;
  }

  async start(): Promise<void> {
    const user = userInfo().uid === 0 ? ['--user=root'] : [];
    await run('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${join(this.dir, 'data')}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...user,
    ]);
    this.server = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(this.dir, 'mysqld.sock')}`,
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        '--skip-log-bin',
        '--innodb-buffer-pool-size=64M',
        '--innodb-flush-log-at-trx-commit=2',
        ...user,
      ],
      { stdio: 'ignore' },
    );
    const end = Date.now() + 60_000;
    for (;;) {
      try {
        const ds = await new DataSource({
          type: 'mariadb',
          url: `mysql://root@127.0.0.1:${this.port}/mysql`,
          connectTimeout: 1_000,
        }).initialize();
        await ds.query('CREATE DATABASE IF NOT EXISTS simba');
        await ds.destroy();
        return;
      } catch (error) {
        if (Date.now() > end) throw error;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  async stop(): Promise<void> {
    if (this.server && this.server.exitCode === null) {
      const exited = new Promise((r) => this.server!.once('exit', r));
      this.server.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (this.server.exitCode === null) this.server.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
