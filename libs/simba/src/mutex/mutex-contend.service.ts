import { Logger } from '@nestjs/common';
import { InvalidOptionsError, keepProcessAlive, monotonicMillis } from '@holdfast/core/kit';
import { MutexServiceStatusError } from '../errors';
import { SimbaMetrics, type MutexMetrics } from '../metrics/simba.metrics';
import { assertContenderId, assertMutexName, type MutexContender } from './mutex-contender';
import { MutexOwner } from './mutex-owner';
import { MutexState } from './mutex-state';
import type { MutexContendLoop, Attempt, LoopRequest } from './mutex-contend.loop';
import type { AcquireResult, MutexRepository } from './mutex.repository';
import type { MutexWakeup } from './mutex-wakeup';

export enum ContendServiceStatus {
  INITIAL = 'INITIAL',
  STARTING = 'STARTING',
  RUNNING = 'RUNNING',
  STOPPING = 'STOPPING',
}

/**
 * What decides whether a standby takes a free row now (MutexSpread, for the mutexes of a spread
 * group): an instance at its share of the group leaves free rows to instances below theirs.
 */
export interface ContendGate {
  /** True when `service` may try to take its free row (`owner` as just read) now. */
  mayTake(service: MutexContendService, owner: MutexOwner): boolean;
  /** The attempt that `mayTake` allowed has its answer (or failed, or the service stopped). */
  settled(service: MutexContendService): void;
  started(service: MutexContendService): void;
  stopped(service: MutexContendService): void;
}

/** Timing of one contend service, in milliseconds. */
export interface ContendTiming {
  ttl: number;
  transition: number;
  initialDelay: number;
  standbyPoll: number;
  statementTimeout: number;
}

/**
 * Competes for one mutex on behalf of one contender, the way Simba's MutexContendService does:
 * the owner renews at `ttl_at`; standbys try at `transition_at` plus jitter, and look at the row
 * every `standbyPoll` to notice an early release.
 *
 * Beyond Simba: the owner only believes it owns until a local monotonic deadline counted from
 * when its last successful acquire/renewal was *sent* (`ttl + transition - guard`), which always
 * falls before the row's `transition_at`; when that passes without a confirmed renewal it steps
 * down and runs `onReleased` while nobody else can acquire yet.
 */
export class MutexContendService {
  private readonly logger = new Logger(MutexContendService.name);
  private _status = ContendServiceStatus.INITIAL;
  /** Bumped on start and stop: results of attempts from an older epoch are dropped. */
  private epoch = 0;
  private readonly loop: MutexContendLoop;
  /** The attempt asked of the loop (pending or in flight). */
  private request?: LoopRequest;
  private inflight?: Promise<void>;
  private lastOwner: MutexOwner = MutexOwner.NONE;
  private ownedRow: MutexOwner = MutexOwner.NONE;
  private _mutexState: MutexState = MutexState.NONE;
  /** Monotonic deadline of the current ownership; 0 when this contender does not believe it owns. */
  private ownedUntil = 0;
  /** Monotonic time the current ownership was last confirmed (acquired or renewed), for the renewal-age gauge. */
  private confirmedAt = 0;
  private callbacks: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;
  private untrack?: () => void;
  /** Lets the process end again: a started contender holds it until stop() (see keepProcessAlive). */
  private releaseProcess?: () => void;
  /** How long before the row's transition_at the owner stops believing it owns. */
  private readonly guard: number;
  /** Monotonic time of the end of the initial delay: no attempt before it, not even on a peer's release. */
  private notBefore = 0;
  /** Set by MutexSpread for a mutex of a spread group. */
  gate?: ContendGate;

  constructor(
    readonly contender: MutexContender,
    private readonly repository: MutexRepository,
    private readonly timing: ContendTiming,
    private readonly wakeup: MutexWakeup,
    private readonly metrics: MutexMetrics = new SimbaMetrics(),
    /** The process holds of the factory's started services, which it lets go at app.close(). */
    private readonly holds?: Set<() => void>,
  ) {
    assertMutexName(contender.mutex);
    assertContenderId(contender.contenderId);
    repository.assertContenderFits(contender.contenderId, contender.mutex);
    if (!(timing.ttl > 0 && timing.transition > 0 && timing.statementTimeout < timing.transition)) {
      throw new InvalidOptionsError('MutexContendService', [
        `timing ${JSON.stringify(timing)}: ttl and transition must be > 0 and statementTimeout < transition`,
      ]);
    }
    this.guard = Math.max(timing.statementTimeout, Math.floor(timing.transition / 3));
    this.loop = repository.loop;
  }

