import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { TsRegisterMissingError, WaitTimeoutError } from './errors';

/**
 * The module a forked `.ts` worker preloads: HOLDFAST_TS_REGISTER when set, else the kit's own
 * `ts-register.js` (shipped at the package root), which uses the project's tsconfig.json with
 * @swc-node/register or ts-node.
 */
export function tsRegisterPath(): string {
  const override = process.env.HOLDFAST_TS_REGISTER;
  if (override) return resolve(override);
  // src and dist are both one level below the package root.
  const own = resolve(__dirname, '../ts-register.js');
  if (!existsSync(own)) throw new TsRegisterMissingError(own);
  return own;
}

/** A test runner's sink for output (this repository's quiet Jest environment sets one). */
interface TestLogSink {
  push(line: string): void;
}

/**
 * Sends a child's stdout and stderr, line by line, to the test runner's log sink when there is
 * one (output then shows only when a test fails); otherwise the child writes to the terminal.
 */
export function captureOutput(child: ChildProcess, label = `pid ${child.pid}`): ChildProcess {
  const sink = (globalThis as { __holdfastTestLog?: TestLogSink }).__holdfastTestLog;
  const write = (line: string) => {
    if (sink) sink.push(`[${label}] ${line}`);
    else process.stdout.write(`${line}\n`);
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) write(line);
    });
    stream.on('end', () => {
      if (rest) write(rest);
    });
  }
  return child;
}

/** Whether forked workers' output should go to the test runner's log sink. */
function quietTestRun(): boolean {
  return Boolean((globalThis as { __holdfastTestLog?: TestLogSink }).__holdfastTestLog);
}

/**
 * Forks a TypeScript worker script as a real process with IPC. Use for multi-instance tests:
 * `child.kill('SIGKILL')` kills it without any cleanup, as a crash would. Under a test runner
 * with a log sink, and unless `stdio` is given, the worker's output goes to that sink.
 */
export function forkTs(script: string, args: string[] = [], options: ForkOptions = {}): ChildProcess {
  const execArgv = script.endsWith('.ts') ? ['-r', tsRegisterPath()] : [];
  const quiet = options.stdio === undefined && quietTestRun();
  const child = fork(script, args, {
    stdio: quiet ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'inherit', 'inherit', 'ipc'],
    ...options,
    execArgv: [...execArgv, ...(options.execArgv ?? [])],
  });
  return quiet ? captureOutput(child, `${script.split('/').pop()} pid ${child.pid}`) : child;
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
      reject(new WaitTimeoutError(`no matching message from pid ${child.pid} within ${timeoutMs} ms`));
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
