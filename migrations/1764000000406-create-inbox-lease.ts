import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/** `<prefix>HOLDFAST_INBOX_LEASE`: the tick of the inbox's once-per-cluster expiry cleanup. */
export class CreateInboxLease1764000000406 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_TABLES.lease];
}
