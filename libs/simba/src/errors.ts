import { HoldfastError } from '@holdfast/core/kit';
import { MUTEX_NAME_MAX_LENGTH, OWNER_ID_MAX_LENGTH } from './store/simba-mutex.table';

/** A mutex name that is empty, too long for `simba_mutex.mutex`, or not a string. */
export class InvalidMutexNameError extends HoldfastError {
  constructor(
    readonly value: unknown,
    /** Why, when it is not the length or the type (a reserved name). */
    reason?: string,
  ) {
    super(
      `Invalid mutex name ${JSON.stringify(value)}: ` +
        (reason ??
          `use a non-empty string of at most ${MUTEX_NAME_MAX_LENGTH} characters (it is the primary key of simba_mutex).`),
      'HOLDFAST_SIMBA_INVALID_MUTEX',
    );
  }
}

/** A contender id that is empty, too long for `simba_mutex.owner_id`, or not a string. */
export class InvalidContenderIdError extends HoldfastError {
  constructor(readonly value: unknown) {
    super(
      `Invalid contender id ${JSON.stringify(value)}: use a non-empty string of at most ` +
        `${OWNER_ID_MAX_LENGTH} characters, without a trailing space, unique per contender ` +
        `(it is stored in simba_mutex.owner_id).`,
      'HOLDFAST_SIMBA_INVALID_CONTENDER_ID',
    );
  }
}

/** A contender id longer than the live `owner_id` column (Simba's DDL has `CHAR(32)`). */
export class ContenderIdTooLongError extends HoldfastError {
  constructor(
    readonly contenderId: string,
    readonly mutex: string,
    readonly table: string,
    readonly columnLength: number,
  ) {
    super(
      `Contender id '${contenderId}' (mutex '${mutex}') is ${contenderId.length} characters long, but ` +
        `${table}.owner_id holds at most ${columnLength}: use a contender id of at most ${columnLength} ` +
        `characters (the generated default has 32), or widen the column.`,
      'HOLDFAST_SIMBA_CONTENDER_ID_TOO_LONG',
    );
  }
}

/** start()/stop() called in a status that does not allow it. */
export class MutexServiceStatusError extends HoldfastError {
  constructor(
    readonly mutex: string,
    readonly action: 'start' | 'stop',
    readonly status: string,
    readonly expected: string,
  ) {
    super(
      `Cannot ${action}() the contend service of mutex '${mutex}' while it is ${status}; ` +
        `${action}() needs status ${expected}.` +
        (action === 'start' ? ' Wait for stop() to finish before starting again.' : ''),
      'HOLDFAST_SIMBA_INVALID_STATUS',
    );
  }
}

/** SimbaLocker.acquire()/withLock() gave up waiting for the mutex. */
export class MutexAcquireTimeoutError extends HoldfastError {
  constructor(
    readonly mutex: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Timed out after ${timeoutMs} ms waiting to acquire mutex '${mutex}'; another instance still owns it. ` +
        `Pass a longer timeout or check which instance holds it (simba_mutex.owner_id).`,
      'HOLDFAST_SIMBA_ACQUIRE_TIMEOUT',
    );
  }
}

/** A MutexLocker used in the wrong order (acquire twice, release before acquire). */
export class MutexLockerStateError extends HoldfastError {
  constructor(
    readonly mutex: string,
    detail: string,
  ) {
    super(`Mutex locker for '${mutex}': ${detail}`, 'HOLDFAST_SIMBA_LOCKER_STATE');
  }
}

/** The ownership of a mutex was lost while a withLock() function ran: the AbortSignal's reason. */
export class MutexLostError extends HoldfastError {
  constructor(readonly mutex: string) {
    super(
      `Ownership of mutex '${mutex}' was lost (renewal not confirmed before the local deadline, or released); ` +
        `stop work that needs exclusive access.`,
      'HOLDFAST_SIMBA_MUTEX_LOST',
    );
  }
}

/** A database call on simba_mutex did not answer within the statement timeout. */
export class MutexStatementTimeoutError extends HoldfastError {
  constructor(
    readonly mutex: string,
    readonly operation: string,
    readonly timeoutMs: number,
    /** 'connection' when no pooled connection came in time (a busy pool, or a server slow to accept one). */
    readonly waitingFor: 'connection' | 'answer' = 'answer',
  ) {
    super(
      waitingFor === 'connection'
        ? `${operation} of mutex '${mutex}' got no pooled connection within ${timeoutMs} ms ` +
            `(the server slow to accept a connection, or the pool busy); treated as failed.`
        : `${operation} of mutex '${mutex}' got no answer from the database within ${timeoutMs} ms ` +
            `(statement timeout, shorter than the transition); treated as failed.`,
      'HOLDFAST_SIMBA_STATEMENT_TIMEOUT',
    );
  }
}

/** @LeaderOnly used on a class whose instance was not created by Nest with SimbaModule imported. */
export class LeaderOnlyNotWiredError extends HoldfastError {
  constructor(
    readonly mutex: string,
    readonly method: string,
  ) {
    super(
      `@LeaderOnly('${mutex}') on ${method}: the MutexContendRegistry was not injected. ` +
        `Import SimbaModule.forRoot(...) and let Nest create this provider.`,
      'HOLDFAST_SIMBA_LEADER_ONLY_NOT_WIRED',
    );
  }
}

/** A call that needs the database on a SimbaModule configured with `enabled: false`. */
export class SimbaDisabledError extends HoldfastError {
  constructor(readonly operation: string) {
    super(
      `${operation}: SimbaModule is disabled (enabled: false), so it contends for nothing and reads nothing. ` +
        `Set enabled: true, or do not call Simba where it is switched off.`,
      'HOLDFAST_SIMBA_DISABLED',
    );
  }
}

/** `MutexOwnerRepository.getOwner()` of a mutex that has no row in `simba_mutex` (Simba's NotFoundMutexOwnerException). */
export class MutexOwnerNotFoundError extends HoldfastError {
  constructor(
    readonly mutex: string,
    readonly table: string,
  ) {
    super(
      `Mutex '${mutex}' has no row in ${table}: nobody has contended for it yet. ` +
        `Use findOwner() to get undefined instead, or check the mutex name.`,
      'HOLDFAST_SIMBA_MUTEX_NOT_FOUND',
    );
  }
}

/** A provider marked `@MutexContenderProvider()` that does not implement `MutexContender`. */
export class InvalidMutexContenderError extends HoldfastError {
  constructor(
    readonly provider: string,
    readonly problem: string,
  ) {
    super(
      `@MutexContenderProvider() on ${provider}: ${problem}. A contender provider implements MutexContender ` +
        `(mutex, contenderId, onAcquired(state), onReleased(state)); extend AbstractMutexContender to get the defaults.`,
      'HOLDFAST_SIMBA_INVALID_CONTENDER',
    );
  }
}

// Fencing (fenced repositories, FencedRepository).
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
