/** One item's place in a {@link DeadlineQueue}: pass it to `remove` once the item is done. */
export interface Deadline<T> {
  readonly item: T;
  readonly at: number;
}

/**
 * Many waits of one length on one timer, for hot paths where a timer per wait costs more than
 * the wait's own work (a handler call per inbox message). Every deadline is `ms` after its
 * `add`, so deadlines come due in the order they were added: the first one still queued is
 * always the next to expire, and the one timer is armed for it alone. An item removed before its
 * deadline costs one `Set` delete; `onExpire(item)` runs for each item whose deadline passed.
 * The timer never keeps the process alive.
 */
export class DeadlineQueue<T> {
  private readonly queued = new Set<Deadline<T>>();
  private timer?: NodeJS.Timeout;
  private expiring = false;

  constructor(
    readonly ms: number,
    private readonly onExpire: (item: T) => void,
  ) {}

  /** Queues `item`, due `ms` from now. */
  add(item: T): Deadline<T> {
    const deadline = { item, at: performance.now() + this.ms };
    this.queued.add(deadline);
    if (!this.timer && !this.expiring) this.arm(this.ms);
    return deadline;
  }

  /** The item is done before its deadline (a no-op once it expired). */
  remove(deadline: Deadline<T>): void {
    this.queued.delete(deadline);
  }

  /** How many items wait for their deadline. */
  get size(): number {
    return this.queued.size;
  }

  /** Forgets every item without expiring it, and stops the timer. */
  clear(): void {
    this.queued.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => this.expire(), Math.max(1, Math.ceil(delay)));
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    this.expiring = true;
    const now = performance.now();
    try {
      for (const deadline of this.queued) {
        if (deadline.at > now) break;
        this.queued.delete(deadline);
        this.onExpire(deadline.item);
      }
    } finally {
      this.expiring = false;
      // The first one left is the next due (added during onExpire included: they come last).
      const next = this.queued.values().next();
      if (!next.done) this.arm(next.value.at - performance.now());
    }
  }
}
