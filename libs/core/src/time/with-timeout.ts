/** Options of `withTimeout`. */
export interface WithTimeoutOptions {
  /** When it aborts first, the wait rejects with its reason. */
  signal?: AbortSignal;
}

/**
 * Waits for `work` at most `ms` milliseconds: a promise, or a function started now (a
 * synchronous throw becomes a rejection). When the time is up first, `onTimeout()` settles the
 * wait: what it returns resolves it, what it throws rejects it, and `work` goes on unobserved.
 * The timer never keeps the process alive and is cleared whichever comes first. The one way the
 * libs bound a wait (the failover store's hot path keeps its own shared sweeper instead).
 */
export function withTimeout<T, F = never>(
  work: Promise<T> | (() => T | Promise<T>),
  ms: number,
  onTimeout: () => F,
  options: WithTimeoutOptions = {},
): Promise<T | F> {
  const { signal } = options;
  return new Promise<T | F>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const onAbort = () => {
      if (settle()) reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      if (!settle()) return;
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error);
      }
    }, ms);
    timer.unref?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    let started: Promise<T>;
    try {
      started = typeof work === 'function' ? Promise.resolve(work()) : work;
    } catch (error) {
      started = Promise.reject(error);
    }
    started.then(
      (value) => {
        if (settle()) resolve(value);
      },
      (error: unknown) => {
        if (settle()) reject(error);
      },
    );
  });
}
