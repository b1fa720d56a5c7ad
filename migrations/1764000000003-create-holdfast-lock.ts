import { HoldfastTableMigration } from '@holdfast/core/kit';
import { LOCKER_TABLES } from '@holdfast/locker';

/** `<prefix>HOLDFAST_LOCK` for @holdfast/locker (prefix from HOLDFAST_TABLE_PREFIX). */
export class CreateHoldfastLock1764000000003 extends HoldfastTableMigration {
  protected readonly tables = [LOCKER_TABLES.lock];
}
