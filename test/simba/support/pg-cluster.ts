import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { appendFileSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { TcpProxy } from '@holdfast/testing';

const run = promisify(execFile);

/**
 * PostgreSQL's own tools, run as the `postgres` user when the tests run as root. Asynchronous:
 * the replication proxy lives in this process and must keep forwarding meanwhile.
 */
async function pgTool(tool: string, args: string[]): Promise<void> {
  const bin = execFileSync('pg_config', ['--bindir']).toString().trim();
  const command = join(bin, tool);
  if (userInfo().uid !== 0) await run(command, args);
  else await run('runuser', ['-u', 'postgres', '--', command, ...args]);
}

/**
 * A private PostgreSQL primary and hot standby on their own ports (never the shared server).
 * The standby streams through a TcpProxy (`replication`) that a test can silence; the standby is
 * made with `pg_basebackup -R` through that proxy.
 */
export class PgReplicaPair {
  readonly dir = mkdtempSync(join(tmpdir(), 'simba-pg-'));
  readonly primaryDir = join(this.dir, 'primary');
  readonly standbyDir = join(this.dir, 'standby');
  replication!: TcpProxy;
  private running = new Set<string>();

  constructor(
    readonly primaryPort: number,
    readonly standbyPort: number,
    readonly replicationPort: number,
    private readonly synchronous = false,
  ) {
    if (userInfo().uid === 0) chownSync(this.dir, id('-u', 'postgres'), id('-g', 'postgres'));
  }

  async start(): Promise<void> {
    await pgTool('initdb', ['-D', this.primaryDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    appendFileSync(
      join(this.primaryDir, 'postgresql.conf'),
      [
        `port = ${this.primaryPort}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${this.dir}'`,
        `wal_level = replica`,
        `max_wal_senders = 4`,
        `wal_keep_size = '64MB'`,
        `hot_standby = on`,
        `fsync = off`,
        `wal_sender_timeout = '60s'`,
        `wal_receiver_timeout = '60s'`,
        this.synchronous ? `synchronous_standby_names = '*'` : '',
        '',
      ].join('\n'),
    );
    await this.pgCtl(this.primaryDir, 'start');
    this.replication = new TcpProxy(this.primaryPort);
    await this.replication.start(this.replicationPort);
    await pgTool('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.replicationPort),
      '-U',
      'postgres',
      '-D',
      this.standbyDir,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    // The copied configuration is the primary's: the standby gets its own port, and no
    // synchronous standby of its own (a promoted standby that waits for one hangs every commit).
    appendFileSync(
      join(this.standbyDir, 'postgresql.conf'),
      `port = ${this.standbyPort}\nsynchronous_standby_names = ''\n`,
    );
    await this.pgCtl(this.standbyDir, 'start');
  }

  /** The primary dies at once (no shutdown checkpoint, no final WAL to the standby). */
  crashPrimary(): Promise<void> {
    return this.pgCtl(this.primaryDir, 'stop', ['-m', 'immediate']);
  }

  /** A clean shutdown: with a synchronous standby, everything committed is on it. */
  stopPrimary(): Promise<void> {
    return this.pgCtl(this.primaryDir, 'stop', ['-m', 'fast']);
  }

  promoteStandby(): Promise<void> {
    return pgTool('pg_ctl', ['-D', this.standbyDir, 'promote', '-w', '-t', '60']);
  }

  async stop(): Promise<void> {
    await this.replication?.stop();
    for (const dir of [...this.running]) {
      try {
        await this.pgCtl(dir, 'stop', ['-m', 'immediate']);
      } catch {
        // already down
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async pgCtl(dir: string, action: 'start' | 'stop', extra: string[] = []): Promise<void> {
    const args = ['-D', dir, action, '-w', '-t', '60', ...extra];
    if (action === 'start')
      args.push('-l', join(this.dir, `${dir === this.primaryDir ? 'primary' : 'standby'}.log`));
    if (action === 'start') this.running.add(dir);
    await pgTool('pg_ctl', args);
    if (action === 'stop') this.running.delete(dir);
  }
}

function id(flag: '-u' | '-g', user: string): number {
  return Number(execFileSync('id', [flag, user]).toString().trim());
}
