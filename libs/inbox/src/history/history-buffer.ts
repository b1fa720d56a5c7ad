import { monotonicMillis } from '@holdfast/core/kit';

/** A record waiting in memory, with the monotonic time it was taken (its database time is computed at flush). */
export interface Buffered<T> {
  record: T;
  at: number;
}

/**
 * A bounded queue in memory between the delivery and the database: `push` is synchronous and never
 * waits; once `capacity` records wait (the database is down or slow), new ones are dropped and
 * counted instead of growing the process or slowing the delivery.
 */
export class HistoryBuffer<T> {
  private items: Array<Buffered<T>> = [];
  /** Records dropped because the buffer was full, since start. */
  dropped = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.length;
  }

  push(record: T): void {
    if (this.items.length >= this.capacity) {
      this.dropped++;
      return;
    }
    this.items.push({ record, at: monotonicMillis() });
  }

  /** Up to `count` of the oldest records, taken out. */
  take(count: number): Array<Buffered<T>> {
    return this.items.splice(0, count);
  }

  /** Records a flush could not write, back at the front (those that no longer fit are dropped). */
  putBack(items: ReadonlyArray<Buffered<T>>): void {
    const room = Math.max(0, this.capacity - this.items.length);
    const kept = items.slice(Math.max(0, items.length - room));
    this.dropped += items.length - kept.length;
    this.items = [...kept, ...this.items];
  }
}
