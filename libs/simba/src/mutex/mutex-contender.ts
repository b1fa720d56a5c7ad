import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { InvalidContenderIdError, InvalidMutexNameError } from '../errors';
import { MUTEX_NAME_MAX_LENGTH, OWNER_ID_MAX_LENGTH } from '../table/simba-mutex.table';
import type { MutexState } from './mutex-state';

/** One party competing for a mutex. Callbacks run one at a time, in order, per contend service. */
export interface MutexContender {
  readonly mutex: string;
  /** Unique per contender (stored as `owner_id`); at most 128 characters. */
  readonly contenderId: string;
  onAcquired(state: MutexState): void | Promise<void>;
  onReleased(state: MutexState): void | Promise<void>;
}

/** `host:pid:uuid`, unique per call. */
export function defaultContenderId(): string {
  return `${hostname().slice(0, 60)}:${process.pid}:${randomUUID()}`;
}

export function assertMutexName(mutex: unknown): asserts mutex is string {
  if (typeof mutex !== 'string' || mutex.length === 0 || mutex.length > MUTEX_NAME_MAX_LENGTH) {
    throw new InvalidMutexNameError(mutex);
  }
}

export function assertContenderId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0 || id.length > OWNER_ID_MAX_LENGTH) {
    throw new InvalidContenderIdError(id);
  }
}

/** A contender with no-op callbacks to override, and a generated id by default. */
export abstract class AbstractMutexContender implements MutexContender {
  constructor(
    readonly mutex: string,
    readonly contenderId: string = defaultContenderId(),
  ) {
    assertMutexName(mutex);
    assertContenderId(contenderId);
  }

  onAcquired(_state: MutexState): void | Promise<void> {}

  onReleased(_state: MutexState): void | Promise<void> {}
}
