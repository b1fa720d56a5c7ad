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

/** The status as the terminal table `holdfast status` prints. */
export function formatStatus(status: HoldfastStatus): string {
  const out = [
    `Holdfast status at ${new Date(status.databaseNow).toISOString()} (database clock), ` +
      `table prefix ${status.prefix ? `'${status.prefix}'` : 'none'}`,
    '',
    'Owners (simba_mutex)',
  ];
  if (status.owners === null) out.push('  no table');
  else
    out.push(
      ...table(
        ['MUTEX', 'OWNER', 'FENCING TOKEN', 'STATE', 'EXPIRES IN'],
        status.owners.map((m) => [
          m.mutex,
          m.owner ?? '-',
          String(m.fencingToken),
          m.state,
          m.expiresInMs === null ? '-' : seconds(m.expiresInMs),
        ]),
      ),
    );
  out.push('', 'Masters (HOLDFAST_LOCK)');
  if (status.masters === null) out.push('  no table');
  else
    out.push(
      ...table(
        ['LOCK', 'MASTER', 'TIME'],
        status.masters.map((l) => [
          l.lock,
          l.master ?? '-',
          l.timeFromNowMs === null
            ? '-'
            : l.timeFromNowMs > 0
              ? `lease ends in ${seconds(l.timeFromNowMs)}`
              : `${seconds(-l.timeFromNowMs)} ago`,
        ]),
      ),
    );
  out.push('', 'Inbox (COR_MESSAGE)');
  const inbox = status.inbox;
  if (inbox === null) out.push('  no table');
  else {
    const n = (value: number | null) => (value === null ? '?' : String(value));
    out.push(
      ...table(
        ['TOTAL', 'DUE', 'RETRYING', 'PAUSED', 'PARKED', 'EXPIRED', 'OLDEST DUE'],
        [
          [
            ...[inbox.total, inbox.due, inbox.retrying, inbox.paused, inbox.parked, inbox.expired].map(n),
            inbox.oldestDueAgeMs === null ? '-' : `${seconds(inbox.oldestDueAgeMs)} ago`,
          ],
        ],
      ),
    );
    const attempts = inbox.byRetries.map((r) => `${r.retries}: ${r.count}`).join(', ') || 'none';
    out.push(`  unexpired messages by RETRIES (failed attempts): ${attempts}`);
    out.push(
      inbox.maxRetries === null
        ? "  ? = unknown: due, retrying, paused and parked depend on the inbox's maxRetries (parked is RETRIES >= it); " +
            'give it with --max-retries N or HOLDFAST_INBOX_MAX_RETRIES'
        : `  parked: RETRIES >= ${inbox.maxRetries} (maxRetries)`,
    );
  }
  out.push('', 'Failover (FAILOVER_STORE, live entries)');
  if (status.failover === null) out.push('  no table');
  else
    out.push(
      ...table(
        ['FAILOVER', 'LIVE ENTRIES', 'NEWEST AS OF'],
        status.failover.map((f) => [f.failover, String(f.liveEntries), f.newestAsOf ?? '-']),
      ),
    );
  return `${out.join('\n')}\n`;
}
