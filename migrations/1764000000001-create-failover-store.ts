import { HoldfastTableMigration } from '@holdfast/core/kit';
import { FAILOVER_TABLES } from '@holdfast/failover';

/** `<prefix>FAILOVER_STORE` and its EXPIRE_ON index. */
export class CreateFailoverStore1764000000001 extends HoldfastTableMigration {
  protected readonly tables = [FAILOVER_TABLES.store];
}
