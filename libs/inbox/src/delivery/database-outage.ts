import { Injectable, Logger } from '@nestjs/common';
import { isOutageError, OutageLog } from '@holdfast/core/kit';
import { NoAnswerError } from '../errors';
import { InboxConnection } from '../store/inbox-connection';
import { DELIVERY_LOG_CONTEXT } from './delivery-state';

/**
 * Whether the inbox's database answers the delivery loop, so that an outage is one warning when
 * it starts and one when it ends (core's OutageLog), not a line per poll, heartbeat or delete.
 */
@Injectable()
export class DatabaseOutage {
  private readonly log: OutageLog;

  constructor(connection: InboxConnection) {
    // The inbox's table, for the log lines (read when one is written: resolved after startup).
    this.log = new OutageLog(new Logger(DELIVERY_LOG_CONTEXT), () => `Inbox ${connection.store.table}`);
  }

  /** True between the first unanswered statement and the next answer. */
  get ongoing(): boolean {
    return this.log.ongoing;
  }

  /**
   * An error of the delivery loop's SQL: true when it says the database cannot be reached, stopped
   * answering or cannot take writes now (the outage's one warning, then debug lines), false for
   * anything else (the caller logs it as before).
   */
  failed(error: unknown, during: string): boolean {
    if (!isOutageError(error) && !(error instanceof NoAnswerError)) return false;
    this.log.failed(error, {
      during,
      consequence:
        'delivery resumes by itself when it answers again, and messages claimed meanwhile come back when their lease ends',
    });
    return true;
  }

  /** The database answered: the end of an outage is one warning. */
  answered(): void {
    this.log.succeeded();
  }
}
