/**
 * What keeps the process alive while a Holdfast module has long-running work started (an inbox
 * delivery loop, a Simba contender, a locker): one ref'd handle for the whole process, held while
 * any such work runs and dropped when the last one stops.
 *
 * Why: Holdfast's timers are unref'd, so they never hold a process that is done. But then, in an
 * application context without an HTTP server (a queue worker), the pool's open connections were
 * the only thing that held the process: when the database went away, the process ended with code
 * 0 in the middle of its work, and a supervisor that restarts failed processes only left it down.
 * Started work now holds the process, as graphile-worker's and pg-boss's runners do, until it
 * stops (`app.close()`, module shutdown, or its own `stop()`); after that nothing of Holdfast's
 * keeps it.
 */
const holders = new Map<symbol, string>();
let handle: NodeJS.Timeout | undefined;

/** The longest delay a Node timer takes; the handle's callback never matters, only its ref. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Keeps the process alive until the returned function is called (calling it again does nothing).
 * `what` names the work, e.g. `inbox delivery (COR_MESSAGE)`, for `processKeptAliveBy()`.
 */
export function keepProcessAlive(what: string): () => void {
  const token = Symbol(what);
  holders.set(token, what);
  handle ??= setInterval(() => undefined, MAX_TIMER_MS);
  return () => {
    if (!holders.delete(token) || holders.size > 0 || !handle) return;
    clearInterval(handle);
    handle = undefined;
  };
}

/** The work that keeps the process alive now (empty: nothing of Holdfast's does). */
export function processKeptAliveBy(): string[] {
  return [...holders.values()];
}
