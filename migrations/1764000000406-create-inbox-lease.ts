import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_LEASE_TABLE } from '@holdfast/inbox/internal';

/** `<prefix>HOLDFAST_INBOX_LEASE`: the tick of the inbox's once-per-cluster expiry cleanup. */
export class CreateInboxLease1764000000406 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_LEASE_TABLE];
}
