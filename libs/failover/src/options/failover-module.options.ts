import type { InjectionToken } from '@nestjs/common';
import type { DataSourceOption, DatabaseResolver, Dialect, SchemaMode } from '@holdfast/core';
import type { Class } from '../payload/payload-type';
import type { RecoveredPayloadHandler } from '../executor/recovered-payload.handler';
import type { FailoverStore } from '../store/failover-store';
import type { FailoverStoreQueryResolver } from '../store/failover-store-query.resolver';
import type { PayloadColumnResolver } from '../store/payload-column.resolver';

export interface MemoryStoreOptions {
  type: 'memory';
  /** Most entries kept; the least recently used go first. Default 10,000. */
  maxEntries?: number;
}

export interface SqlStoreOptions {
  type: 'sql';
  /** A DataSource, or the name of a @nestjs/typeorm one; default: the default DataSource. */
  dataSource?: DataSourceOption;
  tablePrefix?: string;
  /** Extra PAYLOAD_CLASS names that may be recovered, beyond the declared `type`s. */
  allowedPayloadClasses?: string[];
  /** true: plain JSON shapes (Object, Array, String...) are not implicitly allowed either. */
  strictAllowlist?: boolean;
  /** Overrides dialect detection. */
  dialect?: Dialect;
  /** 'create' the table if missing, 'check' it (default), or 'none'. */
  schema?: SchemaMode;
  /** Replacements for the SQL, the PAYLOAD binding and the dialect detection. */
  queryResolver?: FailoverStoreQueryResolver | Class<FailoverStoreQueryResolver>;
  payloadColumnResolver?: PayloadColumnResolver | Class<PayloadColumnResolver>;
  databaseResolver?: DatabaseResolver | Class<DatabaseResolver>;
}

export interface CustomStoreOptions {
  type: 'custom';
  useClass?: Class<FailoverStore>;
  useExisting?: InjectionToken;
}

export type FailoverStoreOptions = MemoryStoreOptions | SqlStoreOptions | CustomStoreOptions;

export interface FailoverModuleOptions {
  /** Where values are kept. Default `{ type: 'memory' }` (not durable). */
  store?: FailoverStoreOptions;
  /** true (default): store and delete run off the caller's path. */
  async?: boolean;
  /** Most async writes in flight before new ones are dropped (and counted). Default 10,000. */
  maxPendingWrites?: number;
  /** When nothing can be recovered: 'rethrow' the upstream's error (default) or return null. */
  exceptionPolicy?: 'rethrow' | 'never-throw';
  /** Expired-entry cleanup. Default enabled, hourly: '0 0 * * * *'. */
  cleanup?: { enabled?: boolean; cron?: string };
  /** Supplies a value when nothing is stored. */
  recoveredPayloadHandler?: Class<RecoveredPayloadHandler>;
}

export interface ResolvedFailoverModuleOptions {
  store: FailoverStoreOptions;
  async: boolean;
  maxPendingWrites: number;
  exceptionPolicy: 'rethrow' | 'never-throw';
  cleanup: { enabled: boolean; cron: string };
  recoveredPayloadHandler?: Class<RecoveredPayloadHandler>;
}
