import { monotonicMillis } from '@holdfast/core/kit';

/**
 * Who owns a mutex, as read from `simba_mutex`, with the database clock at the time of the
 * read. `isInTtl()`/`isInTransition()` estimate the database clock now as that reading plus the
 * monotonic time elapsed since, so a wrong or jumping app clock changes nothing.
 */
export class MutexOwner {
  static readonly NONE_ID = '';
  static readonly NONE = new MutexOwner(MutexOwner.NONE_ID, 0, 0, 0, 0, 0);

  /** Local monotonic time at which `databaseNow` was read. */
  private readonly readAt: number;

  constructor(
    readonly ownerId: string,
    /**
     * Epoch ms (database clock) of the acquisition or last renewal, raised to one more than the
     * previous value when the clock is behind it: the fencing token.
     */
    readonly acquiredAt: number,
    /** Epoch ms after which the owner renews. */
    readonly ttlAt: number,
    /** Epoch ms after which anybody may acquire. */
    readonly transitionAt: number,
    /** The row's version: Simba's optimistic lock (+1 on every acquire, renewal and release). */
    readonly version: number,
    /** The database clock when this row was read (epoch ms). */
    readonly databaseNow: number,
  ) {
    this.readAt = monotonicMillis();
  }

  /** The database clock now, estimated from the reading and the monotonic time since. */
  estimatedDatabaseNow(): number {
    return this.databaseNow + (monotonicMillis() - this.readAt);
  }

  /**
   * The fencing token of this grant: `acquired_at`. Every grant and renewal writes the database
   * time, or the previous token + 1 when the clock is behind it, so tokens grow on one primary; and
   * since the clock runs on across a failover, a grant on a promoted standby sorts above the grants
   * the old primary made and never shipped (see the README for the assumption).
   */
  get fencingToken(): number {
    return this.acquiredAt;
  }

  isOwner(contenderId: string): boolean {
    return this.ownerId === contenderId && this.hasOwner();
  }

  hasOwner(): boolean {
    return this.ownerId !== MutexOwner.NONE_ID;
  }

  /** True while the owner's ttl runs (before it has to renew). */
  isInTtl(at = this.estimatedDatabaseNow()): boolean {
    return this.hasOwner() && at < this.ttlAt;
  }

  /** True after the ttl and before the transition ends: only the owner may renew now. */
  isInTransition(at = this.estimatedDatabaseNow()): boolean {
    return this.hasOwner() && at >= this.ttlAt && at < this.transitionAt;
  }

  toJSON() {
    return {
      ownerId: this.ownerId,
      acquiredAt: this.acquiredAt,
      ttlAt: this.ttlAt,
      transitionAt: this.transitionAt,
      version: this.version,
    };
  }
}
