import { HoldfastTableMigration } from '@holdfast/core/kit';
import { FAILOVER_STORE_TABLE } from '@holdfast/failover/internal';

/** `<prefix>FAILOVER_STORE` and its EXPIRE_ON index. */
export class CreateFailoverStore1764000000001 extends HoldfastTableMigration {
  protected readonly tables = [FAILOVER_STORE_TABLE];
}
