import { readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { HoldfastError } from '@holdfast/core/kit';

// Processes and ports of the servers a test starts itself (Linux: /proc).

export interface Account {
  uid?: number;
  gid?: number;
}

/** The system account a server must run as when we are root (PostgreSQL refuses root). */
export function account(user: string): Account {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`));
  if (!line)
    throw new HoldfastError(`Private database server: no system user '${user}'`, 'HOLDFAST_TESTING_CONFIG');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Child pids of `pid`, from /proc (Linux). */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** Sends `sig` to `pid`, if there is one and it still runs. */
export function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/**
 * True when every thread of `pid` is stopped (SIGSTOP, a tracer) or the process is gone. A
 * multithreaded process stops thread by thread once one of its threads has taken the signal.
 */
export function threadsStopped(pid: number): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true; // gone
  }
  return tasks.every((task) => {
    // undefined: the thread ended while we looked
    const state = stateIn(`/proc/${pid}/task/${task}/stat`);
    return state === undefined || ['T', 't', 'Z', 'X'].includes(state);
  });
}

/** The state letter of a /proc `stat` file (undefined when it cannot be read). */
function stateIn(statFile: string): string | undefined {
  try {
    const stat = readFileSync(statFile, 'utf8');
    // pid (comm) state ...: comm may hold spaces, so read after the last ')'.
    const end = stat.lastIndexOf(')');
    return stat.slice(end + 2, end + 3);
  } catch {
    return undefined;
  }
}

/** True while `pid` runs (a zombie, dead but not yet reaped, counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = stateIn(`/proc/${pid}/stat`);
  return state !== undefined && state !== 'Z';
}
