import { Injectable, Logger } from '@nestjs/common';
import { OnLockAcquired, OnLockLost, type LockAcquiredEvent, type LockLostEvent } from '@holdfast/locker';

/** Master-only work of the demo: starts when this instance becomes master, stops when it demotes. */
@Injectable()
export class MasterWork {
  private readonly logger = new Logger(MasterWork.name);
  masterSince?: Date;
  terms = 0;
  lastLoss?: { at: Date; reason: string };

  @OnLockAcquired()
  begin(event: LockAcquiredEvent): void {
    this.masterSince = new Date();
    this.terms++;
    this.logger.log(`Master of '${event.lockName}': master-only work starts`);
  }

  @OnLockLost()
  end(event: LockLostEvent): void {
    this.masterSince = undefined;
    this.lastLoss = { at: new Date(), reason: event.reason };
    this.logger.log(`No longer master of '${event.lockName}' (${event.reason}): master-only work stops`);
  }
}
