import { monotonicMillis, sleep } from '@holdfast/core/kit';
import { WaitTimeoutError } from './errors';

export interface WaitUntilOptions {
  /** Give up after this many milliseconds (default 10 s). */
  timeout?: number;
  /** Milliseconds between two looks (default 50). */
  interval?: number;
  /** What was awaited, for the error: "the old owner's session to end". */
  message?: string;
}

/**
 * Polls `predicate` until it returns a truthy value, and resolves with that value: the way tests
 * wait for something to happen instead of sleeping a fixed time. A throwing predicate counts as
 * "not yet"; on timeout the error names what was awaited and the last value or error seen.
 */
export async function waitUntil<T>(
  predicate: () => T | Promise<T>,
  options: WaitUntilOptions = {},
): Promise<NonNullable<T>> {
  const { timeout = 10_000, interval = 50, message = 'the condition' } = options;
  const deadline = monotonicMillis() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (monotonicMillis() >= deadline) {
      const seen = last instanceof Error ? `${last.name}: ${last.message}` : JSON.stringify(last);
      throw new WaitTimeoutError(
        `waitUntil: ${message} did not happen within ${timeout} ms (last seen: ${seen})`,
      );
    }
    await sleep(Math.min(interval, Math.max(0, deadline - monotonicMillis())));
  }
}
