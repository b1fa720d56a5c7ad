// @holdfast/core: what an application may need of Holdfast's shared package: the errors every
// module throws (HoldfastError and its family, each with a stable code) and the types of common
// options. The module kit (SQL dialects, SqlClient, HoldfastDatabase, schema checks, options
// validation, named instances) is '@holdfast/core/kit', for module authors.
export * from './errors/holdfast.error';
export { configureCoordinationPool, type CoordinationPoolOptions } from './database/coordination-pool';
export type { Dialect } from './dialect/dialect';
export type { Duration } from './time/duration';
