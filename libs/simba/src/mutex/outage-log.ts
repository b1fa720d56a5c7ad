import type { Logger } from '@nestjs/common';
import { monotonicMillis } from '@holdfast/core/kit';

/**
 * One warning per outage instead of one per failed poll: the first failure is a warning with its
 * reason, later ones are debug lines. The outage ends once calls have worked for `holdDownMs`
 * (a database that flaps, or a read-only standby that answers reads and refuses writes, is one
 * outage), and its end is one log line saying how long it lasted.
 */
export class OutageLog {
  private since = 0;
  private failures = 0;
  private writesFail = false;
  private okSince = 0;

  constructor(
    private readonly logger: Logger,
    private readonly subject: string,
    private readonly holdDownMs: number,
  ) {}

  get failing(): boolean {
    return this.failures > 0;
  }

  /** `write`: the failed call was a write (a read-only standby fails writes and answers reads). */
  failed(error: unknown, detail = '', write = true): void {
    const message = (error as Error)?.message ?? String(error);
    this.writesFail ||= write;
    this.okSince = 0;
    if (this.failures++ === 0) {
      this.since = monotonicMillis();
      this.logger.warn(
        `${this.subject}: database calls fail (${message})${detail}; retrying quietly until they work again.`,
      );
    } else {
      this.logger.debug?.(`${this.subject}: still failing (${message})`);
    }
  }

  /** A read that works does not end an outage of writes. */
  succeeded(write = true): void {
    if (this.failures === 0 || (this.writesFail && !write)) return;
    const now = monotonicMillis();
    if (this.okSince === 0) this.okSince = now;
    if (now - this.okSince < this.holdDownMs) return;
    this.logger.log(
      `${this.subject}: database calls work again after ${this.failures} failed attempt(s) over ${Math.round(this.okSince - this.since)} ms.`,
    );
    this.failures = 0;
    this.writesFail = false;
    this.okSince = 0;
  }
}
