/**
 * Milliseconds from a monotonic clock: never jumps with wall-clock changes. Use it for local
 * deadlines (lease validity, timeouts); use the database clock for anything two instances compare.
 */
export function monotonicMillis(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

/** Resolves after `ms`, or rejects with the signal's reason when aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