  get mutex(): string {
    return this.contender.mutex;
  }

  get contenderId(): string {
    return this.contender.contenderId;
  }

  get status(): ContendServiceStatus {
    return this._status;
  }

  /** True while this contender owns the mutex and its local deadline has not passed. */
  get isOwner(): boolean {
    return this.ownedUntil > 0 && monotonicMillis() < this.ownedUntil;
  }

  /** True while owner and the ttl of the last acquisition/renewal still runs. */
  get isInTtl(): boolean {
    return this.isOwner && this.ownedRow.isInTtl();
  }

  /** The owner as last read from the database. */
  get afterOwner(): MutexOwner {
    return this.lastOwner;
  }

  /** The last change handed to the contender's callbacks. */
  get mutexState(): MutexState {
    return this._mutexState;
  }

  /** The fencing token of the current ownership, or undefined when not owner. */
  get fencingToken(): number | undefined {
    return this.isOwner ? this.ownedRow.fencingToken : undefined;
  }

  start(): void {
    if (this._status !== ContendServiceStatus.INITIAL) {
      throw new MutexServiceStatusError(this.mutex, 'start', this._status, ContendServiceStatus.INITIAL);
    }
    this.repository.assertContenderFits(this.contenderId, this.mutex);
    this._status = ContendServiceStatus.STARTING;
    const epoch = ++this.epoch;
    this.unsubscribe = this.wakeup.subscribe(this.mutex, () => this.onPeerReleased(epoch));
    this.untrack = this.metrics.track(
      this.mutex,
      this.contenderId,
      () => this.isOwner,
      () => (this.isOwner ? this.confirmedAt : undefined),
    );
    this.notBefore = monotonicMillis() + this.timing.initialDelay;
    // A spread mutex looks first: whether to take a free row is its group's decision.
    this.schedule(epoch, this.timing.initialDelay, this.gate ? 'peek' : 'acquire');
    this._status = ContendServiceStatus.RUNNING;
    this.gate?.started(this);
    const release = keepProcessAlive(`simba contender (${this.mutex})`);
    this.releaseProcess = release;
    this.holds?.add(release);
  }

  /**
   * Stops contending. An owner runs its released callbacks first, then releases the row (so a
   * standby can acquire at once) and wakes the standbys of this process.
   */
  async stop(): Promise<void> {
    if (this._status !== ContendServiceStatus.RUNNING) {
      throw new MutexServiceStatusError(this.mutex, 'stop', this._status, ContendServiceStatus.RUNNING);
    }
    this._status = ContendServiceStatus.STOPPING;
    this.epoch++;
    if (this.request) this.loop.cancel(this.request);
    this.request = undefined;
    this.unsubscribe?.();
    this.gate?.stopped(this);
    try {
      // An attempt in flight may still commit an acquisition: let it finish (bounded by the
      // statement timeout) so the release below covers it.
      await this.inflight?.catch(() => undefined);
      if (this.ownedUntil > 0) this.stepDown(MutexOwner.NONE, 'stopped');
      await this.callbacks;
      try {
        if (await this.repository.release(this.mutex, this.contenderId))
          this.wakeup.notifyReleased(this.mutex);
      } catch (error) {
        this.metrics.failed(this.mutex, 'release');
        this.logger.warn(
          `Could not release mutex '${this.mutex}' (${(error as Error).message}); others acquire it after its transition.`,
        );
      }
    } finally {
      this.loop.timers.clear(this.deadlineName);
      this.untrack?.();
      if (this.releaseProcess) {
        this.holds?.delete(this.releaseProcess);
        this.releaseProcess();
        this.releaseProcess = undefined;
      }
      this._status = ContendServiceStatus.INITIAL;
    }
  }

