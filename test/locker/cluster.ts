import { monotonicMillis } from '@holdfast/core/kit';
import { forkTs, waitForExit } from '@holdfast/testing';
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { WorkerConfig, WorkerMessage } from './workers/locker-worker';

const WORKER = join(__dirname, 'workers', 'locker-worker.ts');

export interface Instance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly messages: WorkerMessage[];
}

/**
 * A set of real application processes sharing one lock; records every IPC message with the
 * worker's monotonic time (CLOCK_MONOTONIC is system-wide on Linux, so times compare).
 */
export class LockerCluster {
  readonly instances = new Map<string, Instance>();

  /**
   * Forks one instance. `launch` replaces how node is started (a network namespace's
   * `ip netns exec`, whose execArgv loads the TypeScript hook); `env` is added to the test's own.
   */
  spawn(
    config: WorkerConfig,
    launch?: { execPath: string; execArgv: string[] },
    env: NodeJS.ProcessEnv = {},
  ): Instance {
    const options = { env: { ...process.env, ...env, HOLDFAST_LOCKER_WORKER: JSON.stringify(config) } };
    const child = launch
      ? fork(WORKER, [], { ...options, ...launch, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] })
      : forkTs(WORKER, [], options);
    const instance: Instance = { name: config.name, child, messages: [] };
    child.on('message', (m) => instance.messages.push(m as WorkerMessage));
    this.instances.set(config.name, instance);
    return instance;
  }

  get(name: string): Instance {
    const instance = this.instances.get(name);
    if (!instance) throw new Error(`no instance ${name}`);
    return instance;
  }

  /** Resolves with the first message (already received or future) that matches. */
  async next<T extends WorkerMessage['type']>(
    name: string,
    type: T,
    timeoutMs = 30_000,
    after = -Infinity,
  ): Promise<Extract<WorkerMessage, { type: T }>> {
    const instance = this.get(name);
    const match = (m: WorkerMessage) => m.type === type && ('at' in m ? m.at >= after : true);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = instance.messages.find(match);
      if (found) return found as Extract<WorkerMessage, { type: T }>;
      if (instance.child.exitCode !== null || instance.child.signalCode !== null) {
        throw new Error(
          `${name} exited (${instance.child.exitCode ?? instance.child.signalCode}) before '${type}'`,
        );
      }
      if (Date.now() > deadline) throw new Error(`${name}: no '${type}' within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The first 'acquired' among `names` at or after `after` (monotonic ms). */
  async firstAcquired(
    names: string[],
    after: number,
    timeoutMs = 30_000,
  ): Promise<{ name: string; at: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hits = names
        .flatMap((n) => this.get(n).messages.map((m) => ({ n, m })))
        .filter(({ m }) => m.type === 'acquired' && m.at >= after)
        .sort((a, b) => (a.m as { at: number }).at - (b.m as { at: number }).at);
      if (hits.length) return { name: hits[0].n, at: (hits[0].m as { at: number }).at };
      if (Date.now() > deadline)
        throw new Error(`none of ${names.join(', ')} acquired within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async status(name: string): Promise<Extract<WorkerMessage, { type: 'status' }>> {
    const instance = this.get(name);
    const before = instance.messages.length;
    instance.child.send({ type: 'status' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = instance.messages.slice(before).find((m) => m.type === 'status');
      if (found) return found as Extract<WorkerMessage, { type: 'status' }>;
      if (Date.now() > deadline) throw new Error(`${name}: no status reply`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** SIGKILL: no cleanup at all, as in a crash. Returns the monotonic kill time. */
  async kill(name: string): Promise<number> {
    const instance = this.get(name);
    const at = monotonicMillis();
    instance.child.kill('SIGKILL');
    await waitForExit(instance.child);
    return at;
  }

  /** Graceful stop through app.close(). Returns the monotonic time the stop was requested. */
  async stop(name: string): Promise<number> {
    const instance = this.get(name);
    const at = monotonicMillis();
    instance.child.send({ type: 'stop' });
    await waitForExit(instance.child, 15_000);
    return at;
  }

  /** Releases the lock in-process (LockerService.stop(), as on shutdown); returns the request time. */
  async release(name: string): Promise<number> {
    const at = monotonicMillis();
    this.get(name).child.send({ type: 'release' });
    await this.next(name, 'released', 15_000, at);
    return at;
  }

  /** Makes a released instance wait for the lock again, as a standby. */
  async rejoin(name: string): Promise<void> {
    const at = monotonicMillis();
    this.get(name).child.send({ type: 'rejoin' });
    await this.next(name, 'rejoined', 15_000, at);
  }

  /**
   * Mastership terms of every instance from its acquired/lost messages; a term still open ends
   * at `now` (or at the kill time passed in `ended`).
   */
  terms(ended: Record<string, number> = {}): { name: string; from: number; to: number }[] {
    const result: { name: string; from: number; to: number }[] = [];
    for (const { name, messages } of this.instances.values()) {
      let from: number | undefined;
      for (const m of messages) {
        if (m.type === 'acquired') from = m.at;
        if ((m.type === 'lost' || m.type === 'stopped' || m.type === 'released') && from !== undefined) {
          result.push({ name, from, to: m.at });
          from = undefined;
        }
      }
      if (from !== undefined) result.push({ name, from, to: ended[name] ?? monotonicMillis() });
    }
    return result;
  }

  async closeAll(): Promise<void> {
    await Promise.all(
      [...this.instances.values()].map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGKILL');
        await waitForExit(child);
      }),
    );
  }
}

/** Pairs of overlapping mastership terms (must be empty: never two masters at once). */
export function overlaps(terms: { name: string; from: number; to: number }[]): string[] {
  const bad: string[] = [];
  for (let i = 0; i < terms.length; i++) {
    for (let j = i + 1; j < terms.length; j++) {
      const a = terms[i];
      const b = terms[j];
      if (a.name !== b.name && a.from < b.to && b.from < a.to)
        bad.push(`${a.name}[${a.from},${a.to}] ~ ${b.name}[${b.from},${b.to}]`);
    }
  }
  return bad;
}
