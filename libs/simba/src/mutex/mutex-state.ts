import { MutexOwner } from './mutex-owner';

/** A change seen by a contender: the owner before and after, as in Simba. */
export class MutexState {
  static readonly NONE = new MutexState(MutexOwner.NONE, MutexOwner.NONE);

  constructor(
    readonly before: MutexOwner,
    readonly after: MutexOwner,
  ) {}

  /** The owner changed between the two readings. */
  get isChanged(): boolean {
    return this.before.ownerId !== this.after.ownerId;
  }

  isAcquired(contenderId: string): boolean {
    return this.isChanged && this.after.isOwner(contenderId);
  }

  isReleased(contenderId: string): boolean {
    return this.isChanged && this.before.isOwner(contenderId);
  }

  /**
   * The fencing token of the owner after the change (`acquired_at`, see MutexOwner.fencingToken).
   * It grows with every grant and renewal, also across a failover, so a resource that remembers
   * the highest token it has seen can refuse writes from a stale owner.
   */
  get fencingToken(): number {
    return this.after.fencingToken;
  }
}
