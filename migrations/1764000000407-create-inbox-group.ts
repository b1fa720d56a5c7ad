import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/** `<prefix>HOLDFAST_INBOX_GROUP`: the group of each message accepted with `groupBy` (strict order per group). */
export class CreateInboxGroup1764000000407 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_TABLES.group];
}
