import { inboxTable } from '@holdfast/inbox';
import { lockTable, type LockTableOptions } from '@holdfast/locker';
import { simbaTable } from '@holdfast/simba';
import { hostname, userInfo } from 'node:os';
import type { MessagesReport } from './messages/inbox-messages';
import type { ReleaseReport } from './release/release';
import { redact } from './database-url';

/** The most ids an audit line names (the count is always whole). */
const IDS_NAMED = 20;

/**
 * Who runs this command, for the audit line: HOLDFAST_ACTOR when the operator's tooling sets it
 * (a bastion, a CI job), else the OS user at this host.
 */
export function cliActor(env: NodeJS.ProcessEnv): string {
  if (env.HOLDFAST_ACTOR) return env.HOLDFAST_ACTOR;
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // A container user without a passwd entry.
  }
  return `${user || env.USER || env.LOGNAME || 'unknown'}@${hostname()}`;
}

function where(options: { url: string | undefined }, table: string): string {
  return `${table} on ${options.url ? redact(options.url) : 'no database'}`;
}

function ids(list: readonly string[]): string {
  const named = list.slice(0, IDS_NAMED).join(', ');
  return list.length > IDS_NAMED ? `${named} and ${list.length - IDS_NAMED} more` : named;
}

/**
 * The audit line of a `holdfast messages` change (on stderr; stdout keeps the result): who, the
 * action, how many it changed of how many selected, where, and the ids changed.
 */
export function auditMessages(
  env: NodeJS.ProcessEnv,
  report: MessagesReport,
  options: { url: string | undefined; prefix?: string },
): string {
  const changed = report.messages.filter((m) => m.result === 'done').map((m) => m.id);
  return (
    `holdfast audit: ${cliActor(env)} ${report.action} ${changed.length} of ${report.messages.length} ` +
    `message(s) in ${where(options, inboxTable({ tablePrefix: options.prefix }))}${changed.length ? `: ${ids(changed)}` : ''}\n`
  );
}

/** The audit line of a `holdfast release` (not a dry run). */
export function auditRelease(
  env: NodeJS.ProcessEnv,
  report: ReleaseReport,
  options: { url: string | undefined; prefix?: string } & Omit<LockTableOptions, 'tablePrefix'>,
): string {
  const tablePrefix = options.prefix ?? '';
  const table =
    report.kind === 'mutex' ? simbaTable({ tablePrefix }) : lockTable({ ...options, tablePrefix });
  const what = `${report.kind} '${report.name}' of owner '${report.owner}'`;
  return `holdfast audit: ${cliActor(env)} release ${what} in ${where(options, table)}: ${report.result}\n`;
}

/** The audit line of a `holdfast messages pause-type` or `resume-type` that changed something. */
export function auditTypePause(
  env: NodeJS.ProcessEnv,
  change: { action: string; type: string; reason?: string },
  options: { url: string | undefined; prefix?: string },
): string {
  const why = change.reason ? ` (${change.reason})` : '';
  return (
    `holdfast audit: ${cliActor(env)} ${change.action} '${change.type}'${why} in ` +
    `${where(options, inboxTable({ tablePrefix: options.prefix }))}\n`
  );
}
