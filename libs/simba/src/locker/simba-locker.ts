import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { parseDuration, withTimeout, type Duration } from '@holdfast/core/kit';
import { MutexAcquireTimeoutError, MutexLockerStateError, MutexLostError } from '../errors';
import { AbstractMutexContender, assertUserMutexName } from '../mutex/mutex-contender';
import { ContendServiceStatus, type MutexContendService } from '../mutex/mutex-contend.service';
import { MutexContendServiceFactory } from '../mutex/mutex-contend-service.factory';
import type { MutexState } from '../mutex/mutex-state';

class LockerContender extends AbstractMutexContender {
  acquired?: (state: MutexState) => void;
  released?: (state: MutexState) => void;

  override onAcquired(state: MutexState): void {
    this.acquired?.(state);
  }

  override onReleased(state: MutexState): void {
    this.released?.(state);
  }
}

/**
 * A blocking lock on one mutex (Simba's SimbaLocker): `acquire()` waits until this locker owns
 * the mutex, `release()` gives it back at once. `signal` aborts when ownership is lost.
 */
export class MutexLocker {
  private readonly contender: LockerContender;
  private readonly service: MutexContendService;
  private controller = new AbortController();

  constructor(
    readonly mutex: string,
    factory: MutexContendServiceFactory,
    private readonly active?: Set<MutexLocker>,
  ) {
    this.contender = new LockerContender(mutex);
    this.service = factory.createMutexContendService(this.contender, { initialDelay: 0 }, { spread: false });
  }

  get isOwner(): boolean {
    return this.service.isOwner;
  }

  /** Aborts (reason: MutexLostError) when the ownership taken by acquire() is lost or released. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get fencingToken(): number | undefined {
    return this.service.fencingToken;
  }

  /**
   * Waits until this locker owns the mutex and resolves with the fencing token. Without a
   * timeout it waits as long as it takes; with one it rejects with MutexAcquireTimeoutError.
   */
  async acquire(timeout?: Duration): Promise<number> {
    if (this.service.status !== ContendServiceStatus.INITIAL) {
      throw new MutexLockerStateError(
        this.mutex,
        'acquire() called while already acquired or acquiring; release() first.',
      );
    }
    const timeoutMs = timeout === undefined ? undefined : parseDuration(timeout, 'timeout');
    this.controller = new AbortController();
    const controller = this.controller;
    const granted = new Promise<MutexState>((resolve) => (this.contender.acquired = resolve));
    const acquired =
      timeoutMs === undefined
        ? granted
        : withTimeout(granted, timeoutMs, () => {
            throw new MutexAcquireTimeoutError(this.mutex, timeoutMs);
          });
    this.contender.released = () => {
      if (!controller.signal.aborted) controller.abort(new MutexLostError(this.mutex));
    };
    this.service.start();
    this.active?.add(this);
    try {
      const state = await acquired;
      return state.fencingToken;
    } catch (error) {
      this.active?.delete(this);
      await this.service.stop();
      throw error;
    } finally {
      this.contender.acquired = undefined;
    }
  }

  /** Gives the mutex up (released callbacks first, then the row), waking waiters at once. */
  async release(): Promise<void> {
    if (this.service.status !== ContendServiceStatus.RUNNING) {
      throw new MutexLockerStateError(
        this.mutex,
        `release() called while ${this.service.status}; acquire() first.`,
      );
    }
    this.active?.delete(this);
    await this.service.stop();
    if (!this.controller.signal.aborted) this.controller.abort(new MutexLostError(this.mutex));
  }

  /** True between acquire() and release(). */
  get isActive(): boolean {
    return this.service.status === ContendServiceStatus.RUNNING;
  }
}

/** Blocking locks on mutexes: `locker(m).acquire()`/`release()` and `withLock(m, fn)`. */
@Injectable()
export class SimbaLocker implements BeforeApplicationShutdown {
  private readonly logger = new Logger(SimbaLocker.name);
  private readonly active = new Set<MutexLocker>();

  constructor(private readonly factory: MutexContendServiceFactory) {}

  /** A new locker (its own contender id) for `mutex`. */
  locker(mutex: string): MutexLocker {
    assertUserMutexName(mutex);
    return new MutexLocker(mutex, this.factory, this.active);
  }

  /** Lockers still held or waiting at shutdown give their mutex back before the DataSource closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(
      [...this.active]
        .filter((locker) => locker.isActive)
        .map((locker) =>
          locker
            .release()
            .catch((error) =>
              this.logger.warn(`Releasing mutex '${locker.mutex}' at shutdown: ${(error as Error).message}`),
            ),
        ),
    );
  }

  /**
   * Runs `fn` while owning `mutex` and releases it afterwards (also when `fn` throws). The signal
   * aborts if ownership is lost while `fn` runs; a timeout rejects with MutexAcquireTimeoutError.
   */
  async withLock<T>(
    mutex: string,
    fn: (signal: AbortSignal, fencingToken: number) => Promise<T> | T,
    options: { timeout?: Duration } = {},
  ): Promise<T> {
    const locker = this.locker(mutex);
    const token = await locker.acquire(options.timeout);
    try {
      return await fn(locker.signal, token);
    } finally {
      await locker.release();
    }
  }
}
