import type { MessagesReport } from './messages/inbox-messages';
import type { ReleaseReport } from './release/release';

export function table(headers: string[], rows: string[][]): string[] {
  if (!rows.length) return ['  (none)'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd();
  return [line(headers), ...rows.map(line)];
}

const RESULT_WORDS = {
  done: 'done',
  would: 'would change',
  unchanged: 'unchanged',
  'not found': 'not found',
};

/**
 * `holdfast messages …` as a terminal table: each message as it was, and what happened to it.
 * `selected`: the --type and --status asked for, named in the summary line.
 */
export function formatMessages(
  report: MessagesReport,
  selected: { type?: string; status?: string } = {},
): string {
  const listing = report.action === 'list';
  const headers = ['ID', 'TYPE', 'STATUS', 'RETRIES', ...(listing ? [] : ['RESULT'])];
  const rows = report.messages.map((m) => [
    m.id,
    m.type ?? '-',
    m.status ?? '-',
    m.retries === null ? '-' : String(m.retries),
    ...(listing ? [] : [RESULT_WORDS[m.result]]),
  ]);
  const changed = report.messages.filter((m) => m.result === (report.dryRun ? 'would' : 'done')).length;
  const of = [
    selected.type !== undefined ? `of type ${selected.type}` : '',
    selected.status !== undefined ? `in status ${selected.status}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const summary = listing
    ? `${report.messages.length} message(s)${of ? ` ${of}` : ''}, maxRetries ${report.maxRetries}`
    : report.dryRun
      ? `dry run: ${report.action} would change ${changed} of ${report.messages.length} message(s); nothing changed`
      : `${report.action}: changed ${changed} of ${report.messages.length} message(s)`;
  return `${[...table(headers, rows), summary].join('\n')}\n`;
}

/** `holdfast release …` in one line. */
export function formatRelease(report: ReleaseReport): string {
  const what = `${report.kind} '${report.name}'`;
  switch (report.result) {
    case 'released':
      return `released ${what} (held by '${report.owner}')\n`;
    case 'would':
      return `dry run: would release ${what} (held by '${report.owner}'); nothing changed\n`;
    case 'not held':
      return `not released: ${what} is ${report.heldBy === null ? 'held by nobody' : `held by '${report.heldBy}'`}, not by '${report.owner}'\n`;
    case 'not found':
      return `not released: there is no ${what}\n`;
  }
}
