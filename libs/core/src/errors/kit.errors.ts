import { HoldfastError } from './holdfast.error';

// The errors of the module kit's own plumbing ('@holdfast/core/kit'): each a HoldfastError with a
// code, met by a lib's code rather than by an application (whose errors are in holdfast.error.ts).

/**
 * A PostgreSQL LISTEN connection could not be opened: connecting or the LISTEN itself took longer
 * than its bound (`step`), or the DataSource has no pg driver. The listener's owner logs it and
 * falls back to polling.
 */
export class ListenConnectionError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_CORE_LISTEN_CONNECTION');
  }
}

/** A statement run on a SQLite file lock that this process does not hold (a bug of its caller). */
export class FileLockNotHeldError extends HoldfastError {
  constructor(readonly file: string) {
    super(`The lock on ${file} is not held`, 'HOLDFAST_CORE_FILE_LOCK_NOT_HELD');
  }
}

/** A lib declared a metric that breaks Holdfast's naming conventions (found when it is declared). */
export class InvalidMetricSpecError extends HoldfastError {
  constructor(message: string) {
    super(message, 'HOLDFAST_CORE_INVALID_METRIC');
  }
}
