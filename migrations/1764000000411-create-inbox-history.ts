import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/**
 * `<prefix>HOLDFAST_INBOX_HISTORY` and `<prefix>HOLDFAST_INBOX_STATS`: the inbox's opt-in history
 * of outcomes (`history` option) and its statistics per minute (`stats` option).
 */
export class CreateInboxHistory1764000000411 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_TABLES.history, INBOX_TABLES.stats];
}
