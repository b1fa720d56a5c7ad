import type { SqlClient } from '@holdfast/core/kit';
import { toNumber } from '@holdfast/core/kit';
import type { HistoryEntry, HistoryOutcome } from './history.types';
import { InboxHistoryStatements } from './inbox-history.statements';

/**
 * A message's history read straight from `<prefix>HOLDFAST_INBOX_HISTORY` (the CLI's `holdfast
 * messages history`): oldest first, at most `limit`; undefined when the table does not exist (the
 * `history` option was never on).
 */
export async function readMessageHistory(
  sql: SqlClient,
  prefix: string,
  id: string,
  limit: number,
): Promise<HistoryEntry[] | undefined> {
  const statements = new InboxHistoryStatements(sql.dialect, prefix);
  try {
    await sql.query(statements.probe());
  } catch {
    return undefined;
  }
  const rows = await sql.query<Record<string, unknown>>(statements.ofMessage(id, limit));
  return rows.map(historyEntryOf);
}

/** A history row as read (lower-case aliases on every database) as a HistoryEntry. */
export function historyEntryOf(r: Record<string, unknown>): HistoryEntry {
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const name = text(r.name);
  const namespace = text(r.namespace);
  const revision = text(r.revision);
  const error = text(r.error);
  return {
    messageId: String(r.message_id),
    ...(name !== undefined
      ? {
          type: {
            ...(namespace !== undefined ? { namespace } : {}),
            name,
            ...(revision !== undefined ? { revision } : {}),
          },
        }
      : {}),
    outcome: String(r.outcome) as HistoryOutcome,
    attempt: toNumber(r.attempt),
    ...(error !== undefined ? { error } : {}),
    node: String(r.node),
    at: new Date(toNumber(r.at_ms)),
  };
}
