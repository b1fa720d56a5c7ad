import { MutexOwner, MutexState } from '../src';

describe('MutexOwner and MutexState', () => {
  // Read at database time 10_000: acquired at 9_000, ttl until 12_000, transition until 15_000.
  const owner = new MutexOwner('a', 9_000, 12_000, 15_000, 7, 10_000);

  it('answers ownership and phase questions against the database clock', () => {
    expect(owner.isOwner('a')).toBe(true);
    expect(owner.isOwner('b')).toBe(false);
    expect(owner.hasOwner()).toBe(true);
    expect(owner.isInTtl(11_999)).toBe(true);
    expect(owner.isInTtl(12_000)).toBe(false);
    expect(owner.isInTransition(12_000)).toBe(true);
    expect(owner.isInTransition(15_000)).toBe(false);
    // Without an argument: the reading plus monotonic time elapsed, a few ms at most here.
    expect(owner.isInTtl()).toBe(true);
    expect(owner.estimatedDatabaseNow()).toBeGreaterThanOrEqual(10_000);
    expect(MutexOwner.NONE.hasOwner()).toBe(false);
    expect(MutexOwner.NONE.isOwner('')).toBe(false);
    expect(MutexOwner.NONE.isInTtl(0)).toBe(false);
  });

  it('describes acquisition and release from each side, with the fencing token', () => {
    const b = new MutexOwner('b', 16_000, 19_000, 22_000, 9, 16_000);
    const handover = new MutexState(owner, b);
    expect(handover.isChanged).toBe(true);
    expect(handover.isAcquired('b')).toBe(true);
    expect(handover.isReleased('a')).toBe(true);
    expect(handover.isAcquired('a')).toBe(false);
    // Changed by #20: the token is the grant's acquired_at (database time), no longer the version.
    expect(handover.fencingToken).toBe(16_000);
    const renewal = new MutexState(owner, new MutexOwner('a', 12_000, 15_000, 18_000, 8, 12_000));
    expect(renewal.isChanged).toBe(false);
    expect(renewal.isAcquired('a')).toBe(false);
    expect(new MutexState(MutexOwner.NONE, owner).isAcquired('a')).toBe(true);
  });
});
