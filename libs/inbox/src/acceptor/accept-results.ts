import type { AcceptResult } from '../inbox-message';
import type { NewMessageRow } from '../store/cor-message.rows';

/**
 * acceptAll's results in the input order: an id given twice counts once (the first), `replaced`
 * ids are accepted as replacements.
 */
export function acceptResults(
  rows: readonly NewMessageRow[],
  accepted: ReadonlyMap<string, boolean>,
  replaced?: ReadonlySet<string>,
): AcceptResult[] {
  const results: AcceptResult[] = [];
  const reported = new Set<string>();
  for (const row of rows) {
    const first = !reported.has(row.id);
    reported.add(row.id);
    if (first && replaced?.has(row.id)) results.push({ id: row.id, accepted: true, replaced: true });
    else results.push({ id: row.id, accepted: first && accepted.get(row.id) === true });
  }
  return results;
}
