import { HoldfastTableMigration } from '@holdfast/core/kit';
import { HOLDFAST_LOCK_TABLE } from '@holdfast/locker/internal';

/** `<prefix>HOLDFAST_LOCK` for @holdfast/locker (prefix from HOLDFAST_TABLE_PREFIX). */
export class CreateHoldfastLock1764000000003 extends HoldfastTableMigration {
  protected readonly tables = [HOLDFAST_LOCK_TABLE];
}
