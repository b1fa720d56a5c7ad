import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ScheduledLock } from '@holdfast/locker';

/**
 * A @ScheduledLock job: every instance's timer fires every 10 seconds, and one instance per tick
 * runs it (the others skip). The dashboard lists it with its last run and holder; the metrics
 * count `holdfast.locker.scheduled.runs` and `.skips`.
 */
@Injectable()
export class DemoReportJob {
  builds = 0;

  @Cron(CronExpression.EVERY_10_SECONDS)
  @ScheduledLock({ name: 'demo-report', lockAtMostFor: '1m', lockAtLeastFor: '5s' })
  async build(): Promise<void> {
    this.builds++;
  }
}
