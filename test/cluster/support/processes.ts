/**
 * What the cluster suites share: worker processes whose IPC messages and output lines are kept
 * with the time they came, the ownership-tick check of the Simba soak, and small waits.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { forkTs, waitForExit } from '@holdfast/testing';

export const CONTENDER = join(__dirname, '..', '..', 'simba', 'workers', 'contender.worker.ts');
export const INBOX_WORKER = join(__dirname, '..', '..', 'inbox', 'workers', 'inbox-worker.ts');
export const FAILOVER_CALLER = join(__dirname, '..', 'workers', 'failover-caller.worker.ts');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  ms: number,
  what: string,
): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    let value: T | undefined;
    try {
      value = await probe();
    } catch {
      value = undefined; // a node that is down answers nothing yet
    }
    if (value !== undefined && value !== null && (value as unknown) !== false) return value as T;
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

export interface Line {
  at: number;
  pid: number;
  line: string;
}

/** Worker processes with their output lines (timestamped) and a handler for their messages. */
export class Workers {
  readonly children: ChildProcess[] = [];
  readonly output: Line[] = [];

  spawn(
    script: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    onMessage: (child: ChildProcess, message: Record<string, unknown>) => void,
  ): ChildProcess {
    const child = forkTs(script, args, {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const pid = child.pid!;
    child.on('message', (m: Record<string, unknown>) => onMessage(child, m));
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (text: string) => {
        for (const line of text.split('\n').filter(Boolean))
          this.output.push({ at: performance.now(), pid, line });
      });
    }
    this.children.push(child);
    return child;
  }

  alive(): ChildProcess[] {
    return this.children.filter((c) => c.exitCode === null && c.signalCode === null);
  }

  /** ERROR lines and stack-trace lines since `from`. */
  errors(from = 0): Line[] {
    return this.output.filter((o) => o.at >= from && (/\bERROR\b/.test(o.line) || /^\s+at /.test(o.line)));
  }

  async stop(): Promise<void> {
    for (const c of this.children) c.kill('SIGKILL');
    await Promise.all(this.children.map((c) => waitForExit(c, 10_000).catch(() => undefined)));
  }
}

/**
 * The contenders' ownership log ("<epoch ms> <token> <pid>" every 20 ms while a process believes
 * it owns), sorted by time: a later tick never has a lower token, and two processes never tick
 * with the same token or in the same millisecond. Overlapping ticks are the ticks of an owner
 * after a higher token was first seen from another process.
 */
export function checkTicks(file: string): {
  violations: string[];
  ticks: number;
  owners: number;
  overlappingTicks: number;
} {
  const entries = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ').map(Number) as [number, number, number])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const violations: string[] = [];
  let overlappingTicks = 0;
  let highest = -Infinity;
  for (let i = 0; i < entries.length; i++) {
    const [t1, k1, p1] = entries[i];
    if (k1 < highest) overlappingTicks++;
    highest = Math.max(highest, k1);
    if (i === 0) continue;
    const [t0, k0, p0] = entries[i - 1];
    if (k1 < k0) violations.push(`token went down: ${t0} ${k0} pid ${p0} then ${t1} ${k1} pid ${p1}`);
    else if (p1 !== p0 && (k1 === k0 || t1 === t0))
      violations.push(`overlap: ${t0} ${k0} pid ${p0} and ${t1} ${k1} pid ${p1}`);
  }
  return {
    violations,
    ticks: entries.length,
    owners: new Set(entries.map((e) => e[2])).size,
    overlappingTicks,
  };
}

/** One `@Failover` call of the failover caller worker; `at` is when it started (performance.now()). */
export interface FailoverCall {
  kind: 'up' | 'down';
  at: number;
  ms: number;
  outcome: 'fresh' | 'stale' | 'error';
  /** The stale value is the last good one. */
  last: boolean;
  error?: string;
}

/**
 * Starts a `@Failover` caller (see workers/failover-caller.worker.ts) among `workers`, on the
 * database its `env` names; its calls go to `calls`. Resolves once its last good value is stored.
 */
export async function startFailoverCaller(
  workers: Workers,
  db: 'postgres' | 'mariadb',
  prefix: string,
  storeTimeout: number,
  env: NodeJS.ProcessEnv,
  calls: FailoverCall[],
): Promise<void> {
  // Started once: a node that has just rejoined a Galera cluster is waited for by the kit
  // (GaleraCluster.waitForSize: one view on every node), and a store's schema step rides out a
  // node that cannot serve yet (1047) itself (SchemaManager), so a start has no outage to outlive.
  let ready = false;
  const child = workers.spawn(FAILOVER_CALLER, [db, prefix, String(storeTimeout), '100'], env, (_, m) => {
    if (m.t === 'ready') ready = true;
    if (m.t === 'call') {
      const call = m as unknown as Omit<FailoverCall, 'at'> & { at: number };
      // The worker's clock is its own: the call started its `ms` before it was reported.
      calls.push({ ...call, at: performance.now() - call.ms });
    }
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  await until(() => ready || exited() || undefined, 60_000, 'the failover caller').catch(() => undefined);
  if (ready) return;
  throw new Error(
    `failover caller: not ready within 60 s${exited() ? ' (it exited)' : ''}\n${workers.output
      .filter((o) => o.pid === child.pid)
      .map((o) => o.line)
      .join('\n')}`,
  );
}

/**
 * What the failover caller saw from `from` (the fault) to `to`: its slowest call over the whole
 * run, the calls in the window, and any answer that is neither the fresh value (upstream up), the
 * last good value (upstream down) nor the upstream's own error (upstream down, store unanswered).
 */
export function failoverSummary(calls: FailoverCall[], from: number, to = Infinity) {
  const during = calls.filter((c) => c.at >= from && c.at <= to);
  const down = calls.filter((c) => c.kind === 'down');
  return {
    calls: calls.length,
    duringFault: during.length,
    slowestMs: Math.round(Math.max(0, ...calls.map((c) => c.ms))),
    slowestDuringFaultMs: Math.round(Math.max(0, ...during.map((c) => c.ms))),
    lastGoodDuringFault: during.filter((c) => c.kind === 'down' && c.outcome === 'stale' && c.last).length,
    upstreamErrorDuringFault: during.filter((c) => c.kind === 'down' && c.outcome === 'error').length,
    unexpected: calls
      .filter((c) =>
        c.kind === 'up'
          ? c.outcome !== 'fresh'
          : !(c.outcome === 'stale' && c.last) && !(c.outcome === 'error' && c.error?.includes('(upstream)')),
      )
      .map((c) => `${c.kind} ${c.outcome}${c.last ? '' : ' (not the last good value)'} ${c.error ?? ''}`),
    lastDown: down.length
      ? `${down[down.length - 1].outcome}${down[down.length - 1].last ? ' (last good)' : ''}`
      : 'none',
  };
}
