import { performance } from 'node:perf_hooks';

/** Monotonic milliseconds (performance.now(): no BigInt per call, unlike hrtime.bigint()). */
const monotonic = () => performance.now();

/**
 * The database clock without a round trip per call: the last reading of the database's clock
 * plus the monotonic time elapsed since, so two instances whose own clocks differ by hours
 * still stamp and expire entries alike, and a jump of the process clock changes nothing.
 * Every statement that returns the database clock corrects it (`observe`), and a reading older
 * than `resyncMs` triggers one more in the background.
 */
export class DatabaseClock {
  private base?: { db: number; mono: number };
  private syncedAt = -Infinity;
  private syncing?: Promise<void>;
  /** Set by `now()` once the last reading is older than `sampleMs`; cleared by a reading. */
  private sampleDue = true;

  constructor(
    private readonly read: () => Promise<number>,
    private readonly resyncMs = 10_000,
    private readonly sampleMs = 1_000,
  ) {}

  /** Reads the database clock now (at init, and in the background when the reading is old). */
  sync(): Promise<void> {
    this.syncing ??= (async () => {
      const sent = monotonic();
      try {
        const db = await this.read();
        this.observe(db, sent, monotonic());
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  /** A database clock reading taken by a statement sent at `sent` and answered at `received` (monotonic ms). */
  observe(db: number, sent: number, received: number): void {
    if (!Number.isFinite(db)) return;
    this.base = { db, mono: (sent + received) / 2 };
    this.syncedAt = received;
    this.sampleDue = false;
  }

  /**
   * Whether a statement about to run should also read the database clock: at most one reading
   * per `sampleMs`, so hot reads do not pay for it. Decided by the last `now()` (every call
   * reads it for its stamps or its expiry check), so the read itself takes no clock reading.
   */
  wantsSample(): boolean {
    return this.sampleDue;
  }

  /** Monotonic ms, for `observe`. */
  static monotonic(): number {
    return monotonic();
  }

  /**
   * Epoch milliseconds on the database's clock (the process clock until the first reading).
   * `mono`: a `monotonic()` reading the caller took a moment ago, instead of a new one.
   */
  now(mono = monotonic()): number {
    const age = mono - this.syncedAt;
    if (age > this.sampleMs) {
      this.sampleDue = true;
      if (age > this.resyncMs) void this.sync().catch(() => undefined);
    }
    return this.base ? Math.round(this.base.db + (mono - this.base.mono)) : Date.now();
  }
}
