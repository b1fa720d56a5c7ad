import { ownerInstanceId } from '@holdfast/core/kit';
import { InvalidContenderIdError, InvalidMutexNameError } from '../errors';
import {
  MEMBER_ROW_PREFIX,
  MUTEX_NAME_MAX_LENGTH,
  OWNER_ID_MAX_LENGTH,
  SEED_OWNER_ID_LENGTH,
} from '../store/simba-mutex.table';
import type { MutexState } from './mutex-state';
import { TIMELINE_MARKER } from '../store/failover-grace';

/** One party competing for a mutex. Callbacks run one at a time, in order, per contend service. */
export interface MutexContender {
  readonly mutex: string;
  /**
   * Unique per contender (stored as `owner_id`): at most 128 characters, and no longer than the
   * live `owner_id` column (32 on a table made by Simba's DDL); no trailing space.
   */
  readonly contenderId: string;
  onAcquired(state: MutexState): void | Promise<void>;
  onReleased(state: MutexState): void | Promise<void>;
}

/**
 * The process's instance id (core's `<random>:<pid>@<host>`, at most 32 characters: it fits
 * Simba's `CHAR(32)` `owner_id`) for the first contender of `mutex` in this process, a numbered
 * one (`<random>.<n>:<pid>@<host>`) for any other, and always a numbered one without a mutex.
 */
export function defaultContenderId(mutex?: string): string {
  const id = ownerInstanceId(mutex === undefined ? undefined : `simba:${mutex}`);
  return id.slice(0, SEED_OWNER_ID_LENGTH).trimEnd();
}

export function assertMutexName(mutex: unknown): asserts mutex is string {
  if (typeof mutex !== 'string' || mutex.length === 0 || mutex.length > MUTEX_NAME_MAX_LENGTH) {
    throw new InvalidMutexNameError(mutex);
  }
  if (mutex === TIMELINE_MARKER) {
    throw new InvalidMutexNameError(
      mutex,
      'the name is reserved: its row keeps the PostgreSQL timeline for the grace after a failover.',
    );
  }
}

/** As assertMutexName, and not a spread group's member row (`holdfast:member:…`): a user's mutex. */
export function assertUserMutexName(mutex: unknown): asserts mutex is string {
  assertMutexName(mutex);
  if (mutex.startsWith(MEMBER_ROW_PREFIX)) {
    throw new InvalidMutexNameError(
      mutex,
      `names starting with '${MEMBER_ROW_PREFIX}' are reserved for the rows of spread groups (SimbaModule 'spread').`,
    );
  }
}

export function assertContenderId(id: unknown): asserts id is string {
  // A trailing space cannot be told apart from CHAR padding.
  if (typeof id !== 'string' || id.length === 0 || id.length > OWNER_ID_MAX_LENGTH || id.endsWith(' ')) {
    throw new InvalidContenderIdError(id);
  }
}

/** A contender with no-op callbacks to override, and a generated id by default. */
export abstract class AbstractMutexContender implements MutexContender {
  constructor(
    readonly mutex: string,
    readonly contenderId: string = defaultContenderId(mutex),
  ) {
    assertUserMutexName(mutex);
    assertContenderId(contenderId);
  }

  onAcquired(_state: MutexState): void | Promise<void> {}

  onReleased(_state: MutexState): void | Promise<void> {}
}
