// @holdfast/core/kit: the module kit, what the Holdfast modules share to build themselves (SQL
// dialects, the SqlClient, HoldfastDatabase, schema checks, options validation, discovery,
// named instances, metrics, health). For module authors; applications use the main entry,
// '@holdfast/core' (the errors and the option types), and the modules' own entries. The kit
// also carries everything of the main entry, so a module imports from one place.
export * from '../errors/holdfast.error';
export * from '../errors/kit.errors';
export { DIALECTS, isDialect, type Dialect } from '../dialect/dialect';
export type { ColumnType, SqlDialect, UpsertSpec } from '../dialect/sql-dialect';
export { sqlDialect, type SqlDialectOptions } from '../dialect/dialects';
export { utcDateTime } from '../dialect/base.dialect';
export { deleteLimited, type DeleteLimitedSpec } from '../dialect/delete-limited';
export type { SqlBinder, TimestampSql, TimestampStorage } from '../dialect/timestamp-sql';
export { DatabaseResolver } from '../database/database-resolver';
export {
  SqlClient,
  toNumber,
  type SqlClientOptions,
  type SqlRowReader,
  type StatementOptions,
  type TransactionOptions,
} from '../database/sql-client';
export {
  beginBoundedTransaction,
  endBoundedTransaction,
  type IsolationLevel,
} from '../database/transaction-bound';
export {
  isDuplicateKeyError,
  isSyntaxError,
  isConnectionError,
  isNodeNotReadyError,
  isTransientConflictError,
  isTooManyConnectionsError,
} from '../database/sql-errors';
export { destroyRunnerConnection } from '../database/connection-bound';
export { watchRunnerSocket, type SocketWatch } from '../database/driver-socket';
export { SqliteFileLock, sqliteDatabaseFile } from '../database/sqlite-file-lock';
export {
  withTransientRetry,
  sqlRetryCounter,
  type TransientRetry,
  type TransientRetryOptions,
} from '../database/transient-retry';
export { sqlClientFor } from '../database/sql-client.factory';
export { sqliteGate } from '../database/sqlite-gate';
export { PgListener, type PgListenerOptions } from '../database/pg-listener';
export { StatementBinder, statement, type Statement } from '../database/statement';
export { StatementTemplate, TemplateBinder, type SlotName } from '../database/statement-template';
export { resolveDataSource, driverTimezone, type DataSourceOption } from '../database/data-source';
export { HoldfastDatabase, type HoldfastDatabaseOptions } from '../database/holdfast-database';
export { declarePoolNeed, type PoolNeed } from '../database/pool-budget';
export {
  configureCoordinationPool,
  CoordinationPool,
  type CoordinationPoolOptions,
} from '../database/coordination-pool';
export {
  ConnectionBudget,
  LEASE_LANE,
  type CoordinationLane,
  type DedicatedConnection,
} from '../database/connection-budget';
export {
  freeConnections,
  describeConnectionLimits,
  readConnectionLimits,
  type ServerConnectionLimits,
} from '../database/connection-limits';
export { isValidTablePrefix, validateTablePrefix, tableName } from '../naming/table-prefix';
export { instanceId, ownerInstanceId, isThisInstance, INSTANCE_ID_MAX_LENGTH } from '../naming/instance-id';
export { TIMELINE_MARKER } from '../naming/timeline-marker';
export { parseDuration, parseIsoDuration, formatIsoDuration, type Duration } from '../time/duration';
export { monotonicMillis, sleep } from '../time/monotonic';
export { withTimeout, type WithTimeoutOptions } from '../time/with-timeout';
export { DeadlineQueue, type Deadline } from '../time/deadline-queue';
export { HoldfastTimers, findSchedulerRegistry, type TimeoutRegistry } from '../time/holdfast-timers';
export { keepProcessAlive, processKeptAliveBy } from '../lifecycle/keep-alive';
export {
  OutageLog,
  outageCause,
  isOutageError,
  type OutageLogger,
  type OutageLogOptions,
} from '../lifecycle/outage-log';
export type { TableSpec, ColumnSpec, IndexSpec } from '../schema/table-spec';
export {
  createTableSql,
  createIndexSql,
  tableDdl,
  ddlScript,
  indexName,
  type DdlOptions,
} from '../schema/ddl';
export { HoldfastTableMigration } from '../schema/table-migration';
export {
  SchemaManager,
  SCHEMA_MODES,
  type SchemaMode,
  type SchemaManagerOptions,
} from '../schema/schema-manager';
export { LiveTable, type LiveColumn, type LiveColumnKind } from '../schema/live-table';
export { checkLiveTable } from '../schema/column-check';
export type { SqliteAffinity } from '../dialect/sqlite-affinity';
export { Catalog, type CatalogIndex, type CatalogQuery } from '../schema/catalog';
export {
  validateOptions,
  NestedOptions,
  IsDurationOption,
  IsTablePrefix,
  IsDataSourceOption,
} from '../options/validate-options';
export { DatabaseOptionsDto } from '../options/database-options.dto';
export type {
  Meter,
  MetricAttributes,
  MetricCounter,
  MetricHistogram,
  MetricOptions,
  ObservableMetric,
} from '../metrics/meter';
export {
  openTelemetryApi,
  tracerRegistered,
  SPAN_KIND,
  SPAN_STATUS_CODE_ERROR,
  type OpenTelemetryPropagationApi,
  type OpenTelemetryTraceApi,
  type TraceAttributeValue,
  type TraceSpanContext,
  type TraceSpan,
  type TraceTracer,
} from '../metrics/open-telemetry';
export {
  declareMetrics,
  declaredMetrics,
  type DeclaredMetric,
  type MetricInstrument,
  type MetricSpec,
} from '../metrics/declare-metrics';
export { heldGauge, type TrackHeld } from '../metrics/held-gauge';
export {
  discoverMethods,
  discoverHandlers,
  discoverInstances,
  type DiscoveredMethod,
  type DiscoveredHandler,
  type DiscoveredInstance,
} from '../discovery/discover-methods';
export { wrapMethod, type AroundMethod, type MethodBody } from '../discovery/wrap-method';
export {
  NamedInstances,
  DEFAULT_INSTANCE_NAME,
  type NamedAlias,
  type NamedInstancesSpec,
  type NamedModuleExtras,
} from '../module/named-instances';
export { healthResult, probeHealth, type HealthResult, type HealthStatus } from '../health/health-check';
