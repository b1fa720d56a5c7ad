import { HoldfastError } from '@holdfast/core/kit';

/** A fencing token that is not a safe non-negative integer. */
export class InvalidFencingTokenError extends HoldfastError {
  constructor(readonly value: unknown) {
    super(
      `Invalid fencing token ${JSON.stringify(value) ?? String(value)}: pass the owner's token as a safe ` +
        `non-negative integer (MutexState.fencingToken, or what SimbaLocker.acquire returned).`,
      'HOLDFAST_SIMBA_INVALID_FENCING_TOKEN',
    );
  }
}

/** The entity has no column for the fence. */
export class FenceColumnNotFoundError extends HoldfastError {
  constructor(
    readonly entity: string,
    readonly property: string,
  ) {
    super(
      `Entity ${entity} has no column '${property}' to keep its fencing token in: add ` +
        `\`@FenceColumn() ${property}?: number | null;\` (a nullable BIGINT), or pass ` +
        `fenced(repository, { fenceProperty: '<your column>' }).`,
      'HOLDFAST_SIMBA_FENCE_COLUMN_NOT_FOUND',
    );
  }
}

/**
 * A write carried a fencing token older than the one already stored on the rows it targets: a
 * newer owner has written since, so this owner's lease is over and its write was refused.
 */
export class StaleFencingTokenError extends HoldfastError {
  constructor(
    readonly table: string,
    readonly token: number,
    readonly refused: number,
  ) {
    super(
      `Write to ${table} refused: fencing token ${token} is older than the fence stored on ${refused} ` +
        `row(s), so a newer owner has written since. This instance no longer owns the mutex; stop ` +
        `writing and wait to be elected again.`,
      'HOLDFAST_SIMBA_STALE_FENCING_TOKEN',
    );
  }
}
