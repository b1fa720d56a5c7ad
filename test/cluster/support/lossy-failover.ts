import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { PgReplicaPair } from '../../simba/support/pg-cluster';
import { SwitchableProxy } from '../../simba/support/switchable-proxy';
import { Workers } from './processes';

/** The ports of one rig: the two servers, replication, then one endpoint per process from `endpoint` on. */
export interface LossyFailoverPorts {
  primary: number;
  standby: number;
  replication: number;
  endpoint: number;
}

/** The server's timeline, as the grace reads it (SqlDialect.timeline of PostgreSQL). */
const TIMELINE = `SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint AS timeline`;

/**
 * A lossy PostgreSQL failover, set up for the grace tests (#36 item 4): a private primary with an
 * asynchronous hot standby (PgReplicaPair, whose replication path can be silenced), and worker
 * processes that each reach the database through an endpoint of their own, so that at the failover
 * one of them can be left pointing at the dead primary (a partition, or a slow reconnect) while the
 * others are moved to the promoted standby. Everything it starts goes in `stop()`.
 */
export class LossyFailoverRig {
  readonly dir: string;
  readonly cluster: PgReplicaPair;
  readonly endpoints = new Map<number, SwitchableProxy>();
  readonly workers = new Workers();
  private readonly open: DataSource[] = [];

  constructor(
    private readonly ports: LossyFailoverPorts,
    tag: string,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), `holdfast-${tag}-test-`));
    this.cluster = new PgReplicaPair(ports.primary, ports.standby, ports.replication, false);
  }

  /** Starts both servers; a small DataSource on each, for the test's own reads. */
  async start(): Promise<{ primary: DataSource; standby: DataSource }> {
    await this.cluster.start();
    const [primary, standby] = await Promise.all([
      this.connect(this.ports.primary),
      this.connect(this.ports.standby),
    ]);
    return { primary, standby };
  }

  /** Forks `script` behind a new endpoint pointing at `target` (a server's port). */
  async spawn(
    target: number,
    script: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    onMessage: (child: ChildProcess, message: Record<string, unknown>) => void,
  ): Promise<ChildProcess> {
    const endpoint = new SwitchableProxy(target);
    const port = await endpoint.start(this.ports.endpoint + this.endpoints.size);
    const child = this.workers.spawn(
      script,
      args,
      { ...env, HOLDFAST_TEST_PG_URL: `postgres://postgres@127.0.0.1:${port}/postgres` },
      onMessage,
    );
    this.endpoints.set(child.pid!, endpoint);
    return child;
  }

  /** Points every endpoint at `target(pid)`. */
  switchEndpoints(target: (pid: number) => number): void {
    for (const [pid, endpoint] of this.endpoints) endpoint.switchTo(target(pid));
  }

  async timeline(db: DataSource): Promise<number> {
    return Number((await db.query(TIMELINE))[0].timeline);
  }

  /** Every line the workers printed, for a failure's message. */
  said(from = 0): string {
    return this.workers.output
      .filter((o) => o.at >= from)
      .map((o) => `  ${o.pid}: ${o.line}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    await this.workers.stop();
    await Promise.all(this.open.splice(0).map((d) => d.destroy().catch(() => undefined)));
    for (const e of this.endpoints.values()) await e.stop();
    await this.cluster.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async connect(port: number): Promise<DataSource> {
    const db = await new DataSource({
      type: 'postgres',
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      poolSize: 2,
      connectTimeoutMS: 3_000,
    }).initialize();
    this.open.push(db);
    return db;
  }
}
