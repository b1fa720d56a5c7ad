import type { TableSpec } from '@holdfast/core/kit';
import type { Type } from '@nestjs/common';
import { DEFAULT_FAILOVER_STORE } from '../failover.constants';
import { FAILOVER_STORE_NAME } from '../failover.tokens';
import { FailoverRegistry } from '../explorer/failover.registry';
import { FailoverWriter } from '../executor/failover-writer';
import { FAILOVER_STORE_TABLE } from '../store/failover-store.table';

/** The failover's tables, by role, in creation order: for `holdfast ddl`, migrations, tools and tests that create them. */
export const FAILOVER_TABLES: { readonly store: TableSpec } = Object.freeze({ store: FAILOVER_STORE_TABLE });

/**
 * What a tool that reads a running FailoverModule (the dashboard) looks up in the application:
 * `storeName` is provided by each module instance with its name (`defaultStore` for the module
 * without one); `registry` lists the failovers it found, `writer` counts the writes not yet stored.
 */
export const FAILOVER_STATUS_TOKENS: {
  readonly storeName: symbol;
  readonly defaultStore: string;
  readonly registry: Type<Pick<FailoverRegistry, 'list'>>;
  readonly writer: Type<Pick<FailoverWriter, 'pending'>>;
} = Object.freeze({
  storeName: FAILOVER_STORE_NAME,
  defaultStore: DEFAULT_FAILOVER_STORE,
  registry: FailoverRegistry,
  writer: FailoverWriter,
});
