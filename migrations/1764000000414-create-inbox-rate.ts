import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/** `<prefix>HOLDFAST_INBOX_RATE`: the permits of the inbox's cluster-wide rate limits, per type and window. */
export class CreateInboxRate1764000000414 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_TABLES.rate];
}
