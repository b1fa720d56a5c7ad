import type { HoldfastStatus } from './status-queries';

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function table(headers: string[], rows: string[][]): string[] {
  if (!rows.length) return ['  (none)'];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd();
  return [line(headers), ...rows.map(line)];
}

type Section<T> = T | null;

/** A section's lines: `no table` when its table is absent. */
function section<T>(title: string, value: Section<T>, lines: (value: T) => string[]): string[] {
  return ['', title, ...(value === null ? ['  no table'] : lines(value))];
}

function ownerLines(owners: NonNullable<HoldfastStatus['owners']>): string[] {
  return table(
    ['MUTEX', 'OWNER', 'FENCING TOKEN', 'STATE', 'EXPIRES IN'],
    owners.map((m) => [
      m.mutex,
      m.owner ?? '-',
      String(m.fencingToken),
      m.state,
      m.expiresInMs === null ? '-' : seconds(m.expiresInMs),
    ]),
  );
}

function masterLines(masters: NonNullable<HoldfastStatus['masters']>): string[] {
  return table(
    ['LOCK', 'MASTER', 'TIME'],
    masters.map((l) => [
      l.lock,
      l.master ?? '-',
      l.timeFromNowMs === null
        ? '-'
        : l.timeFromNowMs > 0
          ? `lease ends in ${seconds(l.timeFromNowMs)}`
          : `${seconds(-l.timeFromNowMs)} ago`,
    ]),
  );
}

function inboxLines(inbox: NonNullable<HoldfastStatus['inbox']>): string[] {
  const n = (value: number | null) => (value === null ? '?' : String(value));
  const attempts = inbox.byRetries.map((r) => `${r.retries}: ${r.count}`).join(', ') || 'none';
  return [
    ...table(
      ['TOTAL', 'DUE', 'RETRYING', 'PAUSED', 'PARKED', 'EXPIRED', 'OLDEST DUE'],
      [
        [
          ...[inbox.total, inbox.due, inbox.retrying, inbox.paused, inbox.parked, inbox.expired].map(n),
          inbox.oldestDueAgeMs === null ? '-' : `${seconds(inbox.oldestDueAgeMs)} ago`,
        ],
      ],
    ),
    `  unexpired messages by RETRIES (failed attempts): ${attempts}`,
    inbox.maxRetries === null
      ? "  ? = unknown: due, retrying, paused and parked depend on the inbox's maxRetries (parked is RETRIES >= it); " +
        'give it with --max-retries N or HOLDFAST_INBOX_MAX_RETRIES'
      : `  parked: RETRIES >= ${inbox.maxRetries} (maxRetries)`,
  ];
}

function failoverLines(failover: NonNullable<HoldfastStatus['failover']>): string[] {
  return table(
    ['FAILOVER', 'LIVE ENTRIES', 'NEWEST AS OF'],
    failover.map((f) => [f.failover, String(f.liveEntries), f.newestAsOf ?? '-']),
  );
}

/** The status as the terminal table `holdfast status` prints. */
export function formatStatus(status: HoldfastStatus): string {
  const out = [
    `Holdfast status at ${new Date(status.databaseNow).toISOString()} (database clock), ` +
      `table prefix ${status.prefix ? `'${status.prefix}'` : 'none'}`,
    ...section('Owners (simba_mutex)', status.owners, ownerLines),
    ...section('Masters (HOLDFAST_LOCK)', status.masters, masterLines),
    ...section('Inbox (COR_MESSAGE)', status.inbox, inboxLines),
    ...section('Failover (FAILOVER_STORE, live entries)', status.failover, failoverLines),
  ];
  return `${out.join('\n')}\n`;
}
