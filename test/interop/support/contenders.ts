import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { forkTs } from '@holdfast/testing';
import type { ServerDatabase } from './seed-ddl';
import { jdbcUrl, spawnJava } from './java';

/** One contending process, Java or Holdfast, as the orchestrating test sees it. */
export interface Contender {
  readonly slot: string;
  /** The process's id in the history: `<slot>#<incarnation>`. */
  readonly proc: string;
  readonly child: ChildProcess;
  ready: boolean;
  owner: boolean;
  paused: boolean;
  /** The last lines it wrote to stderr and any error it reported (shown only when a test fails). */
  readonly output: string[];
  pause(): void;
  resume(): void;
}

export interface ContendSetup {
  db: ServerDatabase;
  prefix: string;
  mutex: string;
  history: string;
  ttl: number;
  transition: number;
}

const WORKER = join(__dirname, '..', 'workers', 'holdfast-contender.worker.ts');

/** Keeps distinct lines (their Nest timestamps and pids aside), at most 20. */
function keep(output: string[], line: string): void {
  const text = line.replace(/^\[Nest\] \d+\s+- [^A-Z]*(AM|PM)?\s*/, '');
  if (output.length < 20 && !output.includes(text)) output.push(text);
}

export function alive(c: Contender): boolean {
  return c.child.exitCode === null && c.child.signalCode === null;
}

/** Simba's SQL from Java (test/interop/java/.../SimbaContender.java). */
export async function javaContender(setup: ContendSetup, slot: string, proc: string): Promise<Contender> {
  const child = await spawnJava('SimbaContender', [
    jdbcUrl(setup.db),
    `${setup.prefix}simba_mutex`,
    setup.mutex,
    String(setup.ttl),
    String(setup.transition),
    setup.history,
    proc,
  ]);
  const contender: Contender = {
    slot,
    proc,
    child,
    ready: false,
    owner: false,
    paused: false,
    output: [],
    pause() {
      this.paused = true;
      child.stdin.write('pause\n');
    },
    resume() {
      this.paused = false;
      child.stdin.write('resume\n');
    },
  };
  child.stdin.on('error', () => undefined); // writing to a killed process
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('ready')) contender.ready = true;
    else if (line.startsWith('acquired')) contender.owner = true;
    else if (line === 'released') contender.owner = false;
  });
  createInterface({ input: child.stderr }).on('line', (line) => keep(contender.output, line));
  child.on('exit', () => (contender.owner = false));
  return contender;
}

/** Holdfast's SimbaModule in its own process (workers/holdfast-contender.worker.ts). */
export function holdfastContender(setup: ContendSetup, slot: string, proc: string): Contender {
  const child = forkTs(
    WORKER,
    [setup.db, setup.prefix, setup.mutex, setup.history, proc, String(setup.ttl), String(setup.transition)],
    { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: { ...process.env, NO_COLOR: '1' } },
  );
  const contender: Contender = {
    slot,
    proc,
    child,
    ready: false,
    owner: false,
    paused: false,
    output: [],
    pause() {
      this.paused = true;
      if (child.connected) child.send({ type: 'pause' });
    },
    resume() {
      this.paused = false;
      if (child.connected) child.send({ type: 'resume' });
    },
  };
  child.on('message', (m: { type: string; message?: string }) => {
    if (m.type === 'ready') contender.ready = true;
    if (m.type === 'acquired') contender.owner = true;
    if (m.type === 'released') contender.owner = false;
    if (m.type === 'error') keep(contender.output, `error: ${m.message}`);
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', (line) => keep(contender.output, line));
  }
  child.on('exit', () => (contender.owner = false));
  return contender;
}
