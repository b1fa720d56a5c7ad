import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { sleep } from '@holdfast/core/kit';
import { forkTs, uniqueTablePrefix, waitForMessage } from '@holdfast/testing';
import { MessageAcceptor } from '@holdfast/inbox';
import { Test } from '@nestjs/testing';
import { InboxModule } from '@holdfast/inbox';
import type { DataSource } from 'typeorm';
import type { AppLoadWorkerConfig } from '../workers/app-load.worker';

const WORKER = join(__dirname, '../workers/app-load.worker.ts');

/** The load of #31: a pool of 5 shared with 30 loops of 200 ms queries. */
export const APP_LOAD = { poolSize: 5, loops: 30, queryMs: 200 } as const;

export interface AppLoadRun {
  role: AppLoadWorkerConfig['role'];
  db: 'postgres' | 'mariadb';
  /** How long the owner runs under load. */
  seconds: number;
  loops?: number;
  queryMs?: number;
  poolSize?: number;
  /** Inbox: messages to deliver, the lease, a handler's time, the batch. */
  messages?: number;
  visibilityTimeout?: number;
  handlerMs?: number;
  batchSize?: number;
  /** Simba: ttl and transition, ms. */
  ttl?: number;
  transition?: number;
  /** Seeds the inbox table (the inbox run needs the application's DataSource for that). */
  dataSource?: DataSource;
}

export interface AppLoadResult {
  /** Lease / leadership losses of the loaded owner (Simba released, locker lost). */
  losses: number;
  /** Acquisitions by the idle standby. */
  takeovers: number;
  /** The loaded process's longest Holdfast call (connection wait included), ms. */
  longestMs: number;
  longestWhat: string;
  /** Application queries the loops completed (the load really ran). */
  appQueries: number;
  /** Inbox: deliveries beyond the first per message, and messages never delivered. */
  duplicates: number;
  undelivered: number;
}

interface Proc {
  child: ChildProcess;
  messages: Array<{ t: string; [k: string]: unknown }>;
}

function start(config: AppLoadWorkerConfig): Proc {
  const child = forkTs(WORKER, [], {
    env: { ...process.env, HOLDFAST_APP_LOAD_WORKER: JSON.stringify(config) },
  });
  const proc: Proc = { child, messages: [] };
  child.on('message', (m: { t: string }) => proc.messages.push(m));
  return proc;
}

async function stop(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.child.once('exit', resolve));
  proc.child.send({ t: 'stop' });
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 20_000))),
  ]);
  clearTimeout(timer);
  if (!done) proc.child.kill('SIGKILL');
}

async function acceptMessages(dataSource: DataSource, prefix: string, count: number): Promise<void> {
  const app = await Test.createTestingModule({
    imports: [InboxModule.forRoot({ dataSource, tablePrefix: prefix, schema: 'create', deliver: false })],
  })
    .compile()
    .then((m) => m.init());
  try {
    await app.get(MessageAcceptor).acceptAll(
      Array.from({ length: count }, (_, i) => ({
        type: { namespace: 'load', name: 'item' },
        payload: { i },
      })),
    );
  } finally {
    await app.close();
  }
}

/**
 * An owner (or claiming node) under the application's load, beside an idle standby in another
 * process: the owner takes the lease first, then its application loops start for `seconds`.
 */
export async function runAppLoad(run: AppLoadRun): Promise<AppLoadResult> {
  const prefix = uniqueTablePrefix(`load_${run.role.replace('-', '')}`);
  const base = {
    role: run.role,
    db: run.db,
    prefix,
    queryMs: run.queryMs ?? APP_LOAD.queryMs,
    poolSize: run.poolSize ?? APP_LOAD.poolSize,
    mutex: `load-${process.pid}-${Date.now()}`,
    visibilityTimeout: run.visibilityTimeout,
    handlerMs: run.handlerMs,
    batchSize: run.batchSize,
    ttl: run.ttl,
    transition: run.transition,
  };
  if (run.role === 'inbox') {
    if (!run.dataSource) throw new Error('the inbox run needs a DataSource to seed with');
    await acceptMessages(run.dataSource, prefix, run.messages ?? 100);
  }
  const owner = start({ ...base, name: 'owner', loops: run.loops ?? APP_LOAD.loops });
  let standby: Proc | undefined;
  try {
    await waitForMessage(owner.child, (m: { t?: string }) => m?.t === 'ready', 60_000);
    if (run.role !== 'inbox') {
      await waitForMessage(owner.child, (m: { t?: string }) => m?.t === 'acquired', 60_000);
    }
    owner.child.send({ t: 'load' });
    await waitForMessage(owner.child, (m: { t?: string }) => m?.t === 'loading');
    // The standby (an idle node for the inbox) starts once the owner holds the lease.
    standby = start({ ...base, name: 'standby', loops: 0 });
    await waitForMessage(standby.child, (m: { t?: string }) => m?.t === 'ready', 60_000);
    await sleep(run.seconds * 1_000);
    owner.child.send({ t: 'stats' });
    const stats = await waitForMessage<{
      t: string;
      longestMs: number;
      longestWhat: string;
      queries: number;
    }>(owner.child, (m) => m?.t === 'stats');
    const count = (p: Proc | undefined, t: string) => p?.messages.filter((m) => m.t === t).length ?? 0;
    const delivered = new Map<string, number>();
    for (const m of [...owner.messages, ...(standby?.messages ?? [])]) {
      if (m.t === 'delivered') delivered.set(String(m.id), (delivered.get(String(m.id)) ?? 0) + 1);
    }
    const deliveries = [...delivered.values()].reduce((a, b) => a + b, 0);
    return {
      losses: count(owner, 'released') + count(owner, 'lost'),
      takeovers: count(standby, 'acquired'),
      longestMs: Math.round(stats.longestMs),
      longestWhat: stats.longestWhat,
      appQueries: stats.queries,
      duplicates: deliveries - delivered.size,
      undelivered: run.role === 'inbox' ? (run.messages ?? 100) - delivered.size : 0,
    };
  } finally {
    await Promise.all([stop(owner), standby ? stop(standby) : Promise.resolve()]);
  }
}
