import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/**
 * `<prefix>COR_MESSAGE` in camunda-bpm-correlate's layout (timestamps, unbounded ERROR) and its
 * indexes (delivery order, expiry cleanup). Tables made by an earlier version of this migration
 * (BIGINT times) are converted by 1764000000405.
 */
export class CreateCorMessage1764000000004 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_TABLES.message];
}
