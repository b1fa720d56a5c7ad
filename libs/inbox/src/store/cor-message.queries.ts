import type { SqlClient } from '@holdfast/core/kit';
import { CorMessageTable } from './cor-message.base';
import { CorMessageGroups } from './cor-message.groups';
import { detectCorMessageLayout } from './cor-message.layout';
import { CorMessageManagement } from './cor-message.management';

/**
 * @deprecated The admin statements of one table on their own: what @holdfast/cli opens today.
 * Use `new CorMessageStore(sql, prefix, maxRetries).management` (and `store.on.groupTable`);
 * this class goes once the CLI does.
 */
export class CorMessageQueries extends CorMessageManagement {
  constructor(sql: SqlClient, prefix: string, maxRetries = 5) {
    const on = new CorMessageTable(sql, prefix, maxRetries);
    super(on, new CorMessageGroups(on));
  }

  override get table(): string {
    return this.on.table;
  }

  /** See CorMessageTable.groupTable. */
  override get groupTable(): string | undefined {
    return this.on.groupTable;
  }

  override set groupTable(table: string | undefined) {
    this.on.groupTable = table;
  }

  /** See detectCorMessageLayout. Call once the table exists. */
  detectLayout(): Promise<void> {
    return detectCorMessageLayout(this.on);
  }
}
