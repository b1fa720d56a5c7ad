/**
 * What Holdfast's timers need of `@nestjs/schedule`'s `SchedulerRegistry` (structurally, so core
 * does not load the package).
 */
export interface TimeoutRegistry {
  addTimeout(name: string, timeout: unknown): void;
  deleteTimeout(name: string): void;
  doesExist(type: 'timeout', name: string): boolean;
}

/**
 * The timers of one Holdfast component: each is a one-shot timeout that the component re-arms,
 * registered in the application's `SchedulerRegistry` under a documented name
 * (`holdfast:<lib>:<what>:<instance>`), so `schedulerRegistry.getTimeouts()` lists them and
 * ScheduleModule clears any left at `app.close()`. Without a registry (no ScheduleModule) the
 * same bookkeeping is kept here. Timers never keep the process alive beyond the turn of the
 * event loop they run in.
 *
 * A timer of 0 ms (or less) runs at the next turn of the event loop, after the pending I/O
 * (`setImmediate`), not after the 1 ms that `setTimeout` waits at least; it is kept here only
 * (it fires before anyone could list it).
 */
export class HoldfastTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly soon = new Map<string, NodeJS.Immediate>();
  private found?: TimeoutRegistry;

  /**
   * `registry`: the registry, or how to find it when a timer is first set (a provider built
   * before the application's modules are all instantiated: `() => findSchedulerRegistry(moduleRef)`),
   * looked up again until found.
   */
  constructor(private readonly registryOf?: TimeoutRegistry | (() => TimeoutRegistry | undefined)) {}

  private get registry(): TimeoutRegistry | undefined {
    const of = this.registryOf;
    if (this.found || of === undefined) return this.found;
    return (this.found = typeof of === 'function' ? of() : of);
  }

  /** Runs `fn` once after `ms` as `name`, replacing a pending timer of that name. */
  set(name: string, ms: number, fn: () => void): void {
    this.clear(name);
    if (!(ms > 0)) {
      const immediate = setImmediate(() => {
        if (this.soon.get(name) === immediate) this.soon.delete(name);
        fn();
      });
      // Not unref()'d: the event loop only skips its wait for I/O for immediates that hold it
      // (an unref()'d one waits for the next timer or I/O), and this one runs at once anyway.
      this.soon.set(name, immediate);
      return;
    }
    const timer: NodeJS.Timeout = setTimeout(() => {
      this.forget(name, timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.set(name, timer);
    this.registry?.addTimeout(name, timer);
  }

  /** Whether a timer of that name is pending. */
  has(name: string): boolean {
    return this.timers.has(name) || this.soon.has(name);
  }

  /** Cancels the pending timer of that name, if any. */
  clear(name: string): void {
    const immediate = this.soon.get(name);
    if (immediate) {
      clearImmediate(immediate);
      this.soon.delete(name);
    }
    const timer = this.timers.get(name);
    if (!timer) return;
    clearTimeout(timer);
    this.forget(name, timer);
  }

  /** Cancels every pending timer of this component. */
  clearAll(): void {
    for (const name of [...this.timers.keys(), ...this.soon.keys()]) this.clear(name);
  }

  /** Resolves after `ms` (a registered timer named `name`); rejects with the signal's reason on abort. */
  sleep(name: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.clear(name);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.set(name, ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  private forget(name: string, timer: NodeJS.Timeout): void {
    if (this.timers.get(name) !== timer) return;
    this.timers.delete(name);
    try {
      if (this.registry?.doesExist('timeout', name)) this.registry.deleteTimeout(name);
    } catch {
      // already removed by ScheduleModule at shutdown
    }
  }
}

/**
 * The application's `SchedulerRegistry` when `@nestjs/schedule` is installed and ScheduleModule
 * is imported; otherwise undefined (the package is an optional peer, loaded only here).
 */
export function findSchedulerRegistry(moduleRef: {
  get(token: unknown, options: { strict: boolean }): unknown;
}): TimeoutRegistry | undefined {
  let token: unknown;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    token = (require('@nestjs/schedule') as { SchedulerRegistry?: unknown }).SchedulerRegistry;
  } catch {
    return undefined;
  }
  if (!token) return undefined;
  try {
    return moduleRef.get(token, { strict: false }) as TimeoutRegistry;
  } catch {
    return undefined;
  }
}