  /**
   * Gives the mutex up and stays a standby (MutexSpread: this instance holds more than its share
   * of the group): as `stop()` does, `onReleased` runs before the row is released, so nobody else
   * can acquire while this contender still believes it owns. False when it did not own.
   */
  async yieldOwnership(): Promise<boolean> {
    if (this._status !== ContendServiceStatus.RUNNING || this.ownedUntil === 0) return false;
    const epoch = ++this.epoch;
    if (this.request) this.loop.cancel(this.request);
    this.request = undefined;
    await this.inflight?.catch(() => undefined);
    if (epoch !== this.epoch || this.ownedUntil === 0) return false;
    this.stepDown(MutexOwner.NONE, 'spread');
    await this.callbacks;
    try {
      if (await this.repository.release(this.mutex, this.contenderId)) this.wakeup.notifyReleased(this.mutex);
    } catch (error) {
      this.metrics.failed(this.mutex, 'release');
      this.logger.warn(
        `Could not release mutex '${this.mutex}' for another instance (${(error as Error).message}); it is free after its transition.`,
      );
    }
    if (epoch === this.epoch && this._status === ContendServiceStatus.RUNNING)
      this.schedule(epoch, this.timing.standbyPoll + this.jitter(), 'peek');
    return true;
  }

  /**
   * Asks the instance's loop for the next attempt in `delay` ms. The loop runs the attempts of
   * every contend service of this module instance together (one transaction per tick).
   */
  private schedule(epoch: number, delay: number, attempt: Attempt): void {
    if (this.request) this.loop.cancel(this.request);
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const live = () => epoch === this.epoch && this.request === request;
    const request: LoopRequest = {
      mutex: this.mutex,
      contenderId: this.contenderId,
      dueAt: monotonicMillis() + Math.max(0, delay),
      attempt,
      ttl: this.timing.ttl,
      transition: this.timing.transition,
      standbyPoll: this.timing.standbyPoll,
      statementTimeout: this.timing.statementTimeout,
      renew: this.ownedUntil > 0 || this.lastOwner.isOwner(this.contenderId),
      onPicked: () => {
        this.inflight = done;
      },
      picked: false,
      onAcquire: (result, sentAt) => {
        settle();
        this.gate?.settled(this);
        if (live()) this.applyAcquire(epoch, result, sentAt);
      },
      onPeek: (owner) => {
        settle();
        if (live()) this.applyPeek(epoch, owner);
      },
      onFailure: (error, kind) => {
        settle();
        this.gate?.settled(this);
        if (live()) this.applyFailure(epoch, error, kind);
      },
    };
    this.request = request;
    this.loop.submit(request);
  }

  private jitter(): number {
    return Math.random() * Math.min(100, this.timing.transition / 10);
  }

  private applyFailure(epoch: number, _error: unknown, attempt: Attempt): void {
    // The loop logs the outage once for the whole instance.
    this.metrics.failed(this.mutex, attempt === 'peek' ? 'read' : 'acquire');
    if (attempt === 'peek') return this.schedule(epoch, this.timing.standbyPoll, 'peek');
    // An owner keeps retrying until its local deadline (the deadline timer steps it down).
    const retry = this.ownedUntil > 0 ? Math.min(250, this.timing.transition / 6) : this.timing.standbyPoll;
    this.schedule(epoch, retry, this.gate && this.ownedUntil === 0 ? 'peek' : 'acquire');
  }

  private applyAcquire(epoch: number, { acquired, owner }: AcquireResult, sentAt: number): void {
    const previous = this.lastOwner;
    this.lastOwner = owner;
    if (acquired) {
      // The lease left when the row was read (same transaction as the UPDATE), counted from when
      // the attempt was sent: never later than the row's transition_at in local time.
      const until = sentAt + (owner.transitionAt - owner.databaseNow) - this.guard;
      if (this.ownedUntil > 0 && monotonicMillis() >= this.ownedUntil)
        this.stepDown(MutexOwner.NONE, 'deadline');
      const renewal = this.ownedUntil > 0;
      if (until > monotonicMillis()) {
        this.ownedRow = owner;
        this.ownedUntil = until;
        this.confirmedAt = sentAt;
        this.armDeadline(epoch);
        if (!renewal) {
          const before = previous.ownerId === this.contenderId ? MutexOwner.NONE : previous;
          this.metrics.acquired(this.mutex);
          this.emit('onAcquired', new MutexState(before, owner));
        }
      } else {
        // The answer came too late to be sure of anything: act as not owner and try again.
        if (renewal) this.stepDown(MutexOwner.NONE, 'late renewal');
        this.schedule(epoch, this.jitter(), 'acquire');
        return;
      }
      this.schedule(epoch, owner.ttlAt - owner.databaseNow, 'acquire');
      return;
    }
    if (this.ownedUntil > 0) this.stepDown(owner, 'taken');
    this.scheduleStandby(epoch, owner);
  }

