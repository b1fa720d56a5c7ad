import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import type { Account } from '../processes';

/** Starts `command` as `owner` in `cwd`, its output appended to `logFile`. */
export function spawnLogged(
  command: string,
  args: string[],
  owner: Account,
  logFile: string,
  cwd: string,
): ChildProcess {
  const log = openSync(logFile, 'a');
  try {
    return spawn(command, args, {
      ...owner,
      cwd,
      stdio: ['ignore', log, log],
      env: { ...process.env, LC_ALL: 'C.UTF-8' },
    });
  } finally {
    closeSync(log);
  }
}

/** A file's text, or '' when it cannot be read (a log not written yet). */
export function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
