import type { Logger } from '@nestjs/common';
import { isConnectionError, monotonicMillis } from '@holdfast/core/kit';

/** A statement of the delivery loop got no answer in time (it may still be waiting). */
export class NoAnswerError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'NoAnswerError';
  }
}

/**
 * Whether the inbox's database answers the delivery loop, so that an outage is one warning when
 * it starts and one line when it ends, not a line per poll, heartbeat or delete.
 */
export class DatabaseOutage {
  /** Since when (monotonic ms) the database has not answered, while it does not. */
  private downSince?: number;

  constructor(
    private readonly logger: Logger,
    /** The inbox's table, for the log lines (read when one is written: resolved after startup). */
    private readonly table: () => string,
  ) {}

  /** True between the first unanswered statement and the next answer. */
  get ongoing(): boolean {
    return this.downSince !== undefined;
  }

  /**
   * An error of the delivery loop's SQL: true when it says the database cannot be reached or
   * stopped answering (the outage's one warning, then debug lines), false for anything else (the
   * caller logs it as before).
   */
  failed(error: unknown, during: string): boolean {
    if (!isConnectionError(error) && !(error instanceof NoAnswerError)) return false;
    const message = (error as Error).message;
    if (this.downSince === undefined) {
      this.downSince = monotonicMillis();
      this.logger.warn(
        `The inbox's database (${this.table()}) stopped answering (${during}: ${message}); delivery ` +
          `resumes by itself when it answers again, and messages claimed meanwhile come back when ` +
          `their lease ends`,
      );
    } else {
      this.logger.debug(`The inbox's database is still not answering (${during}: ${message})`);
    }
    return true;
  }

  /** The database answered: the end of an outage is one line. */
  answered(): void {
    if (this.downSince === undefined) return;
    const ms = Math.round(monotonicMillis() - this.downSince);
    this.downSince = undefined;
    this.logger.log(`The inbox's database (${this.table()}) answers again after ${ms} ms`);
  }
}