  private applyPeek(epoch: number, owner: MutexOwner): void {
    this.lastOwner = owner;
    if (owner.ownerId === this.contenderId && !this.isFree(owner)) return this.schedule(epoch, 0, 'acquire');
    if (this.isFree(owner)) return this.takeFree(epoch, owner, 0);
    this.scheduleStandby(epoch, owner);
  }

  /** A free row: tried after `delay`, unless its spread group leaves it to another instance for now. */
  private takeFree(epoch: number, owner: MutexOwner, delay: number): void {
    if (this.gate && !this.gate.mayTake(this, owner))
      return this.schedule(epoch, this.timing.standbyPoll + this.jitter(), 'peek');
    this.schedule(epoch, delay, 'acquire');
  }

  private isFree(owner: MutexOwner): boolean {
    return !owner.hasOwner() || owner.transitionAt < owner.databaseNow;
  }

  /** A standby tries at transition_at + jitter, and peeks every standbyPoll for an early release. */
  private scheduleStandby(epoch: number, owner: MutexOwner): void {
    if (this.isFree(owner)) return this.takeFree(epoch, owner, this.jitter());
    const untilFree = owner.transitionAt - owner.databaseNow + 1;
    // At transition_at a spread mutex looks rather than takes: its group decides who takes it.
    if (untilFree <= this.timing.standbyPoll)
      this.schedule(epoch, untilFree + this.jitter(), this.gate ? 'peek' : 'acquire');
    else this.schedule(epoch, this.timing.standbyPoll + this.jitter(), 'peek');
  }

  private onPeerReleased(epoch: number): void {
    if (epoch !== this.epoch || this.ownedUntil > 0 || this.request?.picked) return;
    // The initial delay holds for a release by a contender of this process too (Simba's initialDelay).
    if (monotonicMillis() < this.notBefore) return;
    // A spread mutex looks first (the group decides who takes a free row).
    this.schedule(epoch, Math.random() * 10, this.gate ? 'peek' : 'acquire');
  }

  private armDeadline(epoch: number): void {
    this.loop.timers.set(this.deadlineName, this.ownedUntil - monotonicMillis(), () => {
      if (epoch !== this.epoch || this.ownedUntil === 0) return;
      if (monotonicMillis() >= this.ownedUntil) this.stepDown(MutexOwner.NONE, 'deadline');
      else this.armDeadline(epoch);
    });
  }

  /** This owner's local deadline, `holdfast:simba:deadline:<mutex>:<contender id>`. */
  private get deadlineName(): string {
    return `holdfast:simba:deadline:${this.contender.mutex}:${this.contender.contenderId}`;
  }

  private stepDown(
    after: MutexOwner,
    reason: 'stopped' | 'deadline' | 'taken' | 'late renewal' | 'spread',
  ): void {
    const before = this.ownedRow;
    this.ownedUntil = 0;
    this.loop.timers.clear(this.deadlineName);
    if (reason === 'deadline' || reason === 'late renewal')
      this.loop.reportLost(this.mutex, before.fencingToken);
    this.metrics.released(this.mutex, reason);
    this.emit(
      'onReleased',
      new MutexState(before, after.ownerId === this.contenderId ? MutexOwner.NONE : after),
    );
  }

  private emit(callback: 'onAcquired' | 'onReleased', state: MutexState): void {
    this.callbacks = this.callbacks.then(async () => {
      this._mutexState = state;
      try {
        await this.contender[callback](state);
      } catch (error) {
        this.logger.error(
          `${callback} of contender '${this.contenderId}' for mutex '${this.mutex}' threw: ${(error as Error).message}`,
          (error as Error).stack,
        );
      }
    });
  }
}
