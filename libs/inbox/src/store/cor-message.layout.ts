import type { CorMessageTable } from './cor-message.base';

/**
 * Reads the live form of the time columns where the dialect has two accepted forms
 * (MySQL/MariaDB `DATETIME(3)` or `TIMESTAMP`), and whether the delivery-order index exists
 * (MySQL/MariaDB force it by name). Call once the table exists.
 */
export async function detectCorMessageLayout(on: CorMessageTable): Promise<void> {
  const { sql, table, orderIndex } = on;
  const d = sql.dialect;
  const query = (text: string, params?: unknown[]) => sql.query(text, params);
  const nextRetry = await d.readLiveColumn(query, table, 'NEXT_RETRY');
  on.t = d.timestampSql(nextRetry?.timestampStorage);
  on.hasOrderIndex = await d.hasIndexNamed(query, table, orderIndex);
}
