import { HoldfastTableMigration } from '@holdfast/core/kit';
import { SIMBA_TABLES } from '@holdfast/simba';

/** Creates `<prefix>simba_mutex` (prefix from HOLDFAST_TABLE_PREFIX) for @holdfast/simba. */
export class CreateSimbaMutex1764000000002 extends HoldfastTableMigration {
  protected readonly tables = [SIMBA_TABLES.mutex];
}
