import { Module } from '@nestjs/common';
import { LockerModule, ScheduledLockModule } from '@holdfast/locker';
import { LockerDemoController } from './locker-demo.controller';
import { DemoReportJob } from './demo-report.job';
import { MasterWork } from './master-work.service';

/**
 * Master/standby with the lease-database locker on `demo-master`. The app starts as standby
 * (startup 'background') so every instance serves HTTP; start a second instance on the same
 * database (`PORT=3001 npm start`) and `GET /locker` on both; stop or kill the master and the
 * other becomes master within lease + lockAcquireSleepInterval (at most 10 s here). The
 * @ScheduledLock job 'demo-report' runs on one instance per 10-second tick.
 */
@Module({
  imports: [
    LockerModule.forRoot({
      locker: { type: 'lease-database' },
      lockName: 'demo-master',
      lockAcquireSleepInterval: '5s',
      lockKeepAlivePeriod: '1500ms',
      startup: 'background',
    }),
    ScheduledLockModule.forRoot(),
  ],
  controllers: [LockerDemoController],
  providers: [MasterWork, DemoReportJob],
})
export class LockerDemoModule {}
