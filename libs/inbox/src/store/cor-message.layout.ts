import { Catalog } from '@holdfast/core/kit';
import type { CorMessageTable } from './cor-message.base';

/**
 * Reads the live form of the time columns where the dialect has two accepted forms
 * (MySQL/MariaDB `DATETIME(3)` or `TIMESTAMP`), and whether the delivery-order index exists
 * (MySQL/MariaDB force it by name). Call once the table exists.
 */
export async function detectCorMessageLayout(on: CorMessageTable): Promise<void> {
  const { sql, table, orderIndex } = on;
  const catalog = Catalog.of(sql);
  const nextRetry = await catalog.column(table, 'NEXT_RETRY');
  on.t = sql.dialect.timestampSql(nextRetry?.timestampStorage);
  on.hasOrderIndex = await catalog.hasIndexNamed(table, orderIndex);
}
