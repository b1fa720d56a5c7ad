import { HoldfastTableMigration } from '@holdfast/core';
import { COR_MESSAGE_TABLE } from '@holdfast/inbox';

/** `<prefix>COR_MESSAGE` and its indexes (due-message query, expiry cleanup). */
export class CreateCorMessage1764000000004 extends HoldfastTableMigration {
  protected readonly tables = [COR_MESSAGE_TABLE];
}
