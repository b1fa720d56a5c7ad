import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The module a forked `.ts` worker preloads: HOLDFAST_TS_REGISTER when set, else the kit's own
 * `ts-register.js` (shipped at the package root), which uses the project's tsconfig.json with
 * @swc-node/register or ts-node.
 */
export function tsRegisterPath(): string {
  const override = process.env.HOLDFAST_TS_REGISTER;
  if (override) return resolve(override);
  // src/testing and dist/testing are both two levels below the package root.
  const own = resolve(__dirname, '../../ts-register.js');
  if (!existsSync(own)) throw new Error(`@holdfast/core/testing: ${own} is missing`);
  return own;
}

/**
 * Forks a TypeScript worker script as a real process with IPC. Use for multi-instance tests:
 * `child.kill('SIGKILL')` kills it without any cleanup, as a crash would.
 */
export function forkTs(script: string, args: string[] = [], options: ForkOptions = {}): ChildProcess {
  const execArgv = script.endsWith('.ts') ? ['-r', tsRegisterPath()] : [];
  return fork(script, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...options,
    execArgv: [...execArgv, ...(options.execArgv ?? [])],
  });
}

/** Resolves with the first IPC message matching `predicate` (rejects after `timeoutMs`). */
export function waitForMessage<T = unknown>(
  child: ChildProcess,
  predicate: (m: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`no matching message from pid ${child.pid} within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (m: unknown) => {
      if (predicate(m as T)) {
        clearTimeout(timer);
        child.off('message', onMessage);
        resolvePromise(m as T);
      }
    };
    child.on('message', onMessage);
  });
}

/** Waits for a child to exit (or kills it with SIGKILL after `timeoutMs`). */
export function waitForExit(child: ChildProcess, timeoutMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolvePromise(code);
    });
  });
}
