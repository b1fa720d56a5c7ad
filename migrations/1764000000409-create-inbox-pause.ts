import { HoldfastTableMigration } from '@holdfast/core/kit';
import { INBOX_TABLES } from '@holdfast/inbox';

/** `<prefix>HOLDFAST_INBOX_PAUSE`: the message types paused across the cluster. */
export class CreateInboxPause1764000000409 extends HoldfastTableMigration {
  protected readonly tables = [INBOX_TABLES.pause];
}
