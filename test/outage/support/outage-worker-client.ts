/**
 * The test side of workers/outage-worker.ts: forks one, records every message it sends (so a
 * message that came before the test asked for it is not missed), and drives it.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { forkTs } from '@holdfast/testing';

const WORKER = join(__dirname, '..', 'workers', 'outage-worker.ts');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the worker sends over IPC. */
export interface WorkerMessage {
  t: string;
  id?: string;
  what?: string;
  level?: string;
  context?: string;
  message?: string;
  stack?: boolean;
  simba?: boolean;
  locker?: string;
}

/** A TCP port nobody listens on now (private servers must meet neither the shared ones nor each other). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export class OutageWorker {
  readonly child: ChildProcess;
  readonly messages: WorkerMessage[] = [];
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** `url` '-' : the test database from HOLDFAST_TEST_*; `modules`: inbox,simba,locker (any). */
  constructor(
    db: string,
    url: string,
    prefix: string,
    readonly modules: string,
    sqliteFile = '',
  ) {
    this.child = forkTs(WORKER, [db, url, prefix, modules, sqliteFile]);
    this.child.on('message', (m: WorkerMessage) => this.messages.push(m));
    this.ended = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The first message from index `since` on that matches; fails if the worker exits first. */
  async next(match: (m: WorkerMessage) => boolean, since = 0, timeoutMs = 60_000): Promise<WorkerMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(since).find(match);
      if (found) return found;
      if (!this.running)
        throw new Error(
          `the ${this.modules} worker exited (${this.child.exitCode ?? this.child.signalCode})`,
        );
      if (Date.now() > deadline)
        throw new Error(`the ${this.modules} worker sent no matching message within ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  ready(): Promise<WorkerMessage> {
    return this.next((m) => m.t === 'ready');
  }

  /** Its role in `what` ('simba' or 'locker') was acquired at or after message index `since`. */
  acquired(what: string, since = 0, timeoutMs = 60_000): Promise<WorkerMessage> {
    return this.next((m) => m.t === 'acquired' && m.what === what, since, timeoutMs);
  }

  /** Accepts `id` through the worker (again while its database is still coming back), waits for its delivery. */
  async deliver(id: string, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const since = this.messages.length;
      this.child.send({ t: 'accept', id });
      const answer = await this.next(
        (m) => (m.t === 'accepted' || m.t === 'accept-failed') && m.id === id,
        since,
      );
      if (answer.t === 'accepted') break;
      if (Date.now() > deadline) throw new Error(`the ${this.modules} worker could not accept ${id}`);
      await sleep(500);
    }
    await this.next((m) => m.t === 'delivered' && m.id === id, 0, timeoutMs);
  }

  /** Whether it owns the Simba mutex and its locker role, as it says now. */
  async status(): Promise<{ simba?: boolean; locker?: string }> {
    const since = this.messages.length;
    this.child.send({ t: 'status' });
    return (await this.next((m) => m.t === 'status', since)) as { simba?: boolean; locker?: string };
  }

  /** The warning and error lines it logged from message index `since` on. */
  problems(since = 0): WorkerMessage[] {
    return this.messages.slice(since).filter((m) => m.t === 'log');
  }
}
