import { tableName, validateTablePrefix } from '@holdfast/core/kit';
import { INBOX_TABLES, messageTypeLabel, readMessageHistory, type HistoryEntry } from '@holdfast/inbox';
import { withDatabase } from '../database';
import { HistoryTableMissingError } from '../errors';

/** What `holdfast messages history <id>` prints: the message's outcomes, oldest first. */
export interface MessageHistoryReport {
  id: string;
  entries: Array<{
    at: string;
    outcome: HistoryEntry['outcome'];
    attempt: number;
    type: string | null;
    node: string;
    error: string | null;
  }>;
}

/** A message's history from `<prefix>HOLDFAST_INBOX_HISTORY` (read-only). */
export async function messageHistoryCommand(options: {
  url: string | undefined;
  prefix?: string;
  id: string;
  limit: number;
}): Promise<MessageHistoryReport> {
  const prefix = validateTablePrefix(options.prefix ?? '');
  return withDatabase(options.url, true, async (sql) => {
    const entries = await readMessageHistory(sql, prefix, options.id, options.limit);
    if (!entries) throw new HistoryTableMissingError(tableName(prefix, INBOX_TABLES.history.name));
    return {
      id: options.id,
      entries: entries.map((e) => ({
        at: e.at.toISOString(),
        outcome: e.outcome,
        attempt: e.attempt,
        type: e.type ? messageTypeLabel(e.type) : null,
        node: e.node,
        error: e.error ?? null,
      })),
    };
  });
}

/** One line per outcome; an error's first line after it, indented. */
export function formatHistory(report: MessageHistoryReport): string {
  if (!report.entries.length) return `No history of message ${report.id}.\n`;
  const lines = [`History of message ${report.id} (${report.entries.length} outcome(s)):`];
  for (const e of report.entries) {
    const what = e.outcome === 'expired' ? 'expired' : `attempt ${e.attempt}: ${e.outcome}`;
    lines.push(`  ${e.at}  ${what}  on ${e.node}${e.type ? `  (${e.type})` : ''}`);
    if (e.error) lines.push(`      ${e.error.split('\n', 1)[0]}`);
  }
  return `${lines.join('\n')}\n`;
}
