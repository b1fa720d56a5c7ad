import { Catalog } from '@holdfast/core/kit';
import type { CorMessageFacts, CorMessageShared } from './cor-message.shared';

/**
 * Reads the live form of the time columns where the dialect has two accepted forms
 * (MySQL/MariaDB `DATETIME(3)` or `TIMESTAMP`), and whether the delivery-order index exists
 * (MySQL/MariaDB force it by name). Call once the table exists.
 */
export async function detectCorMessageLayout(
  on: CorMessageShared,
): Promise<Pick<CorMessageFacts, 't' | 'hasOrderIndex'>> {
  const { sql, table, orderIndex } = on;
  const catalog = Catalog.of(sql);
  const nextRetry = await catalog.column(table, 'NEXT_RETRY');
  return {
    t: sql.dialect.timestampSql(nextRetry?.timestampStorage),
    hasOrderIndex: await catalog.hasIndexNamed(table, orderIndex),
  };
}
