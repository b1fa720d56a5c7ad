import type { InjectionToken } from '@nestjs/common';
import type { DataSourceOption, DatabaseResolver, Dialect, Duration, SchemaMode } from '@holdfast/core/kit';
import type { PayloadCipher } from './payload/payload-cipher';
import type { Class } from './payload/payload-type';
import type { PayloadClassDeclaration } from './payload/failover-type.registry';
import type { RecoveredPayloadHandler } from './executor/recovered-payload.handler';
import type { FailoverStore } from './store/failover-store';
import type { FailoverStoreQueryResolver } from './store/failover-store-query.resolver';
import type { PayloadColumnResolver } from './store/payload-column.resolver';

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
  /**
   * Extra PAYLOAD_CLASS names that may be recovered, beyond the declared `type`s: exact names, or
   * package prefixes as in the seed (`'com.acme'` allows `com.acme.Quote`, not `com.acmex.Quote`).
   */
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
  /** Encrypts PAYLOAD at rest as `ENC(<cipherId>:<base64>)`; plaintext rows stay readable. */
  encryption?: EncryptionOptions;
}

export interface EncryptionOptions {
  enabled: boolean;
  /** 'aes-256-gcm' (default; random IV, authenticated) or your own PayloadCipher. */
  cipher?: 'aes-256-gcm' | PayloadCipher;
  /** For aes-256-gcm: 32 bytes, as a Buffer, 64 hex characters or base64. */
  key?: string | Buffer;
}

export interface CustomStoreOptions {
  type: 'custom';
  useClass?: Class<FailoverStore>;
  useExisting?: InjectionToken;
}

export type FailoverStoreOptions = MemoryStoreOptions | SqlStoreOptions | CustomStoreOptions;

/** The batched write-behind queue (`async: true` uses these defaults). */
export interface AsyncWriteOptions {
  /** Most pending writes (after coalescing by key). Default 10,000. */
  maxQueue?: number;
  /** How often the flusher sends what is pending. Default 100 ms. */
  flushInterval?: Duration;
  /** Most rows in one multi-row upsert; a full batch is sent at once. Default 500. */
  maxBatch?: number;
  /** When the queue is full: drop the oldest pending write (default), the new one, or write on the caller's path. */
  rejection?: 'drop-oldest' | 'drop-new' | 'caller-runs';
}

/** How the upstream is called. */
export interface ExecutionOptions {
  /** A cockatiel circuit breaker: while open the upstream is not called and the stored value is served. */
  circuitBreaker?: {
    /** Consecutive failures that open the circuit. Default 5. */
    consecutiveFailures?: number;
    /** How long the circuit stays open before one trial call. Default 10 s. */
    halfOpenAfter?: Duration;
  };
}

export interface MultiTenantOptions {
  /** Each tenant's table is `<tenant tablePrefix><store tablePrefix>FAILOVER_STORE`. */
  tenants: Record<string, { tablePrefix: string }>;
  /** Used when `resolveTenant` returns nothing. */
  defaultTenant?: string;
  /** true: a tenant not listed is an error; false (default): it uses the global table. */
  strict?: boolean;
  /** The caller's tenant, read on the caller's async context. Default: `FailoverTenant.current()`, then `clsKey`. */
  resolveTenant?: () => string | undefined;
  /** With nestjs-cls in the app: the CLS key holding the tenant (read when FailoverTenant has none). */
  clsKey?: string;
}

export interface FailoverModuleOptions {
  /** Where values are kept. Default `{ type: 'memory' }` (not durable). */
  store?: FailoverStoreOptions;
  /** true (default): store and delete go through the batched write-behind queue. */
  async?: boolean | AsyncWriteOptions;
  /** Default execution for every failover (a failover's own `execution` wins). */
  execution?: ExecutionOptions;
  /** Scatter/gather: slices one at a time (default) or in parallel, each bounded by `timeout`. */
  scatter?: { parallel?: boolean; timeout?: Duration };
  multiTenant?: MultiTenantOptions;
  /** When nothing can be recovered: 'rethrow' the upstream's error (default) or return null. */
  exceptionPolicy?: 'rethrow' | 'never-throw';
  /**
   * The key generator of failovers without their own `keyGenerator`: `'java'` (default,
   * DefaultKeyGenerator: the Java library's keys, to share FAILOVER_STORE with a Java service)
   * or `'injective'` (InjectiveKeyGenerator: `('a:b')` and `('a', 'b')` get different keys).
   */
  keys?: 'java' | 'injective';
  /**
   * Expired-entry cleanup, on Holdfast's own timer at each firing of `cron` (with or without ScheduleModule).
   * Default enabled, hourly ('0 0 * * * *'), on one instance per tick, deleting at most
   * `batchSize` rows per statement (default 1,000 on MySQL/MariaDB, 5,000 elsewhere), each statement its own short transaction,
   * with `pause` (default 0: one turn of the event loop) between statements.
   */
  cleanup?: { enabled?: boolean; cron?: string; batchSize?: number; pause?: Duration };
  /** Supplies a value when nothing is stored. */
  recoveredPayloadHandler?: Class<RecoveredPayloadHandler>;
  /**
   * The longest a call waits for the store (a synchronous write, a recovery read; the pool wait
   * included). Past it the call goes on without the store. After 3 such failures in a row the
   * store is skipped by every call for 5 s, then tried again. Default 500 ms; 0 disables.
   */
  storeTimeout?: Duration;
  /**
   * Payload classes any failover may store and rebuild, beyond each failover's `type`: a class
   * (stored under its name) or `{ name: 'billing.Country', type: Country }` for a qualified name.
   */
  types?: PayloadClassDeclaration[];
}

/** The module options validated, with their defaults (`@InjectFailoverOptions()`). */
export interface ResolvedFailoverOptions {
  store: FailoverStoreOptions;
  async: false | (Required<Omit<AsyncWriteOptions, 'flushInterval'>> & { flushInterval: number });
  execution?: ExecutionOptions;
  scatter: { parallel: boolean; timeout: number };
  multiTenant?: MultiTenantOptions;
  exceptionPolicy: 'rethrow' | 'never-throw';
  keys: 'java' | 'injective';
  /** `batchSize` undefined: the store's default for its database. */
  cleanup: { enabled: boolean; cron: string; batchSize?: number; pause: number };
  recoveredPayloadHandler?: Class<RecoveredPayloadHandler>;
  types: PayloadClassDeclaration[];
  storeTimeout: number;
}

/** @deprecated The former name of {@link ResolvedFailoverOptions}. */
export type ResolvedFailoverModuleOptions = ResolvedFailoverOptions;
